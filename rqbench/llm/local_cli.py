"""``rqbench local-model``: start the embedded model (``serve``) or ask it one judge prompt (``check``)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import time

from rqbench.llm.local_model import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, LocalModelServer


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["serve", "check"], help="serve: run until Ctrl-C; check: one JSON judge call")
    p.add_argument("--model", default=DEFAULT_LOCAL_MODEL, choices=sorted(LOCAL_MODELS))


def run(args: argparse.Namespace) -> int:
    with LocalModelServer(args.model) as srv:
        if args.action == "serve":
            print(f"{srv.spec.description} at {srv.api_base}; litellm model openai/{srv.spec.id}")
            print(f"export RQB_LOCAL_API_BASE={srv.api_base}  # reuse it from other processes")
            signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
            try:
                while srv.proc is not None and srv.proc.poll() is None:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
            return 0
        from rqbench.llm.selfcheck import judge_once

        reply, seconds = asyncio.run(judge_once(srv.model_config()))
        print(f"valid {type(reply).__name__} in {seconds:.1f}s: {reply.model_dump_json()}")
        return 0
