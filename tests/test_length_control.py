"""Length control: the fit, the longest-of-five rule and the report table, on cases worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rqbench.evaluate.report.length_control import (
    LengthData,
    controlled_rates,
    fit,
    judge_length,
    length_data,
    length_tables,
    words,
)
from rqbench.records import SOURCE_BOUND_SCOPES
from rqbench.testing.synthetic import make_results


def data(model: str, rows: list[tuple[float, float]], generated: list[bool] | None = None) -> LengthData:
    """rows: (win, word difference) per instance, each on its own paper."""
    gen = generated or [True] * len(rows)
    return LengthData(
        model=model,
        win=[w for w, _ in rows],
        generated=gen,
        delta=[d if g else 0.0 for (_, d), g in zip(rows, gen)],
        longest_longer=[d > 0 and g for (_, d), g in zip(rows, gen)],
        papers=[f"p{i}" for i in range(len(rows))],
    )


def test_words_counts_whitespace_separated_tokens():
    assert words("Can  attention-only models\ntransfer?") == 4


def test_with_no_length_difference_the_controlled_rate_is_the_raw_rate():
    # every difference is 0, so tanh(0) = 0 and phi has nothing to explain: theta solves
    # sum(y - sigmoid(theta)) = RIDGE * theta. With 3 wins of 4: sigmoid(theta) = 0.75 - 0.01 * theta / 4,
    # theta close to logit(0.75) = 1.0986, so the rate is 0.75 - 0.0027 = 0.7473 (to 3 decimals).
    d = data("m", [(1, 0), (1, 0), (1, 0), (0, 0)])
    phi, (theta,), s = fit([d])
    assert phi == pytest.approx(0.0, abs=1e-6) and s == 1.0
    rate = 1 / (1 + math.exp(-theta))
    assert rate == pytest.approx(0.75 - 0.01 * math.log(3) / 4, abs=2e-4)


def test_a_judge_that_only_counts_words_gets_a_large_phi_and_the_controlled_rate_falls_to_even():
    # the model's RQs are longer on 6 of 8 instances and it wins exactly those: raw 0.75. Length explains every
    # verdict, so once length is held equal the model is no better than the author-anchored RQ: close to 0.5.
    rows = [(1, 5.0)] * 6 + [(0, -5.0)] * 2
    d = data("m", rows)
    phi, (theta,), s = fit([d])
    assert phi > 3
    rate = controlled_rates(d, np.ones(len(d.win)), phi, s)[0]
    assert abs(rate - 0.5) < abs(0.75 - 0.5) / 2


def test_a_constant_word_difference_measures_no_preference():
    # every model RQ is 2 words shorter: phi and theta cannot be told apart, so phi stays 0 and the table says so
    d = data("m", [(1, -2.0), (0, -2.0), (1, -2.0), (1, -2.0)])
    phi, _, s = fit([d])
    assert phi == 0.0 and s == 1.0


def test_length_that_does_not_decide_leaves_phi_near_zero():
    # longer and shorter RQs win at the same rate (2 of 4 each): phi is 0 by symmetry, controlled = raw = 0.5
    rows = [(1, 4.0), (1, 4.0), (0, 4.0), (0, 4.0), (1, -4.0), (1, -4.0), (0, -4.0), (0, -4.0)]
    phi, (theta,), _ = fit([data("m", rows)])
    assert phi == pytest.approx(0.0, abs=1e-6) and theta == pytest.approx(0.0, abs=1e-6)


def test_an_instance_with_no_generation_stays_a_loss_after_control():
    # 2 instances with RQs (both wins, no length difference), 2 with none (losses): raw 0.5. The controlled rate
    # puts sigmoid(theta) (close to 1 but held finite by the penalty) on the two and keeps 0 on the others.
    d = data("m", [(1, 0), (1, 0), (0, 0), (0, 0)], generated=[True, True, False, False])
    phi, (theta,), s = fit([d])
    rate = controlled_rates(d, np.ones(len(d.win)), phi, s)[0]
    assert rate == pytest.approx(1 / (1 + math.exp(-theta)) / 2, rel=1e-4)
    assert rate < 0.5


def test_length_data_reads_words_and_the_longest_of_five_rule_from_a_results_file():
    r = make_results("m", judge="A", setting="comparative", n_instances=4)
    inst = r.instances[0]
    inst.candidates[0].text = "one two three four five"  # the author-anchored RQ: 5 words
    for c, n in zip(inst.candidates[1:], (3, 3, 3, 3, 8)):
        c.text = " ".join(["w"] * n)
    d = length_data(r)
    # mean of the five 20 / 5 = 4 words, minus 5: -1; the longest (8) has more words than 5, though most are shorter
    assert d.delta[0] == pytest.approx(-1.0)
    assert d.longest_longer[0] is True
    assert len(d.win) == len(d.papers) <= 4


def test_the_report_table_has_raw_controlled_rule_and_each_judges_preference():
    results = [
        make_results(m, judge=j, setting="comparative", n_instances=8, seed=k)
        for k, (m, j) in enumerate([("m1", "A"), ("m2", "A"), ("m1", "B"), ("m2", "B")])
    ]
    for r in results:  # the synthetic RQs all have one length: vary it by instance
        for k, inst in enumerate(r.instances):
            for c in inst.candidates[1:]:
                c.text += " and more" * (k % 3)
    fits = judge_length(results, "comparative", n_boot=50)
    assert all(f.measurable for f in fits)
    assert [f.judge for f in fits] == ["A", "B"]
    for f in fits:
        for m in f.models:
            assert m.controlled.ci_low <= m.controlled.value <= m.controlled.ci_high
            assert 0 <= m.longest_rule <= 1 and 0 <= m.agreement_with_rule <= 1
    tables = {t.name: t for t in length_tables(results, n_boot=50)}
    # novelty's win and narrowness's, each fitted apart
    assert set(tables) == {"length_controlled_comparative", "length_controlled_comparative_source_bound_score"}
    assert "source-boundedness" in tables["length_controlled_comparative_source_bound_score"].caption
    table = tables["length_controlled_comparative"]
    assert {"length-controlled win % [95% CI]", "longest-of-five rule win %"} <= set(table.display.columns)
    assert "A: phi" in table.caption and "B: phi" in table.caption


def test_narrowness_is_controlled_on_its_own_win():
    # instance 0: the author-anchored RQ source-bound 3 on every paper, every model RQ 0 (broader): a win;
    # instance 1: the reverse, a loss. Non-obviousness is left as the synthetic results have it.
    r = make_results("m", judge="A", setting="standalone", n_instances=2, seed=3)
    for inst, (gt_v, model_v) in zip(r.instances, ((3, 0), (0, 3))):
        for c in inst.candidates:
            v = gt_v if c.candidate_id == "gt" else model_v
            scope = SOURCE_BOUND_SCOPES[v]
            c.narrowness = {
                k: n.model_copy(update={"source_bound_score": v, "source_bound_scope": scope})
                for k, n in c.narrowness.items()
            }
    d = length_data(r, metric="win_source_bound_score")
    assert d.win == [1.0, 0.0]
    (f,) = judge_length([r], "standalone", metric="win_source_bound_score", n_boot=20)
    assert f.metric == "win_source_bound_score" and f.models[0].raw.value == 0.5


_FITS_AS_JSON = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_golden_scores import _results  # the golden run's results: varied lengths, holes, several judges
from rqbench.evaluate.report.length_control import judge_length
fits = [f for s in ("standalone", "comparative") for f in judge_length(_results(), s, n_boot=100)]
print(json.dumps([f.model_dump(mode="json") for f in fits]))
"""


def test_the_fitted_figures_are_the_same_whichever_simd_kernels_numpy_and_openblas_pick():
    """The report's CSV prints every digit: a fit that moved with the CPU's vector width (AVX-512 here, AVX2 on another
    machine) would change a published table from one machine to the next. Only a CPU with AVX-512 has two kernel
    sets to compare."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from numpy._core._multiarray_umath import __cpu_features__

    if not __cpu_features__.get("AVX512F"):
        pytest.skip("this CPU has no AVX-512: numpy runs one kernel set, there is nothing to compare")

    def run(**env: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", _FITS_AS_JSON, str(Path(__file__).parent)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    assert run() == run(NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR", OPENBLAS_CORETYPE="Haswell")
