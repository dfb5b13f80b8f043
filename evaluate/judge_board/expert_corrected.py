"""Expert-corrected win rates: a judge's figure rectified with the expert labels, by prediction-powered inference.

An LLM judge picks on every instance; experts pick on a few. The judge's raw win
rate is precise but biased (the paper's "novelty mirage"); the experts' rate is
what we want but rests on few labels. Prediction-powered inference (PPI;
Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered
inference", Science 382, 2023) keeps the judge's precision and removes its
bias by adding the mean expert-minus-judge difference on the labelled instances:

    theta_PP = mean_{i in N} f_i + mean_{j in n} (Y_j - f_j)
    se^2     = lam^2 s_f^2 / (N - n) + s_r^2 / n,   lam = (N - n) / N,   r_j = Y_j - lam f_j
    95% CI   = theta_PP +- z_0.975 * se

``f_i`` is the judge's win indicator on instance i (1 when it picked the model's
RQ over the author-anchored one), over the N instances it scored; ``Y_j`` is the
experts' win indicator on a labelled instance, ``d_j = Y_j - f_j`` the rectifier
over the n labelled instances the judge also scored. A tie is not a win, for the
judge and the experts alike, as in the Pass@5 win rate (``metrics.Verdict``).
Two or more experts on one instance give the mean of their indicators (two who
disagree give 0.5), so an instance counts once however many labelled it.

The labelled instances are among the N the judge scored, so the estimate is
mean_n(Y) + lam (mean_u(f) - mean_n(f)) over the disjoint unlabelled (u) and
labelled sets, whose variance is the se^2 above (``_variance``): PPI's
s_f^2 / N + s_d^2 / n when the labels are few among many, and the experts' own
s_Y^2 / n when every instance is labelled (adding the two terms as if the sets
were independent would count the labelled instances' judge picks twice).
The variances are sample variances (denominator count - 1) and the interval is
the normal one, neither clipped to [0, 1]: an interval past 0 or 100% says the
labels are too few to pin the figure. Under ``MIN_EXPERT_LABELS`` labelled
instances no corrected figure is given.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from rqbench.evaluate.criteria import headline, headline_figure
from rqbench.evaluate.judge_board.agreement import Annotation, Winner, pin_to_shown
from rqbench.evaluate.metrics.metric import ScoreOptions
from rqbench.records import ResultsFile

# The normal interval rests on the rectifier's sample variance; on values in {-1, -0.5, 0, 0.5, 1} fewer than ten
# labelled instances give a variance (and so an interval) that swings with a single label. Ten is a rule of thumb,
# not a theorem: the paper's printed expert study (A.6, ten samples) just clears it, a first few annotations do not.
MIN_EXPERT_LABELS = 10
TOO_FEW_LABELS = "too few labels"  # what the board and the report say in place of a figure below the threshold
LEVEL = 0.95
WIN: Winner = "model"  # the pick that counts as the model's win against the author-anchored RQ
METHOD = (
    "prediction-powered inference (Angelopoulos et al., 2023): the judge's win rate over every instance it scored "
    "plus the mean expert-minus-judge difference over the expert-labelled ones; 95% normal interval with "
    "se^2 = lam^2 s_judge^2/(N - n) + s_r^2/n with lam = (N - n)/N and r = expert - lam * judge (the labelled "
    "instances are among the N; sample variances, n - 1 denominator); a tie is not a win; two experts "
    "on one instance count as the mean of their indicators"
)


class ExpertCorrectedRate(BaseModel):
    """One judge's raw win rate and its expert-corrected value, each with a 95% normal interval."""

    judge_rate: float | None = Field(description="The judge's win rate over the N instances it scored (raw).")
    judge_ci_low: float | None = None
    judge_ci_high: float | None = None
    judge_std_error: float | None = Field(default=None, description="sqrt(s_f^2 / N), the raw rate's standard error.")
    judged: int = Field(description="N: the instances the judge scored.")
    labelled: int = Field(description="n: expert-labelled instances the judge scored (the rectifier's instances).")
    labels: int = Field(description="The expert picks behind those n instances.")
    labelled_unjudged: int = Field(
        default=0, description="Expert-labelled instances the judge did not score: no pick to correct, left out."
    )
    rectifier: float | None = Field(default=None, description="Mean expert-minus-judge win indicator over n.")
    value: float | None = Field(default=None, description="theta_PP; None when too few labels.")
    ci_low: float | None = None
    ci_high: float | None = None
    std_error: float | None = None
    min_labels: int = MIN_EXPERT_LABELS

    @property
    def too_few_labels(self) -> bool:
        return self.labelled < self.min_labels


def _win(pick: str) -> float:
    return float(pick == WIN)


def _normal_interval(mean: float, variance_of_mean: float, level: float) -> tuple[float, float, float]:
    se = float(np.sqrt(variance_of_mean))
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2)
    return mean - z * se, mean + z * se, se


def _variance(f: np.ndarray, y: np.ndarray, f_labelled: np.ndarray) -> float:
    """The variance of theta_PP when the n labelled instances are among the judge's N (the module's docstring).

    ``f``: the judge's indicators on all N; ``y`` and ``f_labelled``: the experts' and the judge's on the n labelled.
    theta_PP = mean_n(Y) + lam * (mean_u(f) - mean_n(f)) with lam = (N - n) / N and u the N - n unlabelled
    instances; the two means are over disjoint instances, so the variance is lam^2 Var(f) / (N - n) +
    Var(Y - lam f) / n, Var(f) estimated over all N. With every instance labelled it is the experts' own
    Var(Y) / n; with few labels among many it is PPI's Var(f) / N + Var(Y - f) / n."""
    big_n, n = len(f), len(y)
    lam = (big_n - n) / big_n
    judge_term = (big_n - n) * float(f.var(ddof=1)) / big_n**2 if big_n > 1 else 0.0
    return judge_term + float((y - lam * f_labelled).var(ddof=1)) / n


def expert_corrected_win_rate(
    judge_picks: Mapping[str, Winner],
    expert_picks: Mapping[str, Mapping[str, Winner]],
    *,
    min_labels: int = MIN_EXPERT_LABELS,
    level: float = LEVEL,
) -> ExpertCorrectedRate:
    """The PPI win rate of one judge on one submission (the module's docstring has the formula).

    ``judge_picks``: instance -> the judge's pick, for every instance it scored. ``expert_picks``: instance ->
    {expert: pick}, for the instances experts labelled (an instance with no pick counts as unlabelled).
    """
    if min_labels < 2:
        raise ValueError(f"min_labels must be at least 2 (a sample variance needs two values), got {min_labels}")
    f = np.array([_win(p) for p in judge_picks.values()])
    labelled = [k for k, picks in expert_picks.items() if picks and k in judge_picks]
    unjudged = sum(1 for k, picks in expert_picks.items() if picks and k not in judge_picks)
    counts = {
        "judged": len(f),
        "labelled": len(labelled),
        "labels": sum(len(expert_picks[k]) for k in labelled),
        "labelled_unjudged": unjudged,
        "min_labels": min_labels,
    }
    if len(f) == 0:
        return ExpertCorrectedRate(judge_rate=None, **counts)
    rate = float(f.mean())
    raw_ci = _normal_interval(rate, float(f.var(ddof=1)) / len(f), level) if len(f) > 1 else (None, None, None)
    raw = {"judge_rate": rate, "judge_ci_low": raw_ci[0], "judge_ci_high": raw_ci[1], "judge_std_error": raw_ci[2]}
    if len(labelled) < min_labels:
        return ExpertCorrectedRate(**raw, **counts)
    y = np.array([np.mean([_win(p) for p in expert_picks[k].values()]) for k in labelled])
    f_labelled = np.array([_win(judge_picks[k]) for k in labelled])
    rectifier = float((y - f_labelled).mean())
    value = rate + rectifier
    low, high, se = _normal_interval(value, _variance(f, y, f_labelled), level)
    return ExpertCorrectedRate(
        **raw, **counts, rectifier=rectifier, value=value, ci_low=low, ci_high=high, std_error=se
    )


# --------------------------------------------------------------------------
# Picks from stored results (in memory; no I/O)
# --------------------------------------------------------------------------


def judge_instance_picks(results: ResultsFile, options: ScoreOptions = ScoreOptions()) -> dict[str, Winner]:
    """One judge's Pass@5 non-obviousness pick per instance it scored: the per-instance values of the
    ``win_non_obviousness`` and ``tie_non_obviousness`` figures (``summary.instance_values``), so the mean of the
    win indicators is the results' raw win rate, failures counted as they are there."""
    from rqbench.evaluate.metrics.summary import instance_values

    def per_instance(metric: str) -> dict[str, float]:
        out = instance_values([results], metric, setting=results.judge.setting, options=options)
        return out[results.submission_hash][1] if out else {}

    wins, ties = per_instance(headline_figure("novelty", "win")), per_instance(headline_figure("novelty", "tie"))
    return {rq: WIN if won else ("tie" if ties.get(rq) else "gt") for rq, won in wins.items()}


def expert_picks_by_instance(annotations: Iterable[Annotation]) -> dict[str, dict[str, Winner]]:
    """Human non-obviousness picks as instance -> {expert: pick}; an expert who picked twice counts with the last."""
    out: dict[str, dict[str, Winner]] = {}
    for a in annotations:
        if a.group == "human" and a.dimension == headline("novelty"):
            out.setdefault(a.rq_id, {})[a.evaluator] = a.winner
    return out


def corrected_by_judge(
    annotations: Sequence[Annotation], results: Sequence[ResultsFile], options: ScoreOptions = ScoreOptions()
) -> list[tuple[str, ExpertCorrectedRate]]:
    """Per comparative judge of one submission's ``results``, in label order: its corrected win rate, the human
    annotations pinned to the RQ each annotator saw (``agreement.pin_to_shown``) as the expert labels."""
    experts = expert_picks_by_instance(pin_to_shown(annotations, results, options))
    judged = sorted((r for r in results if r.judge.setting == "comparative"), key=lambda r: r.judge.label)
    return [(r.judge.label, expert_corrected_win_rate(judge_instance_picks(r, options), experts)) for r in judged]
