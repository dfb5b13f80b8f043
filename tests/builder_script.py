"""Scripted replies for builder tests: each LLM step answered by its reply schema, deterministically.

The responder reads the request's JSON schema (the LLM layer sends it as
``response_format``) to tell the steps apart, and the cited keys the RQ step may
use from the schema's enum, so the builder's own constraints are exercised.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

# A small paper of our own, used as a cited paper's full text (arXiv id 2410.10781 is cited by a fixture).
CITED_TEX = r"""\documentclass{article}
\title{When Attention Sink Emerges in Language Models}
\begin{document}
\maketitle
\begin{abstract}
We study when attention sinks appear during pre-training of small language models.
\end{abstract}
\section{Introduction}
Attention sinks are tokens that receive a large share of attention mass regardless of their meaning.
We measure how often they appear across training steps, model sizes and data orders, and we relate
their emergence to the softmax normalisation used inside attention heads.
\section{Findings}
Sinks appear once the optimisation has reduced the loss enough; replacing softmax with a sigmoid
attention without normalisation removes them in our runs, while the loss stays comparable.
\end{document}
"""


def step_of(req: dict[str, Any]) -> str:
    props = req["response_format"]["schema"].get("properties", {})
    if "label" in props:
        return "influence"
    if "problem_statement" in props:
        return "contributions"
    if "gaps" in props:
        return "gaps"
    if "research_questions" in props:
        return "author_rqs"
    if "addressed" in props:
        return "verification"
    raise AssertionError(f"unknown step schema: {sorted(props)}")


def allowed_keys(req: dict[str, Any]) -> list[str]:
    schema = req["response_format"]["schema"]
    items = schema["$defs"]["AuthorRQ"]["properties"]["cited_keys"]["items"]
    return list(items["enum"]) if "enum" in items else [items["const"]]


def user_text(req: dict[str, Any]) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def reply_for(req: dict[str, Any], *, prefer_key: str | None = None) -> str:
    step = step_of(req)
    text = user_text(req)
    h = zlib.crc32(text.encode())
    if step == "influence":
        # the favourite key is always influential; others by a stable coin
        inspired = (prefer_key is not None and prefer_key in text) or h % 2 == 0
        label = "inspiration" if inspired else ("canonical_reference" if h % 3 == 0 else "minimally_influential")
        return json.dumps({"label": label, "reason": "scripted"})
    if step == "contributions":
        return json.dumps({
            "problem_statement": "Models attend to a few tokens regardless of content, which wastes capacity.",
            "main_idea_headline": "Attention sinks explained and removed.",
            "novelty_type": "empirical_finding",
            "ideas": ["Measure sink strength across layers."],
            "contributions": ["A measurement of attention sinks.", "A fix that removes them."],
        })
    if step == "gaps":
        return json.dumps({"gaps": [f"The cited work leaves open why sinks form (case {h % 97})."]})
    if step == "author_rqs":
        keys = allowed_keys(req)
        first = [prefer_key] if prefer_key in keys else keys[:1]
        other = [k for k in keys if k not in first][:1] or first
        return json.dumps({"research_questions": [
            {"question": "What makes attention concentrate on semantically empty tokens?", "cited_keys": first},
            {"question": "How can attention be normalised without creating sink tokens?", "cited_keys": other},
        ]})
    return json.dumps({"addressed": h % 4 != 0, "confidence": "medium", "reasoning": "scripted verdict",
                       "evidence": "Section 3"})


def make_papers(root: Path, fixtures: Path, names: list[str]) -> Path:
    """A --papers folder of symlinks to some fixture papers (the fixtures stay where they are)."""
    root.mkdir(parents=True, exist_ok=True)
    for n in names:
        (root / n).symlink_to(fixtures / "latex" / n, target_is_directory=True)
    return root


def make_cited_sources(root: Path) -> Path:
    """A --cited-sources folder holding one cited paper's LaTeX (written by us, not a fixture copy)."""
    d = root / "2410.10781"
    d.mkdir(parents=True)
    (d / "main.tex").write_text(CITED_TEX, encoding="utf-8")
    return root
