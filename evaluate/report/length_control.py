"""Length-controlled win rates: what a model's win rate against the author-anchored RQ would be if its RQs were as long
as the author-anchored one, and how much each judge prefers length.

LLM judges favour longer answers (alpaca_eval's length-controlled win rate, Dubois et al., 2024, is the usual
correction); a longer RQ also says more, so a judge can mistake detail for novelty. For each judge and setting this
module fits one logistic regression over every model it judged, on the instances each model has RQs for:

    P(win on instance i of model m) = sigmoid(theta_m + phi * tanh(d_i / s))

where win is a Pass@5 win (the best of five beats the author-anchored RQ): on non-obviousness (novelty's headline) and
on source-boundedness (narrowness's: a best RQ less narrow than the author-anchored one), each fitted apart. d_i is the mean word
count of the model's RQs on instance i minus the author-anchored RQ's, and s is the standard deviation of d over
the judge's instances (so phi is on one scale per judge). phi is the judge's length preference, shared by the models;
theta_m is the model's own strength. The **length-controlled win rate** is the win rate predicted at d = 0,
sigmoid(theta_m), on the instances with RQs; an instance with no valid generation keeps its raw value (a loss under
the paper's accounting), as in the raw figure. A small L2 penalty keeps a model that wins everything finite. Its
95% interval is a cluster bootstrap over source papers (theta_m refitted with phi held at its fit).

Two baselines show what length alone explains: the **longest-of-five rule** wins an instance when the longest of the
model's RQs has more words than the author-anchored RQ (its win rate is what a judge that only counted words would
give), and each judge's **agreement with that rule** (the share of instances its verdict matches).

Pure functions on results files; ``rqbench report`` writes the tables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field
from scipy.optimize import minimize

from rqbench.evaluate.benchmark.trial import one_run_each
from rqbench.evaluate.criteria import METRICS, SETTINGS, headline_figure
from rqbench.evaluate.metrics.bootstrap import DEFAULT_LEVEL, Estimate, cluster_bootstrap_mean, cluster_weights
from rqbench.evaluate.metrics.metric import ScoreOptions, split_candidates
from rqbench.evaluate.metrics.score_table import score_table
from rqbench.evaluate.report.table import Table, fmt_pct
from rqbench.records import ResultsFile

LENGTH_METRIC = headline_figure("novelty", "win")
# The figures controlled for length: novelty's headline win and narrowness's.
LENGTH_METRICS: tuple[str, ...] = (LENGTH_METRIC, headline_figure("narrowness", "win"))
# The L2 penalty on theta and phi: enough to keep a model that wins (or loses) every instance finite, far below what
# a few dozen instances say.
RIDGE = 0.01
LC_BOOT = 1000
# Decimals kept of every fitted figure. Floating-point sums differ in their last bits between CPUs (numpy and OpenBLAS
# pick AVX-512 kernels where the CPU has them); the fit is solved far tighter than this and no table prints more, so
# rounding here makes a report the same on every machine without moving any printed digit.
FIT_DECIMALS = 9


def words(text: str) -> int:
    return len(text.split())


class LengthData(BaseModel):
    """One results file's instances, as the fit reads them (one entry per instance the judge scored)."""

    model: str
    submission_model: str = Field(default="", description="The submission's model name (``model`` adds the variant).")
    prompt_variant: str = "original"
    win: list[float] = Field(description="The raw per-instance win (0/1).")
    generated: list[bool] = Field(description="The model gave RQs (else the instance is a loss and has no length).")
    delta: list[float] = Field(description="Mean words of the model's RQs minus the author-anchored RQ's; 0 if none.")
    longest_longer: list[bool] = Field(description="The longest of the model's RQs has more words than the GT.")
    papers: list[str]


class LengthControlled(BaseModel):
    model: str
    submission_model: str = ""
    prompt_variant: str = "original"
    raw: Estimate
    controlled: Estimate
    longest_rule: float = Field(description="Win rate of the longest-of-five rule.")
    agreement_with_rule: float = Field(description="Share of instances where the judge's verdict matches the rule.")
    mean_delta_words: float


class JudgeLength(BaseModel):
    judge: str
    setting: str
    metric: str = Field(default=LENGTH_METRIC, description="The win whose rate is controlled (criteria.METRICS).")
    phi: float = Field(description="The judge's length preference (log-odds per unit of tanh(d / s)).")
    scale_words: float = Field(description="s: the standard deviation of the word difference (1 where it is 0).")
    measurable: bool = Field(description="The word difference varies, so a preference can be measured.")
    shift_at_one_sd: float = Field(
        description="Change in win probability, at the judge's mean win rate, when the model's RQs are s words longer."
    )
    models: list[LengthControlled]


def length_data(r: ResultsFile, opts: ScoreOptions = ScoreOptions(), metric: str = LENGTH_METRIC) -> LengthData:
    table = score_table(r, opts)
    win = table.values(METRICS[metric], np.arange(len(table)))
    by_id = {inst.rq_id: inst for inst in r.instances}  # the last of a repeated rq_id, as the table keeps
    name = (
        r.submission.model
        if r.submission.prompt_variant == "original"
        else (f"{r.submission.model} ({r.submission.prompt_variant})")
    )
    out = LengthData(
        model=name,
        submission_model=r.submission.model,
        prompt_variant=r.submission.prompt_variant,
        win=[],
        generated=[],
        delta=[],
        longest_longer=[],
        papers=[],
    )
    for rq, w, paper in zip(table.rq_ids, win, table.arxiv_ids):
        if np.isnan(w):
            continue
        gt, model = split_candidates(by_id[rq])
        lengths = [words(c.text) for c in model]
        out.win.append(float(w))
        out.generated.append(bool(lengths))
        out.delta.append(float(np.mean(lengths)) - words(gt.text) if lengths else 0.0)
        out.longest_longer.append(bool(lengths) and max(lengths) > words(gt.text))
        out.papers.append(paper)
    return out


def _varies(data: Sequence[LengthData]) -> bool:
    deltas = [x for d in data for x, g in zip(d.delta, d.generated) if g]
    return len(deltas) > 1 and float(np.std(deltas)) > 0


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def fit(data: Sequence[LengthData]) -> tuple[float, list[float], float]:
    """(phi, theta per model, s) by penalised maximum likelihood over the instances with RQs.

    Where the word difference never varies, no length preference can be told from the models' strength: phi is 0
    and s is 1 (``varies`` below), and the controlled rate is the raw one up to the penalty."""
    deltas = np.concatenate([np.asarray(d.delta)[np.asarray(d.generated, dtype=bool)] for d in data])
    varies = _varies(data)
    s = round(float(np.std(deltas)), FIT_DECIMALS) if varies else 1.0
    xs, ys, owner = [], [], []
    for m, d in enumerate(data):
        g = np.asarray(d.generated, dtype=bool)
        xs.append(np.tanh(np.asarray(d.delta)[g] / s))
        ys.append(np.asarray(d.win)[g])
        owner.append(np.full(int(g.sum()), m))
    x, y, who = np.concatenate(xs), np.concatenate(ys), np.concatenate(owner).astype(int)
    n_models = len(data)

    def loss(p: np.ndarray) -> tuple[float, np.ndarray]:
        phi, thetas = p[0], p[1:]
        z = thetas[who] + phi * x
        r = y - _sigmoid(z)  # the residual of each instance, all models at once
        total = -float(np.sum(y * z - np.logaddexp(0.0, z))) + RIDGE * float(p @ p) / 2
        grad = np.empty_like(p)
        grad[0] = -float(np.sum(r * x))
        grad[1:] = -np.bincount(who, weights=r, minlength=n_models)
        grad += RIDGE * p
        if not varies:  # one length difference throughout: phi and theta are one parameter; phi stays 0
            grad[0] = 0.0
        return total, grad

    # solved to a gradient far below FIT_DECIMALS, so the rounded phi is the optimum's and not where the search stopped
    res = minimize(loss, np.zeros(1 + len(data)), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
    return round(float(res.x[0]), FIT_DECIMALS), [round(float(t), FIT_DECIMALS) for t in res.x[1:]], s


def controlled_rates(d: LengthData, weights: np.ndarray, phi: float, s: float) -> np.ndarray:
    """The length-controlled win rate under each row of instance ``weights`` (replicates x instances; a row of ones is
    the point estimate): theta refitted by Newton's method with phi held, all rows at once."""
    g = np.asarray(d.generated, dtype=bool)
    win = np.asarray(d.win)
    w = np.atleast_2d(weights).astype(float)
    wg, y, x = w[:, g], win[g], np.tanh(np.asarray(d.delta)[g] / s)
    theta = np.zeros(len(w))
    for _ in range(100):
        q = _sigmoid(theta[:, None] + phi * x[None, :])
        step = ((wg * (y - q)).sum(axis=1) - RIDGE * theta) / ((wg * q * (1 - q)).sum(axis=1) + RIDGE)
        theta += step
        if np.max(np.abs(step), initial=0.0) < 1e-10:
            break
    total = w.sum(axis=1)
    kept = (w[:, ~g] * win[~g]).sum(axis=1)  # no generation: the raw value (a loss under the paper's accounting)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (wg.sum(axis=1) * _sigmoid(theta) + kept) / total


def _controlled(d: LengthData, phi: float, s: float, n_boot: int, seed: int) -> Estimate:
    point = float(controlled_rates(d, np.ones(len(d.win)), phi, s)[0])
    reps = controlled_rates(d, cluster_weights(d.papers, n_boot, seed), phi, s)
    reps = reps[~np.isnan(reps)]
    lo, hi = np.quantile(reps, [(1 - DEFAULT_LEVEL) / 2, (1 + DEFAULT_LEVEL) / 2]) if len(reps) else (point, point)
    return Estimate(
        value=round(point, FIT_DECIMALS),
        ci_low=round(float(min(lo, point)), FIT_DECIMALS),
        ci_high=round(float(max(hi, point)), FIT_DECIMALS),
        n=len(d.win),
        n_clusters=len(set(d.papers)),
    )


def judge_length(
    results: Sequence[ResultsFile], setting: str, *, metric: str = LENGTH_METRIC, n_boot: int = LC_BOOT, seed: int = 0
) -> list[JudgeLength]:
    """Per judge of ``setting``: its length preference and each model's length-controlled rate of ``metric``."""
    by_judge: dict[str, list[ResultsFile]] = defaultdict(list)
    for r in one_run_each(results):
        if r.judge.setting == setting and r.trial is None:
            by_judge[r.judge.label].append(r)
    out = []
    for judge, files in sorted(by_judge.items()):
        ordered = sorted(files, key=lambda r: r.submission_hash)
        data = [d for d in (length_data(r, metric=metric) for r in ordered) if d.win]
        if not data or not any(any(d.generated) for d in data):
            continue
        phi, thetas, s = fit(data)
        rows = []
        for d in data:
            win = np.asarray(d.win)
            raw = cluster_bootstrap_mean(d.win, d.papers, n_boot=n_boot, seed=seed)
            lc = _controlled(d, phi, s, n_boot, seed)
            rule = np.asarray(d.longest_longer, dtype=float)
            rows.append(
                LengthControlled(
                    model=d.model,
                    submission_model=d.submission_model,
                    prompt_variant=d.prompt_variant,
                    raw=raw,
                    controlled=lc,
                    longest_rule=float(rule.mean()),
                    agreement_with_rule=float((rule == win).mean()),
                    mean_delta_words=float(np.mean([x for x, g in zip(d.delta, d.generated) if g] or [0.0])),
                )
            )
        mean_win = float(np.mean(np.concatenate([np.asarray(d.win) for d in data])))
        base = np.log(max(mean_win, 1e-6) / max(1 - mean_win, 1e-6))
        shift = round(float(_sigmoid(base + phi * np.tanh(1.0)) - _sigmoid(base)), FIT_DECIMALS)
        out.append(
            JudgeLength(
                judge=judge,
                setting=setting,
                metric=metric,
                phi=phi,
                scale_words=s,
                measurable=_varies(data),
                shift_at_one_sd=shift,
                models=rows,
            )
        )
    return out


# (submission model, prompt variant, setting, judge label) -> controlled figure (``LENGTH_METRICS``) -> its fit
RowKey = tuple[str, str, str, str]


def length_by_row(
    results: Sequence[ResultsFile], *, n_boot: int = LC_BOOT, seed: int = 0
) -> dict[RowKey, dict[str, tuple[JudgeLength, LengthControlled]]]:
    """Every (model, variant, setting, judge)'s length-controlled figures, each with its judge's fit: what the
    leaderboard's length-control columns show. One fit per judge, setting and figure, as in the report."""
    out: dict[RowKey, dict[str, tuple[JudgeLength, LengthControlled]]] = defaultdict(dict)
    for setting in SETTINGS:
        for metric in LENGTH_METRICS:
            for fit_ in judge_length(results, setting, metric=metric, n_boot=n_boot, seed=seed):
                for m in fit_.models:
                    out[(m.submission_model, m.prompt_variant, setting, fit_.judge)][metric] = (fit_, m)
    return dict(out)


# --------------------------------------------------------------------------
# Report tables (formatting only)
# --------------------------------------------------------------------------


def length_table_name(setting: str, metric: str) -> str:
    """``length_controlled_<setting>`` for novelty's headline win, ``..._<dimension>`` for another."""
    base = f"length_controlled_{setting}"
    return base if metric == LENGTH_METRIC else f"{base}_{METRICS[metric].dimension}"


def length_tables(results: Sequence[ResultsFile], *, n_boot: int = LC_BOOT, seed: int = 0) -> list[Table]:
    """Per setting and controlled figure: each model's raw and length-controlled win rate per judge, and each judge's
    length preference."""
    return [
        t
        for setting in SETTINGS
        for metric in LENGTH_METRICS
        if (t := _length_table(results, setting, metric, n_boot, seed))
    ]


def _length_table(results: Sequence[ResultsFile], setting: str, metric: str, n_boot: int, seed: int) -> Table | None:
    label = METRICS[metric].label
    fits = judge_length(results, setting, metric=metric, n_boot=n_boot, seed=seed)
    if not fits:
        return None
    rows, data = [], []
    for f in fits:
        for m in f.models:
            rows.append(
                {
                    "model": m.model,
                    "judge": f.judge,
                    "win % [95% CI]": fmt_pct(m.raw),
                    "length-controlled win % [95% CI]": fmt_pct(m.controlled),
                    "longest-of-five rule win %": f"{100 * m.longest_rule:.1f}",
                    "judge agrees with the rule %": f"{100 * m.agreement_with_rule:.1f}",
                    "mean word difference": f"{m.mean_delta_words:+.1f}",
                }
            )
            for name, est in (("raw", m.raw), ("length_controlled", m.controlled)):
                data.append(
                    {"model": m.model, "judge": f.judge, "figure": name, "value": est.value}
                    | {"ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n}
                )
            data.append({"model": m.model, "judge": f.judge, "figure": "longest_rule", "value": m.longest_rule})
    prefs = "; ".join(
        f"{f.judge}: phi {f.phi:+.2f}, {100 * f.shift_at_one_sd:+.1f} points of win rate for RQs "
        f"{f.scale_words:.1f} words longer"
        if f.measurable
        else f"{f.judge}: not measurable (the word difference never varies)"
        for f in fits
    )
    return Table(
        length_table_name(setting, metric),
        f"{setting.capitalize()} {label}, raw and length-controlled (the win rate predicted if the model's RQs "
        f"were as long as the author-anchored RQ), beside what the longest-of-five rule would give and how "
        f"often the judge's verdict matches it. Length preference per judge: {prefs}.",
        "not in the paper (length control, docs/metrics.md)",
        pd.DataFrame(rows).set_index(["model", "judge"]),
        pd.DataFrame(data),
    )
