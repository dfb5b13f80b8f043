"""parse_paper on every real LaTeX fixture folder, as it is, and the named skips for malformed papers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rqbench.builder.parse import PaperSkipped, paper_full_text, paper_section_texts, parse_paper, parse_sections

# folder -> (main file, sections that must appear, min cited keys, bibliography origin, keys that must resolve)
EXPECT = {
    "acl-template": (
        "acl_latex.tex",
        ["Abstract", "Introduction", "Citations", "Example Appendix"],
        1,
        "bib",
        ["Gusfield:97"],
    ),
    "attention-sink-gpt2": ("acl_latex.tex", ["Introduction", "Conclusions", "Limitations"], 15, "bib", []),
    "efficient-learning-khan": (
        "paper/main.tex",
        ["Abstract", "Introduction", "Results", "Discussion"],
        60,
        "bib",
        ["HeusEtal21"],
    ),
    "hypertools-arxiv-bblonly": ("arXiv/main.tex", ["Introduction", "Discussion"], 20, "bbl", ["Hunt07"]),
    "hypertools-jmlr": ("JMLR/main.tex", ["Abstract", "Introduction", "Concluding remarks"], 15, "bib", ["HaxbEtal11"]),
    "inlg2024-ngram-gec": ("acl_latex.tex", ["Introduction", "Related Work", "Conclusions"], 20, "bib", []),
    "llm-stylometry": ("main.tex", ["Introduction", "Methods", "Discussion"], 20, "bib", []),
    "neurips2024-beta-dpo": (
        "neurips_2024.tex",
        ["Introduction", "Related Work", "Experiments", "Broader Impacts"],
        40,
        "bib",
        ["DPO", "PPO"],
    ),
    "neurips2026-llm-judge-biblatex": ("main.tex", ["Introduction", "Background", "Judge prompts"], 30, "bib", []),
    "pca-paper": (
        "paper/main.tex",
        ["Introduction", "Results", "Discussion", "Methods"],
        50,
        "bib",
        ["OwenEtal20", "OwenEtal21"],
    ),
    "sherlock-topic-model": (
        "paper/main.tex",
        ["Introduction", "Results", "Discussion", "Methods"],
        60,
        "bbl",
        ["HeusEtal18a"],
    ),
    "supereeg-paper": ("paper/main.tex", ["Introduction", "Approach", "Results", "Discussion"], 60, "bib", []),
    "themis-ml-fairness-mit": ("main.tex", ["Introduction", "Discussion"], 15, "bib", []),
    "timecorr-paper": ("paper/main.tex", ["Introduction", "Results", "Discussion", "Methods"], 80, "bbl", []),
    "value-profiles-emnlp": ("acl_latex.tex", ["Introduction", "Related Work", "Limitations"], 50, "bib", []),
}


@pytest.fixture(scope="module")
def parsed(fixtures_dir):
    return {name: parse_paper(fixtures_dir / "latex" / name, "2401.00001") for name in EXPECT}


def test_every_fixture_folder_is_covered(fixtures_dir):
    assert sorted(p.name for p in (fixtures_dir / "latex").iterdir() if p.is_dir()) == sorted(EXPECT)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_fixture_parses(parsed, name):
    main, sections, min_keys, origin, must_resolve = EXPECT[name]
    p = parsed[name]
    assert p.main_file == main
    names = [s.name for s in p.sections]
    for s in sections:
        assert s in names, f"{name}: section {s!r} missing from {names}"
    assert [s.index for s in p.sections] == list(range(len(p.sections)))
    assert len(p.cited_works) >= min_keys
    assert {e.origin for e in p.bibliography} == {origin}
    by_key = {w.key: w for w in p.cited_works}
    for key in must_resolve:
        assert by_key[key].bib is not None and by_key[key].bib.title
    section_names = set(names)
    for w in p.cited_works:
        assert w.frequency == len(w.contexts) >= 1
        assert set(w.sections) <= section_names
        for c in w.contexts:
            assert "@" + w.key in c.citing_sentence
            assert len(c.before) <= 3 and len(c.after) <= 3
    text = paper_full_text(p)
    assert "\\cite" not in text.replace("\\citet (", "").replace("\\citep (", "") or name == "acl-template"
    assert "\ue000" not in text and "\ue002" not in text


def test_acl_template_every_natbib_command(parsed):
    works = {w.key: w for w in parsed["acl-template"].cited_works}
    commands = sorted({c.command for c in works["Gusfield:97"].contexts})
    assert commands == ["citealp", "citep", "citeposs", "citet", "citeyearpar"]
    assert works["Gusfield:97"].frequency == 8  # three in the text, five table rows
    assert "Ando2005" not in works  # \nocite is no citation


def test_multi_file_neurips_inputs_in_order(parsed, fixtures_dir):
    p = parsed["neurips2024-beta-dpo"]
    names = [s.name for s in p.sections]
    assert names.index("Introduction") < names.index("Related Work") < names.index("Experiments")
    assert p.warnings == ["unresolved_keys: 1 cited key(s) not in the bibliography: pythia"]


def test_biblatex_include_and_tables(parsed):
    p = parsed["neurips2026-llm-judge-biblatex"]
    assert "Judge prompts" in [s.name for s in p.sections]  # from \include{appendix} -> \input{appendix_judge_prompts}
    assert all(w.bib is not None for w in p.cited_works)


def test_bbl_only_paper(parsed):
    p = parsed["hypertools-arxiv-bblonly"]
    assert "missing_bib: memlab.bib is declared but not in the paper folder" in p.warnings
    assert all(w.bib is not None for w in p.cited_works)


def test_missing_bib_names_unresolved_keys(parsed):
    p = parsed["inlg2024-ngram-gec"]
    assert "missing_bib: anthology.bib is declared but not in the paper folder" in p.warnings
    assert any(w.startswith("unresolved_keys:") for w in p.warnings)
    assert any(w.bib is not None for w in p.cited_works)


def test_acm_variants_each_parse(fixtures_dir):
    folder = fixtures_dir / "latex" / "themis-ml-fairness-mit"
    for main in ("main.tex", "themis_ml_bloomberg_dx4g.tex", "journal_tech_human_services/main.tex"):
        p = parse_paper(folder, "1710.06921", main_file=main)
        assert p.main_file == main and len(p.cited_works) >= 15
    journal = parse_paper(folder, "1710.06921", main_file="journal_tech_human_services/main.tex")
    assert {c.command for w in journal.cited_works for c in w.contexts} >= {"citealp", "citet"}


def test_section_texts_for_cited_papers(fixtures_dir, parsed):
    texts = parse_sections(fixtures_dir / "latex" / "llm-stylometry")
    assert texts[0].section == "Abstract" and all(t.text for t in texts)
    assert paper_section_texts(parsed["llm-stylometry"]) == texts


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


DOC = "\\documentclass{article}\n\\begin{document}\n\\section{S}\n%s\n\\end{document}\n"


@pytest.mark.parametrize(
    "files, reason",
    [
        ({}, "no_tex_file"),
        ({"main.tex": b"\x00\x01\x02\x03garbage"}, "binary_main_file"),
        (
            {"main.tex": DOC % "A \\textbf{open \\cite{k}.\n\\bibliography{r}", "r.bib": "@article{k, title={T}}"},
            "unbalanced_braces",
        ),
        (
            {"main.tex": DOC % "No citations at all.\n\\bibliography{r}", "r.bib": "@article{k, title={T}}"},
            "no_citations",
        ),
        ({"main.tex": DOC % "Cites \\cite{k}.\n\\bibliography{r}", "r.bib": ""}, "empty_bibliography"),
        ({"main.tex": DOC % "Cites \\cite{k}.\n\\bibliography{gone}"}, "empty_bibliography"),
    ],
)
def test_malformed_papers_are_named_skips(tmp_path, files, reason):
    write(tmp_path, files)
    with pytest.raises(PaperSkipped) as e:
        parse_paper(tmp_path, "2401.00001")
    assert e.value.reason == reason and e.value.detail


def test_missing_input_is_a_warning_not_a_skip(tmp_path):
    write(
        tmp_path,
        {"main.tex": DOC % "Cites \\cite{k}. \\input{lost}\n\\bibliography{r}", "r.bib": "@article{k, title={T}}"},
    )
    p = parse_paper(tmp_path, "2401.00001")
    assert p.cited_works[0].bib.title == "T"
    assert p.warnings[0].startswith("missing_input: \\input{lost}")
