"""`rqbench report` and `rqbench agreement` end to end on hand-built results files."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from results_factory import cand, instance, results

from rqbench.cli import main
from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.report import table
from rqbench.records import CitedPaper, TextLevel

JUDGES = (("gemini/gemini-3.1-pro", "gemini-3.1-pro"), ("deepseek/deepseek-v4-pro", "deepseek-v4-pro"))
SUBMISSIONS = (
    ("openai/gpt-5.5", "original", 1),
    ("gemini/gemini-3.1-pro", "original", 0),
    ("gemini/gemini-3.1-pro", "revised", -1),
)
QWEN = "Qwen/Qwen3-Embedding-4B"
RQ_IDS = [f"25{m:02d}.{p:05d}_rq{k}" for m, p in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 5)) for k in range(2)]


def _instances(seed: int, boost: int, setting: str, submission: int = 0):
    """Scores vary with ``seed`` (one per judge and setting); the RQ texts only with the submission, as in real results."""
    rng = random.Random(seed)
    out = []
    for n, rq in enumerate(RQ_IDS):
        sf = "cs.CL" if n % 2 == 0 else "cs.LG"
        gt = cand(
            "gt",
            tuple(rng.randint(1, 2) for _ in range(3)),
            sb=rng.randint(0, 1),
            text=f"Why does phenomenon {n} appear in large models?",
        )
        model = []
        for i in range(5):
            nov = tuple(max(0, min(3, rng.randint(0, 2) + boost)) for _ in range(3))
            model.append(
                cand(
                    f"m{i}",
                    nov,
                    sb=max(0, min(3, rng.randint(1, 2) + boost)),
                    text=" ".join(["word"] * random.Random(f"{submission}:{n}:{i}").randint(5, 30)) + "?",
                    ranks=[i + 1] if setting == "comparative" else None,
                )
            )
        out.append(instance(rq, gt, model, subfield=sf, overlap=[rng.randint(0, 3) for _ in range(5)], papers=("p1",)))
    return out


def _write_results(folder):
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for s, (model, variant, boost) in enumerate(SUBMISSIONS):
        for j, (jm, label) in enumerate(JUDGES):
            for setting in ("standalone", "comparative"):
                r = results(
                    _instances(100 * s + 10 * j + (setting == "comparative"), boost, setting, s),
                    model=model,
                    judge_model=jm,
                    label=label,
                    setting=setting,
                    prompt_variant=variant,
                    expected=12,
                )
                p = folder / f"{model.replace('/', '_')}-{variant}-{label}-{setting}.json"
                p.write_text(r.model_dump_json())
                made.append(r)
    return made


def _annotations(path):
    rng = random.Random(9)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rq_id", "evaluator", "winner"])
        for rq in RQ_IDS[:8]:
            for ev in ("expert-1", "expert-2"):
                w.writerow([rq, ev, rng.choice(["gt", "gt", "model", "tie"])])
    return path


def test_report_writes_every_table_and_both_plots(tmp_path, capsys):
    res_dir = tmp_path / "results"
    made = _write_results(res_dir)
    ann = _annotations(tmp_path / "ann.csv")
    papers = tmp_path / "cited.jsonl"
    papers.write_text(
        CitedPaper(
            paper_id="p1",
            title="Scaling",
            text_level=TextLevel.abstract,
            abstract="Large models show emergent phenomena when scaled.",
        ).model_dump_json()
        + "\n"
    )
    out = tmp_path / "report"
    rc = main(
        [
            "report",
            str(res_dir),
            "--out",
            str(out),
            "--annotations",
            str(ann),
            "--by-subfield",
            "--annotated-model",
            "openai/gpt-5.5",
            "--annotated-variant",
            "original",
            "--cited-papers",
            str(papers),
            "--embedder",
            QWEN,
            "--embedder",
            "all-minilm-l6-v2",
            "--n-boot",
            "100",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0, err
    # the paper's qwen model cannot load offline: said by name, and only its column is missing from Table 6
    assert f"Table 6 without {QWEN}: embedding model {QWEN!r} is not packaged for offline use" in err
    # the results name a Hub dataset, which cannot be read offline: Tables 1 and 13 are skipped by name
    assert "Tables 1 and 13 skipped: dataset local/rq-bench-sample@v1: a local dataset, looked for at" in err
    names = {p.name for p in out.iterdir()}
    expected = [
        "overlap",
        "novelty_standalone_scores",
        "novelty_standalone_rates",
        "novelty_comparative_rates",
        "narrowness_standalone_scores",
        "narrowness_standalone_rates",
        "narrowness_comparative_rates",
        "prompt_variants",
        "agreement_matrix",
        "agreement_win_rates",
        "source_bound_win_rates",
        "nonobv_vs_source_bound",
        "similarity",
        "judge_meta_evaluation",
        "paired_tests",
        "novelty_standalone_rates__cs_CL",
    ]
    for stem in expected:
        for ext in (".md", ".csv", ".tex"):
            assert f"{stem}{ext}" in names, f"{stem}{ext}"
    for png in ("novelty_vs_source_bound.png", "win_tie_lose.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000

    # content: the Markdown shows every model, judge and the GT reference row
    md = (out / "novelty_standalone_scores.md").read_text()
    assert "Table 3(a)" in md and "author-anchored (GT)" in md and "gemini/gemini-3.1-pro (revised)" in md
    assert "deepseek-v4-pro: non-obviousness" in md and "combined: originality" in md
    tex = (out / "novelty_comparative_rates.tex").read_text()
    assert "\\begin{tabular}" in tex and "Table 4" in tex
    assert "win rate \\% [95\\% CI]" in tex  # captions are escaped, a bare % would comment out the rest
    # the CSV numbers are the summary's numbers
    rows = summarize(made, n_boot=100)
    want = next(
        r
        for r in rows
        if r.model == "openai/gpt-5.5" and r.judge == "combined" and r.setting == "comparative" and r.subfield is None
    ).figure("win_non_obviousness")
    with (out / "novelty_comparative_rates.csv").open() as fh:
        body = [line for line in fh if not line.startswith("#")]  # the provenance header is comment lines
        got = [
            r
            for r in csv.DictReader(body)
            if r["row"] == "openai/gpt-5.5" and r["column"] == "combined: win_non_obviousness"
        ]
    assert len(got) == 1 and float(got[0]["value"]) == pytest.approx(want.value)
    assert float(got[0]["ci_low"]) <= want.value <= float(got[0]["ci_high"])
    summary = json.loads((out / "summary.json").read_text())
    assert {r["judge"] for r in summary} == {"gemini-3.1-pro", "deepseek-v4-pro", "combined"}
    assert any(r["subfield"] == "cs.LG" for r in summary)
    # agreement and similarity tables name the evaluators and both RQ sets
    assert "expert-1" in (out / "agreement_matrix.md").read_text()
    sim = (out / "similarity.md").read_text()
    assert "author-anchored (GT)" in sim and "all-minilm-l6-v2" in sim and f"left out: {QWEN}" in sim
    assert "| abstract 1 |" in sim  # the contribution source each row used
    report = (out / "report.md").read_text()
    assert report.count("### ") >= len(expected)


def test_agreement_command(tmp_path, capsys):
    res_dir = tmp_path / "results"
    _write_results(res_dir)
    ann = _annotations(tmp_path / "ann.csv")
    out = tmp_path / "agree"
    rc = main(
        [
            "agreement",
            "--annotations",
            str(ann),
            "--results",
            str(res_dir),
            "--out",
            str(out),
            "--model",
            "gemini/gemini-3.1-pro",
            "--variant",
            "revised",
            "--n-boot",
            "50",
        ]
    )
    assert rc == 0, capsys.readouterr().err
    rep = json.loads((out / "agreement.json").read_text())
    assert rep["prompt_variant"] == "revised" and rep["instances"] == 8
    assert rep["matrix"]["rows"] == ["expert-1", "expert-2", "deepseek-v4-pro", "gemini-3.1-pro"]
    md = (out / "agreement_matrix_revised.md").read_text()
    assert "Table 11(a)" in md
    assert (out / "nonobv_vs_source_bound_revised.csv").is_file()


def test_agreement_command_reports_ambiguity_and_bad_files(tmp_path, capsys):
    res_dir = tmp_path / "results"
    _write_results(res_dir)
    ann = _annotations(tmp_path / "ann.csv")
    with pytest.raises(SystemExit, match="several submissions match"):
        main(["agreement", "--annotations", str(ann), "--results", str(res_dir), "--out", str(tmp_path / "o")])
    bad = tmp_path / "bad.csv"
    bad.write_text("rq_id,evaluator,winner\n2501.00001_rq0,e1,both\n")
    rc = main(
        [
            "agreement",
            "--annotations",
            str(bad),
            "--results",
            str(res_dir),
            "--out",
            str(tmp_path / "o"),
            "--model",
            "openai/gpt-5.5",
        ]
    )
    assert rc == 2 and "bad.csv:2: field 'winner'" in capsys.readouterr().err
    # an annotation made on another text of the shown RQ: named, in both commands
    other = tmp_path / "other.csv"
    other.write_text(
        "rq_id,evaluator,winner,candidate_id,candidate_hash\n2501.00001_rq0,e1,gt,m2,b2:0123456789abcdef\n"
    )
    for cmd in (
        ["agreement", "--annotations", str(other), "--results", str(res_dir), "--out", str(tmp_path / "o")],
        ["report", str(res_dir), "--out", str(tmp_path / "r"), "--annotations", str(other)],
    ):
        rc = main([*cmd, "--model" if cmd[0] == "agreement" else "--annotated-model", "openai/gpt-5.5"])
        err = capsys.readouterr().err
        assert rc == 2 and "other.csv:2: annotation by 'e1' of 2501.00001_rq0: the shown RQ m2 had text hash" in err


def test_markdown_writer_escapes_pipes():
    import pandas as pd

    t = table.Table(
        "t",
        "cap",
        "Table X",
        pd.DataFrame({"a|b": ["x|y"]}, index=pd.Index(["r"], name="m")),
        pd.DataFrame(columns=table.TIDY_COLUMNS),
    )
    md = table.to_markdown(t)
    assert "a\\|b" in md and "x\\|y" in md


def _write_one_judge(folder, judge=JUDGES[0]):
    folder.mkdir(parents=True, exist_ok=True)
    jm, label = judge
    for s, (model, variant, boost) in enumerate(SUBMISSIONS):
        for setting in ("standalone", "comparative"):
            r = results(
                _instances(100 * s + (setting == "comparative"), boost, setting),
                model=model,
                judge_model=jm,
                label=label,
                setting=setting,
                prompt_variant=variant,
                expected=12,
            )
            (folder / f"{model.replace('/', '_')}-{variant}-{setting}.json").write_text(r.model_dump_json())


def test_the_report_names_judge_prompt_set_and_dataset_revision_of_every_results_file(tmp_path, capsys):
    from rqbench.records import ResultsFile

    res = tmp_path / "results"
    _write_one_judge(res)
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    report = (out / "report.md").read_text()
    files = [ResultsFile.model_validate_json(f.read_text()) for f in sorted(res.glob("*.json"))]
    assert files
    for r in files:
        ps = r.judge.prompt_set
        line = (
            f"- {r.submission.model} ({r.submission.prompt_variant}): judge {r.judge.label}, {r.judge.setting}, "
            f"prompt set {ps.name} ({ps.hash}), "
            f"dataset {r.dataset_repo}@{r.dataset_revision}"
        )
        assert line in report, line


def test_every_csv_and_latex_table_opens_with_the_same_provenance_as_report_md(tmp_path, capsys):
    """Item 6 of issue 23: a table copied out of the report still says which judge, setting, prompt set and
    dataset revision its numbers come from, and pandas reads the CSV past the header."""
    import pandas as pd

    from rqbench.records import ResultsFile

    res = tmp_path / "results"
    _write_one_judge(res)
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    report = (out / "report.md").read_text()
    files = [ResultsFile.model_validate_json(f.read_text()) for f in sorted(res.glob("*.json"))]
    lines = []
    for r in files:
        ps = r.judge.prompt_set
        lines.append(
            f"{r.submission.model} ({r.submission.prompt_variant}): judge {r.judge.label}, {r.judge.setting}, "
            f"prompt set {ps.name} "
            f"({ps.hash}), dataset {r.dataset_repo}@{r.dataset_revision}"
        )
    assert all(f"- {line}" in report for line in lines)
    csvs, texs = sorted(out.glob("*.csv")), sorted(out.glob("*.tex"))
    assert len(csvs) >= 8 and len(csvs) == len(texs)
    for path, marker in [(c, "# ") for c in csvs] + [(t, "% ") for t in texs]:
        text = path.read_text()
        head = [ln[len(marker) :] for ln in text.splitlines() if ln.startswith(marker)]
        assert all(line in head for line in lines), path.name
        assert "Demo output" not in text, path.name  # hosted judges and models: no demo note
    table = pd.read_csv(out / "novelty_standalone_scores.csv", comment="#")
    assert (
        list(table.columns) == ["row", "column", "value", "ci_low", "ci_high", "std", "n", "unjudged"]
        and len(table) > 0
    )


def test_demo_figures_carry_the_demo_note_into_every_csv_and_latex_caption(tmp_path, capsys):
    res = tmp_path / "results"
    _write_one_judge(res, judge=("local/smollm2-135m", "local/smollm2-135m"))
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    for path in out.glob("*.csv"):
        assert path.read_text().startswith(
            "# Demo output, not results. Figures in this report come from local/smollm2-135m"
        ), path.name
    tex = (out / "novelty_standalone_scores.tex").read_text()
    assert tex.startswith("% Demo output, not results.")
    caption = tex.split("\\caption{", 1)[1].split("\n", 1)[0]
    assert "Demo output, not results. Figures in this report come from local/smollm2-135m" in caption
    assert "are not results" in caption


def test_a_one_judge_report_has_no_combined_row_label_or_plot(tmp_path, capsys):
    res = tmp_path / "results"
    _write_one_judge(res)
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    for f in out.iterdir():
        if f.suffix in (".md", ".csv", ".tex", ".json"):
            assert "combined" not in f.read_text().lower(), f.name
    md = (out / "novelty_standalone_scores.md").read_text()
    assert "gemini-3.1-pro: non-obviousness" in md and "rule:" not in md
    # Table 10 (two prompt variants of gemini-3.1-pro) stays, under the one judge
    assert "gemini-3.1-pro: originality" in (out / "prompt_variants.md").read_text()
    for png in ("novelty_vs_source_bound.png", "win_tie_lose.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_fall_back_to_each_judges_own_rows_without_a_combined_one():
    from results_factory import cand, instance, results

    from rqbench.evaluate.report.plots import plotted_judges

    def rows(labels):
        made = [
            results(
                [instance("2501.00001_rq0", cand("gt"), [cand(f"m{i}") for i in range(5)])],
                judge_model=f"x/{lab}",
                label=lab,
            )
            for lab in labels
        ]
        return summarize(made, n_boot=20)

    assert plotted_judges(rows(["a"])) == ["a"]
    assert plotted_judges(rows(["a", "b"])) == ["combined"]


def test_every_caption_of_a_combined_table_says_how_and_over_which_judges(tmp_path, capsys):
    from rqbench.evaluate.metrics.metric import describe_combine_rule

    res = tmp_path / "results"
    _write_results(res)
    for rule in ("pooled", "mean_scores"):
        out = tmp_path / f"report-{rule}"
        assert main(["report", str(res), "--out", str(out), "--n-boot", "50", "--combine", rule]) == 0
        sentence = describe_combine_rule(rule, ["deepseek-v4-pro", "gemini-3.1-pro"])
        shown = 0
        for md in out.glob("*.md"):
            if md.name == "report.md":
                continue
            text = md.read_text()
            # a combined column, or the paired tests, whose per-instance values combine the judges
            has_combined = "| combined" in text or "combined:" in text.split("\n", 1)[1] or md.stem == "paired_tests"
            assert (sentence in text) == has_combined, md.name
            shown += has_combined
        assert shown >= 9  # Tables 2, 3(a), 3(b), 4, 7(a), 7(b), 8 and 10, and the paired tests
        assert sentence in (out / "report.md").read_text()


def test_a_report_of_embedded_model_figures_opens_by_saying_they_are_not_results(tmp_path, capsys):
    res = tmp_path / "results"
    _write_one_judge(res, judge=("local/smollm2-135m", "local/smollm2-135m"))
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    head = (out / "report.md").read_text().split("## Protocol")[0]
    assert "> **Demo output, not results.** Figures in this report come from local/smollm2-135m" in head
    assert "are not results" in head
    assert "not results" in capsys.readouterr().out


def test_a_report_of_hosted_judges_and_models_has_no_demo_note(tmp_path, capsys):
    res = tmp_path / "results"
    _write_one_judge(res)
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    assert "Demo output" not in (out / "report.md").read_text()
    assert "not results" not in capsys.readouterr().out


def _dated_results(model: str) -> list:
    """Four instances, one per paper; under the catalog's gemini-3.1-pro cutoff (2025-01-31) 2502 and 2503 are clean,
    2501 is not and 2504 has no date. Best@5 non-obviousness: 2, 3, 1, 0; verdicts: win, win, lose, lose."""
    from datetime import date

    def inst(rq_id, gt, best, published):
        return instance(
            rq_id,
            cand("gt", gt),
            [cand("m0", best)] + [cand(f"m{i}", (0, 0, 0)) for i in range(1, 5)],
            published=published,
        )

    insts = [
        inst("2501.00001_rq0", (1, 1, 1), (2, 2, 2), date(2025, 1, 10)),
        inst("2502.00002_rq0", (1, 1, 1), (3, 3, 3), date(2025, 2, 3)),
        inst("2503.00003_rq0", (2, 2, 2), (1, 1, 1), date(2025, 3, 7)),
        inst("2504.00004_rq0", (1, 1, 1), (0, 0, 0), None),
    ]
    return [results(insts, model=model, judge_model=jm, label=label) for jm, label in JUDGES]


def test_the_clean_subset_table(tmp_path, capsys):
    """Per model: the cutoff and its source, clean instances of the row's, the headline figures on them with CIs."""
    folder = tmp_path / "results"
    folder.mkdir()
    for k, r in enumerate(_dated_results("gemini/gemini-3.1-pro") + _dated_results("openai/gpt-5.5")):
        (folder / f"r{k}.json").write_text(r.model_dump_json())
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out), "--n-boot", "50"]) == 0, capsys.readouterr().err
    md = (out / "clean_subset.md").read_text()
    assert "Post-cutoff (clean) figures" in md and "clean_subset" not in md.split("\n")[0]
    lines = {
        tuple(c.strip() for c in line.strip("|").split("|")[:3]): line
        for line in md.splitlines()
        if line.startswith("| ") and "model" not in line[:8]
    }
    gemini = [c.strip() for c in lines[("gemini/gemini-3.1-pro", "standalone", "combined")].strip("|").split("|")]
    assert gemini[3] == "2025-01-31" and "Google, Gemini API model page" in gemini[4]
    assert gemini[5:7] == ["2/4", "1"]  # 2502 and 2503 of the four; 2504 undated
    header = [c.strip() for c in md.splitlines()[4].strip("|").split("|")]
    cell = dict(zip(header, gemini))
    assert cell["Best@5 non-obviousness"].startswith("2.00 [")  # (3 + 1) / 2
    assert cell["Win % non-obviousness"].startswith("50.0 [") and cell["Lose % non-obviousness"].startswith("50.0 [")
    assert cell["no clean figures because"] == ""
    gpt = dict(
        zip(header, (c.strip() for c in lines[("openai/gpt-5.5", "standalone", "combined")].strip("|").split("|")))
    )
    assert gpt["knowledge cutoff"] == "unknown" and gpt["clean / instances"] == "0/4"
    assert gpt["Best@5 non-obviousness"] == "–" and "OpenAI's model page" in gpt["no clean figures because"]
    with (out / "clean_subset.csv").open() as fh:
        tidy = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    got = {(r["row"], r["column"]): float(r["value"]) for r in tidy}
    key = "gemini/gemini-3.1-pro | standalone | combined"
    assert got[(key, "best5_non_obviousness")] == 2.0 and got[(key, "win_non_obviousness")] == 0.5
    assert (got[(key, "clean_instances")], got[(key, "instances_covered")], got[(key, "undated")]) == (2, 4, 1)
    assert "Post-cutoff (clean) figures" in (out / "report.md").read_text()
    assert "\\begin{tabular}" in (out / "clean_subset.tex").read_text()


# --source-bound-setting: which judging Table 9's source-boundedness picks come from (the paper does not say).
# One submission, one judge, both settings; m0 is the RQ shown (non-obviousness 3 against the GT's 1), m1..m4 are
# the least source-bound. Per instance (GT, m0) source-boundedness, lower wins.
SB_IDS = RQ_IDS[:4]
SB_BY_SETTING = {"comparative": [(0, 1), (1, 0), (1, 1), (2, 3)], "standalone": [(1, 0), (1, 1), (2, 0), (3, 1)]}
SB_PICKS = {"comparative": ["gt", "model", "tie", "gt"], "standalone": ["model", "tie", "model", "model"]}


def _write_sb_results(folder, settings=("comparative", "standalone")):
    folder.mkdir(parents=True, exist_ok=True)
    for setting in settings:
        insts = []
        for rq, (gs, ms) in zip(SB_IDS, SB_BY_SETTING[setting]):
            model = [cand("m0", (1, 1, 3), sb=ms)] + [cand(f"m{i}", (1, 1, 0), sb=0) for i in range(1, 5)]
            insts.append(instance(rq, cand("gt", (1, 1, 1), sb=gs), model))
        r = results(insts, judge_model=JUDGES[0][0], label=JUDGES[0][1], setting=setting, expected=4)
        (folder / f"gpt-{setting}.json").write_text(r.model_dump_json())


def _sb_annotations(path):
    path.write_text(
        "rq_id,evaluator,winner\n"
        + "".join(f"{rq},expert-1,{w}\n" for rq, w in zip(SB_IDS, ["gt", "model", "model", "gt"]))
    )
    return path


def _sb_argv(tmp_path, command: str, **results_kw) -> tuple[list[str], Path]:
    """The command line of ``rqbench agreement`` or ``rqbench report --annotations`` over the Table 9 fixtures."""
    res, out = tmp_path / "results", tmp_path / "out"
    _write_sb_results(res, **results_kw)
    ann = _sb_annotations(tmp_path / "ann.csv")
    if command == "agreement":
        return ["agreement", "--annotations", str(ann), "--results", str(res), "--out", str(out)], out
    return ["report", str(res), "--out", str(out), "--annotations", str(ann)], out


@pytest.mark.parametrize("command", ["agreement", "report"])
@pytest.mark.parametrize("setting", [None, "comparative", "standalone"])
def test_the_source_bound_setting_is_chosen_recorded_and_named_in_the_table_9_captions(
    tmp_path, capsys, command, setting
):
    argv, out = _sb_argv(tmp_path, command)
    flag = [] if setting is None else ["--source-bound-setting", setting]
    assert main([*argv, *flag, "--n-boot", "50"]) == 0, capsys.readouterr().err
    used = setting or "comparative"  # the default keeps today's tables
    rep = json.loads((out / "agreement.json").read_text())
    assert rep["setting"] == "comparative" and rep["source_bound_setting"] == used
    (row,) = rep["source_bound_win_rates"]
    assert [row[w]["value"] for w in ("gt", "model", "tie")] == [
        SB_PICKS[used].count(w) / 4 for w in ("gt", "model", "tie")
    ]
    # expert-1 (gt, model, model, gt) against the judge's picks: comparative 3 of 4 the same, standalone 1 of 4
    (cell,) = rep["nonobv_vs_source_bound"]["cells"]
    assert cell["estimate"]["value"] == {"comparative": 0.75, "standalone": 0.25}[used]
    named = f"source-boundedness from {used} judging (--source-bound-setting {used})"
    for stem in ("source_bound_win_rates", "nonobv_vs_source_bound"):
        assert named in (out / f"{stem}.md").read_text(), stem
        assert named in (out / f"{stem}.tex").read_text(), stem


@pytest.mark.parametrize("command", ["agreement", "report"])
def test_a_source_bound_setting_without_results_is_named_with_its_flag(tmp_path, capsys, command):
    argv, _ = _sb_argv(tmp_path, command, settings=("comparative",))
    assert main([*argv, "--source-bound-setting", "standalone", "--n-boot", "20"]) == 2
    err = capsys.readouterr().err
    assert f"rqbench {command}: no standalone results among the 1 given" in err
    assert "use standalone judging (--source-bound-setting standalone)" in err
