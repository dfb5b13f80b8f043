"""The paper's appendix A.5 outputs as results files: the hand-checked fixture of the table-content tests.

A.5 prints one judge's scores on two backgrounds (the judge is not named; A.5
hints at gemini-3.1-pro, so the fixture's judge is labelled so):

- DeepSeek-R1 (standalone): the GT's novelty {originality 3, gap 3,
  non-obviousness 2, relevance 1} and narrowness {source-boundedness 1,
  diagnostic 0}; per model its best standalone RQ's novelty, its least-narrow RQ's
  narrowness (the same RQ for every model), and one overlap example per model
  ("Recall"), read here as the model's best overlap.
- Speculative sampling (comparative, gpt-5.5 only): the GT {3, 2, 3} and all five
  RQs' novelty; the GT's narrowness {2, 0} and all five RQs'.

A.5 gives only the best RQ of each model in the standalone panels, so the other
four RQs are filler of ours that can never be the best: novelty (0, 0, 0) at
relevance 1, narrowness (3, 3), overlap 0; the second RQ carries the model's
overlap example's score. The texts are labels, not the paper's
RQs. Every number the tests expect is computed by hand from these scores in
``tests/test_fidelity.py`` (Tables 2, 3, 4, 7, 8, 10).
"""

from __future__ import annotations

from results_factory import cand, instance, results

JUDGE = "gemini/gemini-3.1-pro"
LABEL = "gemini-3.1-pro"
DEEPSEEK_R1 = "2501.12948_rq0"  # an instance id for the DeepSeek-R1 background
SPECULATIVE = "2302.01318_rq0"  # and for the speculative-sampling background

GT_STANDALONE = {"novelty": (3, 3, 2), "narrowness": (1, 0)}
# model -> (best standalone novelty (originality, gap, non-obviousness), its narrowness (sb, dg), overlap example)
STANDALONE = {
    "gemma-4-31b-it": ((3, 3, 2), (1, 1), 2),
    "gpt-5.5": ((3, 3, 2), (1, 1), 4),
    "gemini-3.1-pro": ((2, 3, 2), (2, 3), 1),
    "deepseek-v4-pro": ((2, 3, 1), (3, 1), 1),
    "gpt-oss-20b": ((2, 3, 1), (2, 2), 3),
    "qwen3-30b-a3b-thinking-2507": ((1, 3, 1), (2, 1), 0),
}
GT_COMPARATIVE = {"novelty": (3, 2, 3), "narrowness": (2, 0)}
# gpt-5.5's five RQs on speculative sampling in A.5's novelty rank order, with each one's narrowness (A.5 lists
# narrowness in its own order: the routing RQ (2, 1), the learned policy (2, 1), adaptive K and numerical
# divergence (3, 2), batch sizes (3, 3))
COMPARATIVE_NOVELTY = [(3, 2, 2), (2, 2, 2), (2, 2, 2), (2, 2, 2), (2, 3, 1)]
COMPARATIVE_NARROWNESS = [(2, 1), (3, 2), (3, 2), (2, 1), (3, 3)]
FILLER_NOVELTY, FILLER_NARROWNESS = (0, 0, 0), (3, 3)


def _standalone(model: str, variant: str = "original", best=None):
    novelty, (sb, dg), overlap = best or STANDALONE[model]
    gt = cand(
        "gt",
        GT_STANDALONE["novelty"],
        sb=GT_STANDALONE["narrowness"][0],
        dg=GT_STANDALONE["narrowness"][1],
        text="author-anchored RQ (A.5)",
    )
    five = [cand("m0", novelty, sb=sb, dg=dg, text=f"{model}: best standalone RQ (A.5)")]
    five += [
        cand(
            f"m{k}",
            FILLER_NOVELTY,
            sb=FILLER_NARROWNESS[0],
            dg=FILLER_NARROWNESS[1],
            text=f"{model}: overlap example (A.5)" if k == 1 else f"filler {k}",
        )
        for k in range(1, 5)
    ]
    inst = instance(DEEPSEEK_R1, gt, five, subfield="cs.CL", overlap=[0, overlap, 0, 0, 0])
    return results([inst], model=model, judge_model=JUDGE, label=LABEL, prompt_variant=variant)


def standalone_results(revised_gemini: tuple | None = None) -> list:
    """One standalone results file per model; with ``revised_gemini`` (novelty, narrowness, overlap), a
    gemini-3.1-pro submission under the revised prompt too (filler of ours: A.5 prints no revised outputs)."""
    out = [_standalone(m) for m in STANDALONE]
    if revised_gemini is not None:
        out.append(_standalone("gemini-3.1-pro", "revised", revised_gemini))
    return out


def comparative_results():
    """gpt-5.5 on speculative sampling, comparative: novelty and narrowness (A.5 prints no overlap for it)."""
    gt = cand(
        "gt",
        GT_COMPARATIVE["novelty"],
        sb=GT_COMPARATIVE["narrowness"][0],
        dg=GT_COMPARATIVE["narrowness"][1],
        text="author-anchored RQ (A.5)",
    )
    five = [
        cand(f"m{k}", n, sb=sb, dg=dg, text=f"gpt-5.5: rank {k + 1} (A.5)")
        for k, (n, (sb, dg)) in enumerate(zip(COMPARATIVE_NOVELTY, COMPARATIVE_NARROWNESS))
    ]
    r = results(
        [instance(SPECULATIVE, gt, five, subfield="cs.CL")],
        model="gpt-5.5",
        judge_model=JUDGE,
        label=LABEL,
        setting="comparative",
    )
    r.settings = {"metrics": ["novelty", "narrowness"]}
    return r
