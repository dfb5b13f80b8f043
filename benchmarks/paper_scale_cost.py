"""What one submission costs each judge at the paper's scale: calls, tokens, prefix cache, batch, wall time.

A synthetic instance set of the paper's size (1,434 instances; 1, 2 or 3
background papers each, 1.7 on average) whose background papers have the
section lengths of the real fixture papers (``../shared/fixtures/latex``, parsed
with the project's parser, lengths in the background policy's tokens,
ceil(chars / 4)), and a synthetic five-RQ submission, go through the real judging
run in dry-run mode (``judge_submission`` with ``LLM(dry_run=True)``), so the
prompts, the background cuts and the call count are the product's own. For each
judge it prints calls, input tokens (billed in full vs read from the provider's
prefix cache, by the dry run's prefix-cache model), and dollars three ways: naive
(no prefix caching), with the prefix cache, and with it and the batch endpoint,
each with its ratio to naive; then the wall-time bound under a stated rate limit.

Prices: litellm's cost map. ``gemini/gemini-3.1-pro`` is not in it (only
``gemini/gemini-3.1-pro-preview``), so the preview's entry is used under the
judge's name, and said so. DeepSeek has no batch endpoint: its batch figure is
its cached figure. Output is priced at each call's ``max_tokens`` (the judges'
reply budget, 32,768 tokens: room for their reasoning), an upper bound far above
what a judge writes, so the input share is printed apart.

Run: .venv/bin/python benchmarks/paper_scale_cost.py [--instances 1434] [--rpm 1000 --tpm 4000000]
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
import time
from pathlib import Path

from rqbench.builder.parse import parse_paper
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.generate.submission_files import Submission
from rqbench.evaluate.generate.validation_report import ValidationReport
from rqbench.evaluate.judge.run import judge_submission
from rqbench.llm import LLM, CallStore
from rqbench.llm.estimate import CACHE_RULES, PriceBook
from rqbench.paths import shared_dir
from rqbench.records import CitedPaper, EvaluationInstance, SectionText, SubmissionEntry, SubmissionMetadata

JUDGES = ["gemini/gemini-3.1-pro", "deepseek/deepseek-v4-pro"]
PRICE_ALIASES = {"gemini/gemini-3.1-pro": "gemini/gemini-3.1-pro-preview"}
BACKGROUND_PAPERS = {1: 0.45, 2: 0.40, 3: 0.15}  # mean 1.7, as in the paper
N_INSTANCES = 1434


def fixture_shapes() -> list[list[tuple[str, int]]]:
    """Per fixture paper, its sections as (name, tokens), from the project's parser."""
    root = shared_dir()
    if root is None:
        raise SystemExit("../shared is not beside this checkout")
    shapes = []
    for folder in sorted(p for p in (root / "fixtures" / "latex").iterdir() if p.is_dir()):
        parsed = parse_paper(folder, folder.name)
        shapes.append([(s.name, math.ceil(len(s.text) / 4)) for s in parsed.sections if s.text.strip()])
    return shapes


class Prose:
    """Filler words at four characters a token, from one long random text sliced at random offsets."""

    def __init__(self, rng: random.Random, size: int = 4_000_000):
        vocab = ["".join(rng.choice("abcdefghijklmnoprstuvw") for _ in range(rng.randint(2, 9))) for _ in range(3000)]
        words, n = [], 0
        while n < size:
            w = rng.choice(vocab)
            words.append(w)
            n += len(w) + 1
        self.text = " ".join(words)
        self.rng = rng

    def take(self, tokens: int) -> str:
        chars = tokens * 4
        start = self.rng.randrange(0, len(self.text) - chars - 1)
        return self.text[start : start + chars]


def synthetic_set(n: int, rng: random.Random) -> tuple[Benchmark, Submission, list[int]]:
    shapes = fixture_shapes()
    prose = Prose(rng)
    papers: dict[str, CitedPaper] = {}
    instances = []
    lengths = []
    for i in range(n):
        k = rng.choices(list(BACKGROUND_PAPERS), weights=list(BACKGROUND_PAPERS.values()))[0]
        ids = []
        for j in range(k):
            shape = rng.choice(shapes)  # a real paper's section lengths
            pid = f"bg{i:05d}-{j}"
            abstract = next((t for name, t in shape if name.lower().startswith("abstract")), 200)
            body = [
                SectionText(section=name, text=prose.take(t))
                for name, t in shape
                if not name.lower().startswith("abstract")
            ]
            papers[pid] = CitedPaper(
                paper_id=pid, title=prose.take(15), abstract=prose.take(abstract), text_level="full", sections=body
            )
            lengths.append(sum(t for _, t in shape))
            ids.append(pid)
        instances.append(
            EvaluationInstance(
                rq_id=f"2501.{i // 2:05d}_rq{i % 2}",
                gt_rq=f"How does {prose.take(23)} change?",
                arxiv_id=f"2501.{i // 2:05d}",
                subfield="cs.CL",
                background_paper_ids=ids,
            )
        )
    bench = Benchmark(instances, papers, repo="synthetic/paper-scale", revision="v0")
    meta = SubmissionMetadata(model="synthetic-generator", provider="synthetic", prompt_variant="original")
    entries = {
        i.rq_id: SubmissionEntry(
            rq_id=i.rq_id, research_questions=[f"How does {prose.take(23)} change?" for q in range(5)]
        )
        for i in instances
    }
    sub = Submission(Path("synthetic"), meta, entries, "b2:synthetic", ValidationReport(path="synthetic"))
    return bench, sub, lengths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=N_INSTANCES)
    ap.add_argument("--rpm", type=int, default=1000, help="stated requests-per-minute limit (default 1000)")
    ap.add_argument("--tpm", type=int, default=4_000_000, help="stated tokens-per-minute limit (default 4,000,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    if args.smoke:
        args.instances = 12

    import litellm

    for name, source in PRICE_ALIASES.items():
        if name not in litellm.model_cost:
            litellm.register_model({name: dict(litellm.model_cost[source])})
            print(f"prices: {name} is not in litellm's cost map; using {source}'s entry")

    t0 = time.perf_counter()
    bench, sub, lengths = synthetic_set(args.instances, random.Random(args.seed))
    n_bg = sum(len(i.background_paper_ids) for i in bench.instances)
    lengths.sort()
    print(
        f"synthetic set: {len(bench.instances)} instances, {n_bg / len(bench.instances):.2f} background papers each; "
        f"paper lengths (tokens, from the {len(fixture_shapes())} fixture papers): median {lengths[len(lengths) // 2]}, "
        f"max {lengths[-1]}; built in {time.perf_counter() - t0:.1f}s"
    )
    book = PriceBook()
    with tempfile.TemporaryDirectory() as tmp:
        for judge in JUDGES:
            t0 = time.perf_counter()
            llm = LLM(CallStore(Path(tmp) / "calls.db"), dry_run=True, batch=True, dry_run_tokens="chars/4")
            judge_submission(
                bench, sub, [judge], ["standalone", "comparative"], llm=llm, out_dir=Path(tmp) / "out", progress=False
            )
            est = llm.estimate
            cfg = llm.model(judge)
            rate = book.rates(cfg.litellm_model, est.tokens_in // max(1, est.calls))
            out_naive = est.tokens_out_max * rate.out
            out_batch = est.tokens_out_max * (rate.batch_out if est.cost_batch_usd < est.cost_usd else rate.out)
            rule = CACHE_RULES.get(cfg.provider)
            print(
                f"\n{judge} ({est.calls} calls, dry run in {time.perf_counter() - t0:.0f}s; prefix cache from "
                f"{rule.min_tokens if rule else '-'} tokens):"
            )
            print(
                f"  input tokens {est.tokens_in:,}: billed in full {est.tokens_in_billed:,}, "
                f"prefix-cached {est.tokens_in_cached:,} ({est.tokens_in_cached / est.tokens_in:.1%})"
            )
            print(f"  output tokens <= {est.tokens_out_max:,} (max_tokens per call)")
            naive_in = est.cost_naive_usd - out_naive
            rows = [
                ("naive", est.cost_naive_usd, naive_in),
                ("prefix-cached", est.cost_usd, est.cost_usd - out_naive),
                ("cached + batch", est.cost_batch_usd, est.cost_batch_usd - out_batch),
            ]
            if est.cost_batch_usd == est.cost_usd:
                rows[2] = ("cached + batch", est.cost_usd, est.cost_usd - out_naive)
            for name, total, inp in rows:
                print(
                    f"  {name:15s} ${total:9,.2f} total ({total / est.cost_naive_usd:.2f}x naive); "
                    f"input ${inp:9,.2f} ({inp / naive_in:.2f}x naive input)"
                )
            if est.cost_batch_usd == est.cost_usd:
                print("  (no batch endpoint for this provider: the batch row is the cached row)")
            by_calls = est.calls / args.rpm
            by_tokens = (est.tokens_in + est.tokens_out_max) / args.tpm
            print(
                f"  wall time under {args.rpm:,} RPM and {args.tpm:,} TPM (input + max output): >= "
                f"{max(by_calls, by_tokens):.0f} min (requests {by_calls:.0f} min, tokens {by_tokens:.0f} min; "
                f"input tokens alone {est.tokens_in / args.tpm:.0f} min); by batch: the provider's window, <= 24 h"
            )


if __name__ == "__main__":
    main()
