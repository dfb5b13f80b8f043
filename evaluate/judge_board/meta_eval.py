"""The judge meta-evaluation table: how far each LLM judge can be trusted, from its own results.

Per judge (label and setting, over every submission it judged): how often its
replies failed, how often it broke the hierarchical relevance rule, whether its
comparative scores survive reshuffling the candidates (``--orderings``), how
often it agrees with the other judges, whether it prefers longer RQs, whether
it judges a generator of its own family (self-preference risk), and what it
cost. All figures are computed from stored results; nothing is re-asked.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from rqbench.evaluate.criteria import CRITERIA, METRICS, headline
from rqbench.evaluate.metrics import outcomes
from rqbench.evaluate.metrics.bootstrap import Estimate, cluster_bootstrap, cluster_bootstrap_mean
from rqbench.evaluate.metrics.metric import ScoreOptions, Verdict, split_candidates
from rqbench.evaluate.metrics.score_table import score_table
from rqbench.records import InstanceResult, ResultsFile, Rule, parse_rq_id, rule_of

META_BOOT = 500

# Leading name token -> vendor family; an unknown token is its own family.
_FAMILIES = {
    "gemini": "google",
    "gemma": "google",
    "palm": "google",
    "gpt": "openai",
    "o1": "openai",
    "o3": "openai",
    "o4": "openai",
    "chatgpt": "openai",
    "claude": "anthropic",
    "deepseek": "deepseek",
    "qwen": "alibaba",
    "qwq": "alibaba",
    "llama": "meta",
    "mistral": "mistral",
    "mixtral": "mistral",
    "smollm": "huggingface",
    "phi": "microsoft",
    "grok": "xai",
    "kimi": "moonshot",
    "glm": "zhipu",
}


def model_family(model: str) -> str:
    """The vendor family of a model name (provider prefix and version stripped)."""
    base = model.strip().lower().split("/")[-1]
    m = re.match(r"[a-z]+\d?(?=[\-_.:]|$)|[a-z]+", base)
    token = m.group(0) if m else base
    for key in (token, re.sub(r"\d+$", "", token)):
        if key in _FAMILIES:
            return _FAMILIES[key]
    return re.sub(r"\d+$", "", token) or base


class MetaEvalRow(BaseModel):
    """One judge configuration, over every submission it judged in one setting."""

    judge: str
    judge_model: str
    setting: str
    submissions: int
    instances: int
    failed_reply_rate: Estimate | None = Field(
        description="Raw replies that errored or came back empty; None if no raw replies were kept."
    )
    unscored_rate: Estimate | None = Field(description="Candidates left without a novelty score.")
    relevance_rule_violation_rate: Estimate | None = Field(
        description="Novelty scores where relevance was 0 but another dimension was not (set to 0 by the rule)."
    )
    rule_corrections_per_instance: float
    rule_applications: dict[str, int] = Field(
        default_factory=dict,
        description="Applications of the paper's rules, by rule (relevance_zero, covering_subset).",
    )
    invalid_replies: int = Field(default=0, description="Calls whose reply was still invalid after its re-ask.")
    orderings: int
    position_score_consistency: Estimate | None = Field(
        description="Candidates whose four novelty scores are identical under every ordering (K >= 2 only)."
    )
    position_top_consistency: Estimate | None = Field(
        description="Instances where the same candidate ranks first under every ordering (K >= 2 only)."
    )
    agreement_with_judges: Estimate | None = Field(
        description="Share of (other judge, shared instance) comparisons in which the other judge of the same "
        "setting gives the same non-obviousness verdict on the same submission, clustered by paper."
    )
    agreement_by_judge: dict[str, Estimate] = Field(
        default_factory=dict, description="The same share with each other judge alone."
    )
    length_preference: Estimate | None = Field(
        description="Spearman correlation of an RQ's word count with its novelty total (positive = longer scores higher)."
    )
    self_preference_flag: bool
    same_family_submissions: list[str] = Field(default_factory=list)
    win_rate_same_family: float | None = None
    win_rate_other_families: float | None = None
    cost_usd: float
    seconds: float
    calls: int
    cache_hits: int
    tokens_in: int
    tokens_out: int
    cost_per_instance: float | None


def _est(values: Sequence[float], clusters: Sequence[str]) -> Estimate | None:
    return cluster_bootstrap_mean(values, clusters, n_boot=META_BOOT, seed=0)


def _nonobv_verdicts(r: ResultsFile, opts: ScoreOptions) -> dict[str, Verdict]:
    """Per instance, the Pass@5 non-obviousness verdict, from the win/tie/lose metrics' own functions."""
    t = score_table(r, opts)
    gt, model = t.gt[headline("novelty")], t.model[headline("novelty")]
    hits = {v: METRICS[f"{v.value}_non_obviousness"].fn(gt, model) for v in Verdict}
    out = {}
    for i, rq_id in enumerate(t.rq_ids):
        v = next((v for v, hit in hits.items() if hit[i] == 1.0), None)
        if v is not None:
            out[rq_id] = v
    return out


def _paper_of_item(item: tuple[str, str, str]) -> str:
    """The paper of an (other judge, submission, rq_id) comparison: what the agreement's bootstrap resamples."""
    return parse_rq_id(item[2])[0]


def _position(inst: InstanceResult) -> tuple[list[float], float | None]:
    """Per-candidate score consistency and top-candidate consistency under K orderings."""
    same_scores = []
    for c in inst.candidates:
        runs = c.novelty_by_ordering
        if len(runs) >= 2:
            keys = {tuple(getattr(s, d.name) for d in CRITERIA["novelty"].dimensions) for s in runs}
            same_scores.append(float(len(keys) == 1))
    k = min((len(c.rank_by_ordering) for c in inst.candidates), default=0)
    top = None
    if k >= 2:
        firsts = set()
        for j in range(k):
            ranked = min(inst.candidates, key=lambda c: c.rank_by_ordering[j])
            firsts.add(ranked.candidate_id)
        top = float(len(firsts) == 1)
    return same_scores, top


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3:
        return float("nan")
    rx = pd.Series(x).rank().to_numpy()
    ry = pd.Series(y).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def meta_evaluate(results: Sequence[ResultsFile], options: ScoreOptions = ScoreOptions()) -> list[MetaEvalRow]:
    """One row per (judge label, setting), sorted by setting then label."""
    by_judge: dict[tuple[str, str], list[ResultsFile]] = defaultdict(list)
    for r in results:
        by_judge[(r.judge.label, r.judge.setting)].append(r)
    verdicts = {(r.judge.label, r.judge.setting, r.submission_hash): _nonobv_verdicts(r, options) for r in results}
    rows = []
    for (label, setting), files in sorted(by_judge.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        failed, failed_cl = [], []
        unscored, unscored_cl = [], []
        violations, violation_cl = [], []
        same, same_cl, top, top_cl = [], [], [], []
        lengths, totals, length_cl = [], [], []
        corrections = 0
        rules: Counter[str] = Counter()
        invalid = 0
        n_inst = 0
        for f in files:
            for inst in f.instances:
                n_inst += 1
                corrections += inst.rule_corrections
                rules.update(inst.rule_applications)
                for raw in inst.raw_replies:
                    failed.append(float(raw.error is not None or raw.text is None))
                    failed_cl.append(inst.arxiv_id)
                    invalid += (raw.error or "").startswith("invalid_reply")
                split_candidates(inst)
                for c in inst.candidates:
                    scored = c.novelty is not None or bool(c.novelty_by_ordering)
                    unscored.append(float(not scored))
                    unscored_cl.append(inst.arxiv_id)
                    # the judge's own replies: per-ordering scores when kept, else the one score
                    replies = list(c.novelty_by_ordering) or ([c.novelty] if c.novelty is not None else [])
                    for s in replies:
                        violations.append(float(any(rule_of(fix) == Rule.relevance_zero for fix in s.rule_corrections)))
                        violation_cl.append(inst.arxiv_id)
                    if c.novelty is not None:
                        lengths.append(len(c.text.split()))
                        totals.append(c.novelty.total)
                        length_cl.append(inst.arxiv_id)
                s, t = _position(inst)
                same += s
                same_cl += [inst.arxiv_id] * len(s)
                if t is not None:
                    top.append(t)
                    top_cl.append(inst.arxiv_id)
        x, y = np.asarray(lengths, float), np.asarray(totals, float)
        length_pref = (
            cluster_bootstrap(lambda idx, x=x, y=y: _spearman(x[idx], y[idx]), length_cl, n_boot=200, seed=0)
            if len(lengths) >= 3
            else None
        )
        if length_pref is not None and length_pref.value != length_pref.value:
            length_pref = None

        # agreement with the other judges on the same submissions and setting: one item per (other judge,
        # submission, instance), each clustered by its paper (evaluate/metrics/outcomes.py: the one agreement figure)
        mine_items: dict[tuple[str, str, str], Verdict] = {}
        theirs_items: dict[tuple[str, str, str], Verdict] = {}
        for f in files:
            mine = verdicts[(label, setting, f.submission_hash)]
            for (other, s2, h), theirs in sorted(verdicts.items()):
                if other == label or s2 != setting or h != f.submission_hash:
                    continue
                for k in mine:
                    if k in theirs:
                        mine_items[(other, h, k)], theirs_items[(other, h, k)] = mine[k], theirs[k]
        agreement_by = {
            other: outcomes.agreement(
                {k: v for k, v in mine_items.items() if k[0] == other},
                theirs_items,
                cluster_of=_paper_of_item,
                n_boot=META_BOOT,
            )
            for other in sorted({k[0] for k in mine_items})
        }
        pooled = outcomes.agreement(mine_items, theirs_items, cluster_of=_paper_of_item, n_boot=META_BOOT)

        fam = model_family(files[0].judge.model)
        same_family = sorted({f.submission.model for f in files if model_family(f.submission.model) == fam})
        wins_same = [
            float(v is Verdict.win)
            for f in files
            if f.submission.model in same_family
            for v in verdicts[(label, setting, f.submission_hash)].values()
        ]
        wins_other = [
            float(v is Verdict.win)
            for f in files
            if f.submission.model not in same_family
            for v in verdicts[(label, setting, f.submission_hash)].values()
        ]
        cost = sum(f.totals.cost_usd for f in files)
        rows.append(
            MetaEvalRow(
                judge=label,
                judge_model=files[0].judge.model,
                setting=setting,
                submissions=len(files),
                instances=n_inst,
                failed_reply_rate=_est(failed, failed_cl),
                unscored_rate=_est(unscored, unscored_cl),
                relevance_rule_violation_rate=_est(violations, violation_cl),
                rule_corrections_per_instance=corrections / n_inst if n_inst else 0.0,
                rule_applications=dict(sorted(rules.items())),
                invalid_replies=invalid,
                orderings=max(f.judge.orderings for f in files),
                position_score_consistency=_est(same, same_cl),
                position_top_consistency=_est(top, top_cl),
                agreement_with_judges=pooled,
                agreement_by_judge={o: e for o, e in agreement_by.items() if e is not None},
                length_preference=length_pref,
                self_preference_flag=bool(same_family),
                same_family_submissions=same_family,
                win_rate_same_family=float(np.mean(wins_same)) if wins_same else None,
                win_rate_other_families=float(np.mean(wins_other)) if wins_other else None,
                cost_usd=cost,
                seconds=sum(f.totals.seconds for f in files),
                calls=sum(f.totals.calls for f in files),
                cache_hits=sum(f.totals.cache_hits for f in files),
                tokens_in=sum(f.totals.tokens_in for f in files),
                tokens_out=sum(f.totals.tokens_out for f in files),
                cost_per_instance=cost / n_inst if n_inst else None,
            )
        )
    return rows
