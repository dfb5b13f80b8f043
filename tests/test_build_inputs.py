"""How much of M the builder's LLM stages read: whole, up to the stage model's window, unless told otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from rqbench.builder.build_config import DEFAULT_MAX_TOKENS, BuildConfig, llm_settings, text_budget_basis
from rqbench.builder.verification import paper_source
from rqbench.llm import catalog
from rqbench.records import ParsedPaper, Section

PREAMBLE = "\\documentclass{article}\n\\usepackage{amsmath}\n\\newcommand{\\sparse}{S}\n"
BODY = "\\begin{document}\n\\section{Method}\n" + "We route tokens sparsely. " * 40 + "\n\\end{document}\n"


def _paper(tmp_path: Path) -> tuple[str, ParsedPaper]:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "main.tex").write_text(PREAMBLE + BODY, encoding="utf-8")
    parsed = ParsedPaper(
        arxiv_id="2501.00001",
        sections=[Section(index=0, level=1, name="Method", text="We route tokens sparsely.")],
        bibliography=[],
        cited_works=[],
        main_file="main.tex",
    )
    return str(folder), parsed


def test_the_verifier_reads_the_whole_latex_source_preamble_included(tmp_path):
    folder, parsed = _paper(tmp_path)
    text, kind = paper_source(folder, parsed, "latex", 1_000_000)
    assert kind == "latex" and text.startswith("\\documentclass") and "\\usepackage{amsmath}" in text
    assert text.rstrip().endswith("\\end{document}") and "[... cut" not in text
    assert paper_source(folder, parsed, "latex", None)[0] == text


def test_where_the_source_does_not_fit_the_preamble_goes_before_the_body_is_cut(tmp_path):
    folder, parsed = _paper(tmp_path)
    whole, _ = paper_source(folder, parsed, "latex", None)
    body_only, _ = paper_source(folder, parsed, "latex", len(whole) - 10)
    assert body_only.startswith("\\begin{document}") and "[... cut" not in body_only
    short, _ = paper_source(folder, parsed, "latex", 200)
    assert short.startswith("\\begin{document}") and "[... cut:" in short


def _config(tmp_path: Path, **kw) -> BuildConfig:
    return BuildConfig(out=tmp_path / "out", papers=tmp_path, **kw)


def test_stage_budgets_follow_the_stage_models_window(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "x")  # the paper's models for every role
    cfg = _config(tmp_path)
    s = llm_settings(cfg, "verify")
    assert s.model == "gemini/gemini-3.1-pro" and s.max_tokens == catalog.REASONING_REPLY_TOKENS
    room = catalog.input_room("gemini/gemini-3.1-pro", s.max_tokens)
    assert s.text_budget_chars == room.tokens * catalog.CHARS_PER_TOKEN > 3_000_000
    assert llm_settings(cfg, "contributions").text_budget_chars == s.text_budget_chars
    assert text_budget_basis(cfg, "verify") == "the context window (catalog 1,048,576 tokens)"
    assert cfg.settings_record()["budgets_per_stage"]["verify"]["text"] == s.text_budget_chars


def test_a_set_text_budget_and_the_embedded_model_keep_small_budgets_and_say_so(tmp_path):
    local = _config(tmp_path)  # no keys: the embedded model
    s = llm_settings(local, "verify")
    assert s.model == "local" and s.text_budget_chars == 10_000 and s.max_tokens == DEFAULT_MAX_TOKENS["verify"]
    assert text_budget_basis(local, "verify").startswith("the embedded model's small budget (10,000 characters")
    fixed = _config(tmp_path, text_budget_chars=5000, models={"strong": "prov/plain"})
    assert llm_settings(fixed, "verify").text_budget_chars == 5000
    assert text_budget_basis(fixed, "verify") == "--text-budget"


@pytest.mark.parametrize("given", [None, 123])
def test_a_reasoning_stage_model_gets_room_for_its_reasoning_unless_a_cap_is_given(tmp_path, given):
    cfg = _config(
        tmp_path, models={"labeller": "deepseek/deepseek-v4-pro"}, max_tokens={"influence": given} if given else {}
    )
    assert llm_settings(cfg, "influence").max_tokens == (given or catalog.REASONING_REPLY_TOKENS)
