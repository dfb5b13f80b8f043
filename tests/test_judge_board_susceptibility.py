"""How far words added to the model RQ move a judge: figures by hand, and a run on the scripted judge."""

from __future__ import annotations

import json

import pytest
from scripted_replies import candidates_of
from test_judge_board import sample, write_study

from rqbench import paths
from rqbench.cli import main
from rqbench.evaluate.judge_board.board import make_board
from rqbench.evaluate.judge_board.expert_pool import read_pool
from rqbench.evaluate.judge_board.run import load_board_files
from rqbench.evaluate.judge_board.susceptibility import choose_cues, cue_shifts, cues, margin
from rqbench.evaluate.report.judge_board_section import markdown
from rqbench.records import CuedPairVerdicts, NoveltyScore, OrderVerdict, PairVerdicts, RawReply


def _score(n: int) -> NoveltyScore:
    return NoveltyScore(relevance=1, originality=1, gap_addressing=1, non_obviousness=n)


def _calls(*scores: tuple[int, int] | None) -> list[OrderVerdict]:
    """One call per (gt, model) non-obviousness; None is a failed call."""
    out = []
    for order, s in zip(("gt_first", "model_first"), scores, strict=False):
        raw = RawReply(step="novelty_comparative", cache_key="k", text="{}")
        if s is None:
            out.append(OrderVerdict(order=order, pick=None, raw=raw, failure="invalid_reply: x"))
        else:
            gt, model = s
            pick = "tie" if gt == model else "gt" if gt > model else "model"
            out.append(OrderVerdict(order=order, pick=pick, gt_score=_score(gt), model_score=_score(model), raw=raw))
    return out


def _clean(pair: str, *scores, key: str = "") -> PairVerdicts:
    return PairVerdicts(pair_id=pair, content_key=key or f"c-{pair}", verdicts=_calls(*scores))


def _cued(pair: str, *scores, key: str = "") -> CuedPairVerdicts:
    return CuedPairVerdicts(
        pair_id=pair, content_key=key or f"c-{pair}", cue="self_praise", cue_text="words", verdicts=_calls(*scores)
    )


def test_the_margin_and_the_shifts_by_hand():
    # margin: model minus gt, mean over the scored calls: (1 - 2 + 3 - 2) / 2 = 0; a failed call is left out
    assert margin(_calls((2, 1), (2, 3))) == 0.0 and margin(_calls((1, 3), None)) == 2.0
    assert margin(_calls(None, None)) is None
    clean = [
        _clean("p1", (2, 1), (2, 1)),  # margin -1, pick gt
        _clean("p2", (2, 2), (2, 2)),  # margin 0, tie
        _clean("p3", (1, 3), (1, 3)),  # margin +2, model
        _clean("p4", (2, 1), (2, 1)),
        _clean("p5", None, None),  # no clean verdict: the pair cannot count
        _clean("p6", (2, 1), (2, 1)),
    ]
    cued = [
        _cued("p1", (2, 3), (2, 3)),  # margin +1, model: shift +2, moved toward the RQ
        _cued("p2", (2, 2), (2, 2)),  # shift 0, no move
        _cued("p3", (2, 3), (2, 2)),  # margin (1 + 0) / 2 = 0.5, pick model (2 vs 2.5): shift -1.5, no move
        _cued("p4", (0, 3), (0, 3)),  # the pool's texts of p4 have changed since: not counted
        _cued("p5", (0, 3), (0, 3)),
        _cued("p6", (0, 3), (0, 3), key="c-p6-old"),  # cued on texts p6 had before its clean rerun: not counted
    ]
    current = {"p1": "c-p1", "p2": "c-p2", "p3": "c-p3", "p4": "c-p4-new", "p5": "c-p5", "p6": "c-p6"}
    (shift,) = cue_shifts(clean, cued, current, n_boot=200)
    assert shift.cue == "self_praise" and shift.what == cues()["self_praise"].what
    assert shift.pairs == 3
    assert shift.margin_shift.value == pytest.approx((2 + 0 - 1.5) / 3)
    assert shift.toward_model.value == pytest.approx(1 / 3) and shift.away_from_model.value == 0.0
    # a cue that took the RQ from model to gt is a move away
    (away,) = cue_shifts([_clean("p3", (1, 3))], [_cued("p3", (3, 1))], {"p3": "c-p3"}, n_boot=50)
    assert away.margin_shift.value == pytest.approx(-4.0) and away.away_from_model.value == 1.0


def test_the_cues_are_data_and_an_unknown_one_is_named():
    assert list(cues()) == ["self_praise", "claimed_consensus", "claimed_score"]
    assert [c.kind for c in choose_cues(["all"])] == list(cues())
    with pytest.raises(ValueError, match="unknown cue.*flattery.*known: self_praise"):
        choose_cues(["flattery"])


PRAISE = "strikingly original"


def swayed(req):
    """A judge the self-praise cue sways by one point: the author-anchored RQ 2, the model RQ 1, plus 1 with praise."""
    values = [(2 if "author" in t else 1) + (PRAISE in t) for t in candidates_of(req)]
    scores = [{"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": v} for v in values]
    return json.dumps({"scores": scores, "ranking": sorted(range(len(values)), key=lambda i: -values[i])})


@pytest.fixture
def judge(scripted_server, monkeypatch):
    scripted_server.responder = swayed
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return f"openai/gpt-4o-mini@api_base={scripted_server.api_base},max_retries=0,timeout_s=10"


def test_a_run_with_cues_measures_the_judge_and_a_rerun_pays_for_nothing(tmp_path, judge, scripted_server, capsys):
    assert PRAISE in cues()["self_praise"].text
    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 5)])
    args = ["judge-board", "--judge", judge, "--examples", str(study), "--no-annotations", "--n-boot", "200"]
    assert main([*args, "--susceptibility", "--dry-run"]) == 0
    assert "dry run: 32 calls to send" in capsys.readouterr().out  # 4 pairs x 2 orders x (clean + 3 cues)
    assert main([*args, "--susceptibility"]) == 0
    assert len(scripted_server.requests) == 32
    shown = [candidates_of(r) for r in scripted_server.requests]
    praised = [c for c in shown if any(PRAISE in t for t in c)]
    assert len(praised) == 8 and all(not any(PRAISE in t for t in c if "author" in t) for c in praised)
    (f,) = load_board_files(paths.judge_board_dir())
    assert len(f.pairs) == 4 and len(f.cued) == 12 and {c.cue for c in f.cued} == set(cues())
    board = make_board(read_pool(paths.judge_board_dir()), [f], n_boot=200)
    (row,) = [r for r in board.rows if r.origin == "run"]
    by_cue = {c.cue: c for c in row.susceptibility}
    # clean: 2 vs 1, pick gt on every pair; praised: 2 vs 2, a tie: margin +1, every pair moved toward the RQ
    assert by_cue["self_praise"].margin_shift.value == pytest.approx(1.0)
    assert by_cue["self_praise"].toward_model.value == 1.0 and by_cue["self_praise"].pairs == 4
    assert by_cue["claimed_score"].margin_shift.value == 0.0 and by_cue["claimed_score"].toward_model.value == 0.0
    text = markdown(board)
    assert "### Susceptibility to words added to the RQ" in text and "+1.00 [+1.00, +1.00] n=4" in text
    # the Judges tab shows the same cells
    from rqbench.space.tabs.judges import susceptibility_table

    page = susceptibility_table(board)
    assert "+1.00 [+1.00, +1.00] n=4" in page and "the RQ praises itself" in page and "Moved toward the RQ" in page
    # a rerun pays for nothing, and keeps the cued verdicts
    n = len(scripted_server.requests)
    assert main([*args, "--susceptibility", "claimed_score"]) == 0
    assert len(scripted_server.requests) == n
    assert len(load_board_files(paths.judge_board_dir())[0].cued) == 12
    assert main([*args, "--susceptibility", "flattery"]) == 2
    assert "unknown cue(s) flattery" in capsys.readouterr().err
