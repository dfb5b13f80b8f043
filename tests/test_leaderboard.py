"""Leaderboard table building, filtering, sorting, column choice and CSV export."""

from __future__ import annotations

import io
from datetime import date

import pandas as pd
import pytest

from rqbench.evaluate.metrics.summary import summarize
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.testing.synthetic import make_results

# the three source papers' first versions: the first before Closed-Model's cutoff, the other two after it
PUBLISHED = {"2501.10000": date(2025, 1, 3), "2501.10001": date(2025, 1, 20), "2501.10002": date(2025, 1, 28)}
CUTOFF = date(2025, 1, 15)


@pytest.fixture(scope="module")
def rows():
    res = []
    for judge in ("judge-a", "judge-b"):
        for setting in ("standalone", "comparative"):
            res.append(make_results("open-model", judge=judge, setting=setting, bias=0.4, published=PUBLISHED))
            res.append(
                make_results(
                    "Closed-Model",
                    judge=judge,
                    setting=setting,
                    bias=-0.4,
                    model_type="closed",
                    prompt_variant="revised",
                    knowledge_cutoff=CUTOFF,
                    published=PUBLISHED,
                )
            )
    return summarize(res, n_boot=100)


@pytest.fixture(scope="module")
def table(rows):
    return lb.build_table(rows)


def test_one_row_per_model_variant_setting_judge_plus_reference(table):
    models = table[table["Type"] != "reference"]
    assert len(models) == 2 * 2 * 3  # 2 models x 2 settings x (2 judges + combined)
    assert not models.duplicated(["Model", "Prompt variant", "Setting", "Judge"]).any()
    ref = table[table["Type"] == "reference"]
    assert set(ref["Setting"]) == {"standalone"}  # no mean comparative scores for the GT
    assert set(ref["Judge"]) == {"judge-a", "judge-b", "combined"}


def test_figures_come_from_summary_rows(rows, table):
    src = next(r for r in rows if r.model == "open-model" and r.setting == "standalone" and r.judge == "combined")
    row = table[(table["Model"] == "open-model") & (table["Setting"] == "standalone") & (table["Judge"] == "combined")]
    fig = src.figures["best5_non_obviousness"]
    assert row["Best@5 non-obviousness"].item() == round(fig.value, 2)
    assert row["Best@5 non-obviousness 95% CI"].item() == f"[{fig.ci_low:.2f}, {fig.ci_high:.2f}]"
    win = src.figures["win_non_obviousness"]
    assert row["Win % non-obviousness"].item() == round(100 * win.value, 1)
    assert row["Instances"].item() == "6/6" and row["Scored"].item() == "6/6"
    assert row["Failures"].item() == "none"
    assert row["Dataset"].item() == "local/rq-bench-sample@v0.1.0"


def test_contamination_flag_when_cutoff_postdates_sources(table):
    closed = table[(table["Model"] == "Closed-Model") & (table["Judge"] == "combined")]
    assert closed["Contamination"].str.startswith("yes").all()
    open_ = table[(table["Model"] == "open-model") & (table["Judge"] == "combined")]
    assert open_["Contamination"].str.startswith("unknown").all()


def test_the_clean_only_view_switches_every_figure_and_counts_the_clean_instances(rows, table):
    """Closed-Model: 4 of its 6 instances are clean (papers 2 and 3 after the cutoff); open-model has no cutoff."""
    src = next(r for r in rows if r.model == "Closed-Model" and r.setting == "standalone" and r.judge == "combined")
    assert src.clean.instances == 4 and src.clean.figures != src.figures
    cell = lb.AgreementCell(value=0.6, ci_low=0.4, ci_high=0.8, n=5)
    t = lb.build_table(rows, {("Closed-Model", "standalone", "combined"): cell})
    out = lb.render(t, lb.View(clean_only=True, groups=lb.GROUPS))
    ids = [c.label for c in lb.ID_COLUMNS]
    assert list(out.columns[: len(ids) + 1]) == [*ids, "Clean"]  # right after the model's columns
    closed = out[(out.Model == "Closed-Model") & (out.Setting == "standalone")].iloc[0]
    for metric, label in (("best5_non_obviousness", "Best@5 non-obviousness"), ("overlap5", "Overlap@5")):
        fig = src.clean.figures[metric]
        assert (
            closed[label] == round(fig.value, 2)
            and closed[f"{label} 95% CI"] == f"[{fig.ci_low:.2f}, {fig.ci_high:.2f}]"
        )
    fig = src.clean.figures["win_non_obviousness"]
    assert closed["Win % non-obviousness"] == round(100 * fig.value, 1)
    assert closed["Clean"] == "4/6"
    assert closed["Human agreement % (non-obviousness)"] is None  # agreement has no clean value
    open_ = out[out.Model == "open-model"]
    assert open_["Best@5 non-obviousness"].isna().all() and open_["Win % non-obviousness"].isna().all()
    assert open_["Clean"].str.startswith("none: no knowledge cutoff for open-model").all()
    # the reference rows keep their figures (no cutoff), and the default view is as it was
    ref = out[out.Type == "reference"]
    plain = lb.render(t, lb.View(groups=lb.GROUPS))
    assert ref["Best@5 non-obviousness"].tolist() == plain[plain.Type == "reference"]["Best@5 non-obviousness"].tolist()
    assert "Clean" not in plain.columns and (ref["Clean"] == "").all()
    # sorting works on the clean values, the rows without any going last
    by = lb.render(t, lb.View(clean_only=True, judges=(), sort_by="Best@5 non-obviousness"))
    vals = by["Best@5 non-obviousness"].tolist()
    shown = [v for v in vals if not pd.isna(v)]
    assert shown == sorted(shown, reverse=True) and all(pd.isna(v) for v in vals[len(shown) :])


def test_the_clean_only_page_cells_say_why_a_row_has_none(table):
    headers, cells, caption = lb_cells.display(table, lb.View(clean_only=True))
    labels = [h.label for h in headers]
    k = labels.index("Clean")
    assert labels[k - 1] == "Judge" or lb.BY_LABEL[labels[k - 1]] in lb.ID_COLUMNS  # after the model's columns
    by_model = {row[0].text: row for row in cells if row[1].text == "standalone"}
    closed, open_ = by_model["Closed-Model"], by_model["open-model"]
    assert closed[k].text == "4/6" and f"knowledge cutoff {CUTOFF} (stated by the submission)" in closed[k].title
    assert open_[k].text == "—" and open_[k].kind == "missing"
    why = open_[k].title
    assert why.startswith("No clean figures for this row: no knowledge cutoff for open-model")
    assert all(c.title == why for c in open_[k + 1 :] if c.kind == "missing") and open_[k + 1].kind == "missing"
    assert caption.startswith("Clean only: each model row's figures are over its clean instances")
    assert f"— {why}" in caption
    assert "Clean" not in [h.label for h in lb_cells.display(table, lb.View())[0]]


def test_default_view_shows_combined_judge_and_reference(table):
    out = lb.render(table, lb.View())
    assert set(out["Judge"]) == {"combined"}
    assert "author-anchored (GT)" in set(out["Model"])
    # standalone rows first, ranked by Best@5 non-obviousness
    stand = out[out["Setting"] == "standalone"]["Best@5 non-obviousness"].tolist()
    assert stand == sorted(stand, reverse=True)


def test_search_is_literal_and_case_insensitive(table):
    assert set(lb.render(table, lb.View(search="closed")).Model) == {"Closed-Model"}
    assert lb.render(table, lb.View(search="[")).empty  # a regex metacharacter is just a character


def test_filters_by_judge_setting_variant_and_type(table):
    v = lb.View(judges=("judge-a",), settings=("comparative",))
    out = lb.render(table, v)
    assert set(out.Judge) == {"judge-a"} and set(out.Setting) == {"comparative"} and len(out) == 2
    out = lb.render(table, lb.View(variants=("revised",), settings=("standalone",)))
    assert set(out.Model) == {"Closed-Model", "author-anchored (GT)"}  # the reference stays as the yardstick
    out = lb.render(table, lb.View(model_types=("open",), judges=()))
    assert set(out.Type) == {"open", "reference"}


def test_sort_by_any_column_missing_last(table):
    out = lb.render(table, lb.View(judges=(), sort_by="Overlap@5", ascending=True))
    vals = out["Overlap@5"].dropna().tolist()
    assert vals == sorted(vals)
    missing = out["Overlap@5"].isna().tolist()
    assert missing == sorted(missing)  # rows without the figure (the reference) come last
    assert any(missing)
    with pytest.raises(ValueError, match="no column"):
        lb.render(table, lb.View(sort_by="nope"))


def test_column_groups_and_ci_toggle(table):
    out = lb.render(table, lb.View(groups=("model", "overlap"), show_ci=False))
    assert list(out.columns) == ["Model", "Type", "Prompt variant", "Setting", "Judge", "Scored", "Overlap@5"]
    with_ci = lb.render(table, lb.View(groups=("narrowness",)))
    cols = list(with_ci.columns)
    assert cols[cols.index("Lose % source-boundedness") + 1] == "Lose % source-boundedness 95% CI"
    assert "_row_kind" not in cols


def test_csv_export_round_trips_the_shown_table(table):
    shown = lb.render(table, lb.View(judges=(), groups=("model", "novelty")))
    back = pd.read_csv(io.BytesIO(lb.to_csv(shown)))
    assert list(back.columns) == list(shown.columns)
    assert len(back) == len(shown)
    assert back["Model"].tolist() == shown["Model"].tolist()


def test_human_agreement_column(rows):
    cell = lb.AgreementCell(value=0.6, ci_low=0.4, ci_high=0.8, n=5)
    t = lb.build_table(rows, {("open-model", "comparative", "judge-a"): cell})
    out = lb.render(
        t, lb.View(judges=("judge-a",), settings=("comparative",), search="open", groups=("model", "human agreement"))
    )
    assert out["Human agreement % (non-obviousness)"].item() == 60.0
    assert out["Human agreement % (non-obviousness) 95% CI"].item() == "[40.0, 80.0] n=5"


def test_empty_store_gives_an_empty_table_with_columns():
    t = lb.build_table([])
    out = lb.render(t, lb.View())
    assert out.empty and "Model" in out.columns


def test_space_readme_header_and_export(tmp_path):
    """The Space card parses as a Hub Space card with OAuth on, and the export is a self-contained Space folder."""
    from pathlib import Path

    from huggingface_hub import SpaceCard

    from rqbench.space.cli import export_space

    space_dir = Path(lb.__file__).resolve().parent
    card = SpaceCard.load(space_dir / "README.md")
    assert card.data.sdk == "gradio" and card.data.app_file == "app.py"
    assert card.data.to_dict()["hf_oauth"] is True
    out = export_space(tmp_path / "export")
    for name in (
        "app.py",
        "README.md",
        "requirements.txt",
        "rqbench/space/ui.py",
        "rqbench/evaluate/metrics/summary.py",
        "rqbench/records/__init__.py",
    ):
        assert (out / name).is_file(), name
    assert not (out / "rqbench" / "testing").exists()  # test support stays out of the Space
    assert not list(out.rglob("__pycache__"))
    with pytest.raises(FileExistsError):
        export_space(out)


def test_a_one_judge_run_has_no_combined_row_and_the_default_view_shows_its_judge():
    one = summarize([make_results("solo-model", judge="judge-a", setting="standalone")], n_boot=50)
    table = lb.build_table(one)
    assert "combined" not in set(table["Judge"])
    shown = lb.render(table, lb.View())
    assert set(shown["Judge"]) == {"judge-a"} and set(shown["Model"]) == {"solo-model", "author-anchored (GT)"}


def test_a_metrics_declared_function_is_what_the_leaderboard_cell_shows(monkeypatch):
    """One implementation per metric: swap a metric's declared function and the leaderboard cell follows."""
    from dataclasses import replace

    import numpy as np

    from rqbench.evaluate.criteria import METRICS

    res = [make_results("open-model", judge="judge-a", setting=s, bias=0.4) for s in ("standalone", "comparative")]
    before = lb.build_table(summarize(res, n_boot=20))
    model_rows = before["Type"] != "reference"
    assert (before.loc[model_rows, "Best@5 originality"].dropna() != 0.25).any()

    spec = METRICS["best5_originality"]
    monkeypatch.setitem(METRICS, spec.name, replace(spec, fn=lambda gt, model: np.full(len(gt), 0.25)))
    after = lb.build_table(summarize(res, n_boot=20))
    cells = after.loc[after["Type"] != "reference", "Best@5 originality"].dropna()
    assert len(cells) and (cells == 0.25).all()
    # the reference row is the GT's own score, not the metric's function: it stays
    assert (
        after.loc[~model_rows, "Best@5 originality"].tolist() == before.loc[~model_rows, "Best@5 originality"].tolist()
    )


def _with_failures():
    """One model whose generation failed on one instance (in every judge's file) and whose judge-b calls failed on
    another: the first counts against the model, the second leaves judge-b's rows (and combined) incomplete."""
    from rqbench.records import RawReply

    files = []
    for judge in ("judge-a", "judge-b"):
        r = make_results("failing-model", judge=judge, setting="standalone")
        lost = r.instances[0]
        lost.candidates, lost.overlap, lost.failures = lost.candidates[:1], None, ["generation_failed: invalid_reply"]
        if judge == "judge-b":
            bad = r.instances[1]
            bad.candidates[2].novelty = None
            bad.raw_replies = [
                RawReply(
                    step="novelty_standalone", cache_key="k", text="{", error="invalid_reply: x", candidate_order=["m1"]
                )
            ]
            bad.rule_applications, bad.rule_corrections = {"relevance_zero": 2}, 2
        files.append(r)
    return files


def test_an_incomplete_row_shows_a_mark_and_the_count_and_the_details_say_whose():
    table = lb.build_table(summarize(_with_failures(), n_boot=50))
    rows = table[table["Type"] != "reference"].set_index("Judge")
    assert rows.loc["judge-a", "Scored"] == "6/6"  # the failed generation is scored, as a loss
    assert rows.loc["judge-b", "Scored"] == "5/6 † 1 unjudged"
    assert rows.loc["combined", "Scored"] == "5/6 † 1 unjudged"
    assert rows.loc["judge-a", "Failures"] == "1 with no valid generation (the model's; counted as losses)"
    assert "1 unjudged (a judge's calls failed after their re-ask)" in rows.loc["judge-b", "Failures"]
    assert rows.loc["combined", "Judge details"] == (
        "judge-a: rules applied none; failed calls none | judge-b: rules "
        "applied relevance_zero 2; failed calls invalid_reply 1"
    )
    headers, cells, caption = lb_cells.display(table, lb.View(judges=()))
    at = [h.label for h in headers].index("Scored")
    marked = [row[at] for row in cells if row[at].note]
    assert len(marked) == 2 and all(c.note == "† 1 unjudged" and "failed" in c.title for c in marked)
    assert "† Incomplete row" in caption and "failures: paper" in caption


def test_the_conditional_figures_leave_the_failed_generation_out():
    from rqbench.evaluate.metrics.metric import FailureAccounting, ScoreOptions

    files = _with_failures()[:1]
    paper = {r.judge: r for r in summarize(files, n_boot=50) if r.row_kind == "model"}["judge-a"]
    conditional = ScoreOptions(failures=FailureAccounting.conditional)
    cond = {r.judge: r for r in summarize(files, n_boot=50, options=conditional) if r.row_kind == "model"}["judge-a"]
    assert paper.figures["lose_non_obviousness"].n == 6 and cond.figures["lose_non_obviousness"].n == 5
    # the loss: the paper's lose rate is (5 x cond + 1) / 6
    want = (5 * cond.figures["lose_non_obviousness"].value + 1) / 6
    assert paper.figures["lose_non_obviousness"].value == pytest.approx(want)
    assert cond.provenance.failures == "conditional" and cond.provenance.generation_failures == 1
