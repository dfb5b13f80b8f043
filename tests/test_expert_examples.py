"""The ten expert-study samples printed in the paper's appendix A.6, checked against a hand reading.

``../shared/fixtures/paper_examples/expert_vs_llm.jsonl`` holds, per sample, the
comparative non-obviousness winner (``gt``, ``model`` or ``tie``) that each of
four raters picked: two domain experts, gemini-3.1-pro and deepseek-v4-pro.
The expected numbers below were worked out by hand from the paper's text, not
from the file (docs/fidelity.md, "A.6 by hand", says how). The agreement and
the counts are computed here in plain Python on purpose: the test pins the
data and the arithmetic, so the project's agreement code can later be pointed
at the same file and must give the same numbers.

These ten are a printed subset of the paper's 50-sample study; their figures
are not expected to equal the paper's aggregates (Table 5).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

RATERS = ("expert_1", "expert_2", "gemini-3.1-pro", "deepseek-v4-pro")
WINNERS = ("gt", "model", "tie")

# Read off the paper's "JUDGES' VERDICTS" lines, sample by sample (appendix A.6).
HAND_PICKS: dict[int, dict[str, str]] = {
    1: {"expert_1": "model", "expert_2": "model", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    2: {"expert_1": "gt", "expert_2": "gt", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    3: {"expert_1": "gt", "expert_2": "gt", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    4: {"expert_1": "gt", "expert_2": "model", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    5: {"expert_1": "gt", "expert_2": "gt", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    6: {"expert_1": "gt", "expert_2": "gt", "gemini-3.1-pro": "gt", "deepseek-v4-pro": "tie"},
    7: {"expert_1": "gt", "expert_2": "model", "gemini-3.1-pro": "gt", "deepseek-v4-pro": "model"},
    8: {"expert_1": "gt", "expert_2": "gt", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
    9: {"expert_1": "model", "expert_2": "model", "gemini-3.1-pro": "model", "deepseek-v4-pro": "tie"},
    10: {"expert_1": "gt", "expert_2": "model", "gemini-3.1-pro": "model", "deepseek-v4-pro": "model"},
}

# Share of the ten samples on which two raters picked the same winner, counted by hand.
HAND_AGREEMENT: dict[tuple[str, str], float] = {
    ("expert_1", "expert_2"): 0.7,
    ("expert_1", "gemini-3.1-pro"): 0.4,
    ("expert_1", "deepseek-v4-pro"): 0.1,
    ("expert_2", "gemini-3.1-pro"): 0.5,
    ("expert_2", "deepseek-v4-pro"): 0.4,
    ("gemini-3.1-pro", "deepseek-v4-pro"): 0.7,
}

# How often each rater picked each winner, counted by hand.
HAND_COUNTS: dict[str, dict[str, int]] = {
    "expert_1": {"gt": 8, "model": 2, "tie": 0},
    "expert_2": {"gt": 5, "model": 5, "tie": 0},
    "gemini-3.1-pro": {"gt": 2, "model": 8, "tie": 0},
    "deepseek-v4-pro": {"gt": 0, "model": 8, "tie": 2},
}


@pytest.fixture(scope="module")
def samples(fixtures_dir: Path) -> list[dict]:
    path = fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for n, row in enumerate(rows, start=1):
        assert set(row["verdicts"]) == set(RATERS), f"{path}:{n}: verdicts name {sorted(row['verdicts'])}"
        bad = {r: v for r, v in row["verdicts"].items() if v not in WINNERS}
        assert not bad, f"{path}:{n}: verdict values {bad} are not among {WINNERS}"
    return rows


def agreement(rows: list[dict]) -> dict[tuple[str, str], float]:
    """Every pair of raters: the share of samples where both picked the same winner."""
    return {
        (a, b): sum(r["verdicts"][a] == r["verdicts"][b] for r in rows) / len(rows)
        for a, b in itertools.combinations(RATERS, 2)
    }


def winner_counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    return {rater: {w: sum(r["verdicts"][rater] == w for r in rows) for w in WINNERS} for rater in RATERS}


def test_the_file_holds_the_ten_comparative_non_obviousness_samples(samples):
    assert [r["sample"] for r in samples] == list(range(1, 11))
    assert {r["dimension"] for r in samples} == {"non_obviousness"}
    assert {r["setting"] for r in samples} == {"comparative"}
    assert {r["model"] for r in samples} == {"gpt-5.5"}


def test_each_pick_matches_the_hand_reading(samples):
    got = {r["sample"]: r["verdicts"] for r in samples}
    wrong = {
        (s, rater): (got[s][rater], want)
        for s, picks in HAND_PICKS.items()
        for rater, want in picks.items()
        if got[s][rater] != want
    }
    assert not wrong, f"(sample, rater): (file, hand) differ: {wrong}"


def test_pairwise_agreement_matches_the_hand_count(samples):
    got = agreement(samples)
    assert got.keys() == HAND_AGREEMENT.keys()
    for pair, want in HAND_AGREEMENT.items():
        assert got[pair] == pytest.approx(want), pair


def test_winner_counts_match_the_hand_count(samples):
    assert winner_counts(samples) == HAND_COUNTS
    assert all(sum(c.values()) == 10 for c in HAND_COUNTS.values())


def test_the_arithmetic_is_the_same_on_the_hand_reading():
    """The functions above, run on the hand transcription itself, give the hand-counted numbers."""
    rows = [{"sample": s, "verdicts": v} for s, v in HAND_PICKS.items()]
    assert agreement(rows) == pytest.approx(HAND_AGREEMENT)
    assert winner_counts(rows) == HAND_COUNTS


# -- the project's own agreement code on the same file ------------------------------------------


def test_the_agreement_code_gives_the_hand_counted_matrix_and_counts(fixtures_dir):
    from rqbench.evaluate.judge_board.agreement import (
        agreement_matrix,
        expert_sample_picks,
        read_expert_samples,
        win_rates,
    )

    samples = read_expert_samples(fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl")
    picks = expert_sample_picks(samples)
    assert {p.evaluator for p in picks if p.group == "human"} == {"expert_1", "expert_2"}
    matrix = agreement_matrix(picks, n_boot=200)
    assert matrix.rows == list(RATERS)
    for (a, b), want in HAND_AGREEMENT.items():
        assert matrix.get(a, b).value == pytest.approx(want)
        assert matrix.get(b, a).value == pytest.approx(want)
    for row in win_rates(picks, n_boot=200):
        counts = HAND_COUNTS[row.evaluator]
        assert (row.gt.value, row.model.value, row.tie.value) == pytest.approx(
            (counts["gt"] / 10, counts["model"] / 10, counts["tie"] / 10)
        )


def test_rqbench_agreement_prints_the_matrix_and_the_winner_counts(fixtures_dir, tmp_path, capsys):
    from rqbench.cli import main

    path = fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl"
    assert main(["agreement", "--examples", str(path), "--out", str(tmp_path / "t"), "--n-boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "| expert_1 | 100.0 [100.0, 100.0] | 70.0" in out
    for rater, c in HAND_COUNTS.items():
        assert f"{rater}: gt {c['gt']}, model {c['model']}, tie {c['tie']}" in out
    assert (tmp_path / "t" / "examples_agreement.md").is_file()


def test_a_bad_expert_line_names_the_file_line_sample_and_field(tmp_path, capsys):
    from rqbench.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"sample": 3, "background_title": "t", "background_abstract_summary": "a", "gt_rq": "g?", '
        '"model": "m", "model_rq": "q?", "verdicts": {"expert_1": "maybe"}}\n'
    )
    assert main(["agreement", "--examples", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and ":1" in err and "sample=3" in err and "verdicts" in err
