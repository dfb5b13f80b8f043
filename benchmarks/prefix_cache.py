"""What prefix-stable prompts and instance-grouped scheduling save: measured on the embedded model, simulated with slots.

1. The embedded model (SmolLM2-135M on its runtime, ``RQB_LOCAL_RUNTIME``: either answers one
   request at a time and reuses the longest prompt prefix it holds) judges
   the offline sample (``rqbench setup-sample``; without it, instances built from
   the fixture papers) with novelty and narrowness, standalone, three ways, each
   from an empty response cache and after a flush prompt that empties the slot:
   - ``grouped``: this checkout (prefix-stable layout, instance-grouped scheduling,
     one leader per prefix family first);
   - ``old order``: the same layout with the scheduling of the previous release
     (every call of an instance queued at once, first come first served), rebuilt here;
   - ``candidate-first``: grouped scheduling, but a prompt set whose user messages put
     the candidates before the background (the layout the prefix rule forbids).
   For each: wall time, and the prompt tokens the runtime evaluated (llama.cpp's
   ``prompt eval time = ... / N tokens`` timing lines, or the torch server's ``prompt tokens evaluated: N of M``)
   against the prompt tokens sent.
   The defaults keep it to a few minutes on two busy cores: a 200-token background
   budget per call and an 8-token reply budget (replies are cut, which the results
   record as ``truncated``; the figure is prompt processing, which is what caching saves).
2. A simulated provider with ``--slots`` parallel slots whose prefix cache holds a
   prefix once a call with it has been answered (as vLLM's and the hosted providers'
   do), fed by the real judging run over synthetic paper-scale instances
   (``paper_scale_cost.synthetic_set``): the share of input tokens served from the
   cache under the old order and under grouped scheduling. On a one-at-a-time server
   the two orders are the same; with parallel slots the old order sends an instance's
   siblings together, before any of them has filled the cache.

Run: .venv/bin/python benchmarks/prefix_cache.py [--instances 1] [--background-tokens 200] [--max-tokens 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from rqbench import paths
from rqbench.builder.parse import parse_paper
from rqbench.evaluate.benchmark.background import BackgroundPolicy
from rqbench.evaluate.benchmark.source import Benchmark, load_benchmark
from rqbench.evaluate.criteria import JudgeConfig
from rqbench.evaluate.generate.submission_files import Submission
from rqbench.evaluate.generate.validation_report import ValidationReport
from rqbench.evaluate.judge import run as judging
from rqbench.evaluate.judge.schedule import InstanceScheduler
from rqbench.llm import LLM, CallStore
from rqbench.llm.client import DryRun
from rqbench.llm.local_model import LocalModelServer, local_runtime
from rqbench.prompts import load_prompt_set
from rqbench.records import CitedPaper, EvaluationInstance, SectionText, SubmissionEntry, SubmissionMetadata

HERE = Path(__file__).parent
# the evaluated prompt tokens each runtime logs per request: llama.cpp's timing line, or the torch server's own
PROMPT_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens|prompt tokens evaluated: (\d+) of")
CRITERIA = ["novelty", "narrowness"]


class OldOrder:
    """The previous release's scheduling: every call of an instance at once, behind one first-come semaphore."""

    def __init__(self, concurrency: int):
        self._sem = asyncio.Semaphore(concurrency)

    async def run(self, instance: int, items: Any, family: Any, call: Any) -> list[Any]:
        async def bounded(item: Any) -> Any:
            async with self._sem:
                return await call(item)

        return list(await asyncio.gather(*(bounded(i) for i in items)))


def candidate_first_prompts(dest: Path) -> Path:
    """A copy of the packaged prompt set whose judge user messages put the candidate section first."""
    src = load_prompt_set().path
    shutil.copytree(src, dest)
    for f in dest.glob("*.user.md"):
        text = f.read_text(encoding="utf-8")
        parts = text.strip().split("\n\n")
        fenced = [p for p in parts if "{{candidates}}" in p]
        if fenced and parts[-1] in fenced:
            f.write_text("\n\n".join(fenced + [p for p in parts if p not in fenced]) + "\n", encoding="utf-8")
    return dest


def fixture_benchmark(n: int) -> Benchmark:
    """Instances of two fixture papers each (parsed by the project's parser), when there is no offline sample."""
    root = paths.shared_dir()
    if root is None:
        raise SystemExit("no offline sample and no ../shared fixtures: run 'rqbench setup-sample'")
    papers = {}
    for folder in sorted(p for p in (root / "fixtures" / "latex").iterdir() if p.is_dir())[: n + 1]:
        parsed = parse_paper(folder, folder.name)
        body = [SectionText(section=s.name, text=s.text) for s in parsed.sections if s.text.strip()]
        papers[folder.name] = CitedPaper(
            paper_id=folder.name, title=folder.name, abstract=body[0].text[:1500], text_level="full", sections=body[1:]
        )
    ids = list(papers)
    instances = [
        EvaluationInstance(
            rq_id=f"2501.{i:05d}_rq0",
            gt_rq="Which properties of the studied setting explain where the proposed method fails?",
            arxiv_id=f"2501.{i:05d}",
            subfield="cs.CL",
            background_paper_ids=ids[i : i + 2],
        )
        for i in range(n)
    ]
    return Benchmark(instances, papers, repo="fixtures", revision="local")


def submission_for(bench: Benchmark) -> Submission:
    """Five plain research questions per instance (from benchmarks/honest_rqs.jsonl), the same for every run."""
    rqs = [json.loads(line)["text"] for line in (HERE / "honest_rqs.jsonl").read_text().splitlines() if line.strip()]
    entries = {
        inst.rq_id: SubmissionEntry(rq_id=inst.rq_id, research_questions=rqs[5 * k : 5 * k + 5])
        for k, inst in enumerate(bench.instances)
    }
    meta = SubmissionMetadata(model="fixed-questions", provider="benchmark", prompt_variant="original")
    return Submission(Path("fixed"), meta, entries, "b2:prefix-cache-bench", ValidationReport(path="fixed"))


def prompt_eval_tokens(log: Path, offset: int) -> int:
    return sum(int(m.group(1) or m.group(2)) for m in PROMPT_EVAL.finditer(log.read_text(errors="replace")[offset:]))


def measured(args: argparse.Namespace) -> None:
    if paths.sample_dataset_dir().exists():
        bench = load_benchmark()
        source = f"the offline sample ({len(bench.instances)} instances)"
    else:
        bench = fixture_benchmark(args.instances)
        source = "no offline sample here: instances of two fixture papers each"
    bench = Benchmark(bench.instances[: args.instances], bench.papers, repo=bench.repo, revision=bench.revision)
    sub = submission_for(bench)
    policy = BackgroundPolicy(budget_tokens=args.background_tokens)
    print(
        f"1. the {local_runtime()} runtime (smollm2-135m, one request at a time): {source}; judged: {len(bench.instances)} instance(s), "
        f"{', '.join(args.criteria)}, standalone; background {args.background_tokens} tokens a call, replies cut at "
        f"{args.max_tokens} tokens"
    )
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer("smollm2-135m") as srv:
        cfg = srv.model_config(name="bench/smollm2-135m", temperature=0.0, max_tokens=args.max_tokens)
        alt = load_prompt_set(candidate_first_prompts(Path(tmp) / "candidate-first"))
        arms = [
            ("old order", OldOrder, None),
            ("grouped", InstanceScheduler, None),
            ("candidate-first", InstanceScheduler, alt),
        ]
        figures = {}
        wanted = {a.strip() for a in args.arms.split(",")}
        for name, scheduler, prompts in [a for a in arms if a[0] in wanted]:
            # empty the slot, so no arm starts from the previous arm's prompt
            httpx.post(
                f"{srv.api_base}/chat/completions",
                timeout=600,
                json={"model": "smollm2-135m", "max_tokens": 1, "messages": [{"role": "user", "content": "Hello."}]},
            )
            llm = LLM(CallStore(Path(tmp) / f"{name}.db"))
            llm.register(cfg)
            offset = srv._log_path.stat().st_size
            judging.InstanceScheduler = scheduler  # the one seam: the run's scheduler
            t0 = time.perf_counter()
            try:
                judging.judge_submission(
                    bench,
                    sub,
                    [cfg.name],
                    ["standalone"],
                    llm=llm,
                    out_dir=Path(tmp) / name,
                    criteria=args.criteria,
                    policy=policy,
                    prompts=prompts,
                    progress=False,
                )
            finally:
                judging.InstanceScheduler = InstanceScheduler
            wall = time.perf_counter() - t0
            rows = llm.store.summary(run_id=llm.run_id)
            sent = int(sum(r["tokens_in"] or 0 for r in rows))
            calls = int(sum(r["requests"] or 0 for r in rows))
            evaluated = prompt_eval_tokens(srv._log_path, offset)
            figures[name] = (wall, evaluated, sent)
            print(
                f"  {name:15s} {calls} calls, {wall:6.1f} s; prompt tokens sent {sent:,}, evaluated by the runtime "
                f"{evaluated:,} ({evaluated / max(1, sent):.0%}; the rest reused from its slot)"
            )
        g = figures.get("grouped")
        for base in [b for b in ("old order", "candidate-first") if b in figures and g]:
            b = figures[base]
            print(
                f"  grouped / {base}: wall time {g[0] / b[0]:.2f}x, prompt tokens evaluated {g[1] / max(1, b[1]):.2f}x"
            )


class SimulatedProvider:
    """Stands in for the LLM layer: a provider with parallel slots whose prefix cache fills when a call is answered."""

    def __init__(self, slots: int, rng: random.Random):
        self.slots = slots
        self.sem = asyncio.Semaphore(slots)
        self.rng = rng
        self.cached: set[tuple[str, ...]] = set()
        self.tokens_in = 0
        self.tokens_cached = 0

    def model(self, spec: str) -> Any:
        return type("Slots", (), {"max_concurrency": self.slots})()

    async def ask(self, model: str, step: str, messages: list[dict[str, str]], reply_model: Any, **kw: Any) -> Any:
        shared = (*(m["content"] for m in messages[:-1]), messages[-1]["content"][: kw["shared_chars"]])
        async with self.sem:
            self.tokens_in += sum(len(m["content"]) for m in messages) // 4
            if shared in self.cached:
                self.tokens_cached += sum(len(s) for s in shared) // 4
            await asyncio.sleep(self.rng.uniform(0.001, 0.004))
            self.cached.add(shared)
        raise DryRun("simulated")


def simulated(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(HERE))
    from paper_scale_cost import synthetic_set

    bench, sub, _ = synthetic_set(args.sim_instances, random.Random(0))
    print(
        f"2. simulated provider, {args.slots} parallel slots, prefix cached once answered; {args.sim_instances} "
        f"synthetic paper-scale instances, all criteria, standalone, concurrency {args.slots}:"
    )
    judge = JudgeConfig(
        model="sim",
        label="sim",
        setting="standalone",
        prompts=load_prompt_set(),
        policy=BackgroundPolicy(budget_tokens=1_000_000),
    )
    shares, walls = {}, {}
    for name, scheduler in (("old order", OldOrder), ("grouped", InstanceScheduler)):
        provider = SimulatedProvider(args.slots, random.Random(1))
        judging.InstanceScheduler = scheduler
        t0 = time.perf_counter()
        try:
            asyncio.run(
                judging._judge_one(
                    bench,
                    sub,
                    judge,
                    list(judging.ALL_CRITERIA),
                    provider,
                    args.slots,  # type: ignore[arg-type]
                    progress=False,
                    retry_failed=False,
                )
            )
        finally:
            judging.InstanceScheduler = InstanceScheduler
        shares[name] = provider.tokens_cached / provider.tokens_in
        walls[name] = time.perf_counter() - t0
        print(
            f"  {name:10s} input tokens {provider.tokens_in:,}, from the prefix cache {provider.tokens_cached:,} "
            f"({shares[name]:.1%}); {time.perf_counter() - t0:.1f} s"
        )
    print(
        f"  grouped / old order: uncached input {(1 - shares['grouped']) / (1 - shares['old order']):.2f}x, "
        f"wall time {walls['grouped'] / walls['old order']:.2f}x (simulated latencies of 1-4 ms a call)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=1, help="instances judged on the embedded model (default 1)")
    ap.add_argument("--background-tokens", type=int, default=200)
    ap.add_argument("--max-tokens", type=int, default=8, help="reply budget of the embedded model's calls")
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--sim-instances", type=int, default=200)
    ap.add_argument("--skip-model", action="store_true", help="only the simulation")
    ap.add_argument(
        "--arms", default="old order,grouped,candidate-first", help="which runs on the embedded model, comma-separated"
    )
    ap.add_argument(
        "--criteria", default=",".join(CRITERIA), help="criteria judged on the embedded model, comma-separated"
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    if args.smoke:  # both schedulers on one criterion's calls: a third of the embedded model's calls of both criteria
        args.background_tokens, args.sim_instances, args.arms, args.criteria = 60, 4, "old order,grouped", "novelty"
    args.criteria = [c.strip() for c in args.criteria.split(",") if c.strip()]
    if not args.skip_model:
        measured(args)
    simulated(args)


if __name__ == "__main__":
    main()
