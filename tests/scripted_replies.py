"""The one scripted responder of the tests: a valid, deterministic reply for every LLM step.

The step comes from the request's step tag (``req.step``, the ``X-RQBench-Step``
header the LLM layer sends), never from the prompt's wording or the reply
schema, so rewording a prompt cannot change which reply a test gets. Builder
replies vary with a hash of the user prompt; ``author_rqs`` links only the
cited keys its schema allows (the builder's own constraint, exercised). Judge
replies score each candidate from its text, so orderings agree; the GT (text
not starting with "Question") scores 3s. ``tests/test_golden_outputs.py`` pins
every reply here: changing one changes the golden outputs.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from typing import Any

from rqbench.steps import STEPS
from rqbench.testing.scripted_server import ScriptedRequest

CAND_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def user_text(req: ScriptedRequest) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def candidates_of(req: ScriptedRequest) -> list[str]:
    """The candidate texts of a judge request, in the order shown (the fenced block; the whole user message of a
    prompt set without the fence, such as the authors' own prompts)."""
    block = req["messages"][1]["content"].split("<<<CANDIDATES", 1)[-1]
    return [m.group(2) for m in CAND_LINE.finditer(block)]


def allowed_keys(req: ScriptedRequest) -> list[str]:
    """The cited keys the ``author_rqs`` reply schema allows (an enum, or a const for one key)."""
    schema = req["response_format"]["schema"]
    items = schema["$defs"]["AuthorRQ"]["properties"]["cited_keys"]["items"]
    return list(items["enum"]) if "enum" in items else [items["const"]]


# -- the builder's steps ---------------------------------------------------------------------


def _influence(req: ScriptedRequest, prefer_key: str | None) -> str:
    text = user_text(req)
    h = zlib.crc32(text.encode())
    # the favourite key is always influential; others by a stable coin
    inspired = (prefer_key is not None and prefer_key in text) or h % 2 == 0
    label = "inspiration" if inspired else ("canonical_reference" if h % 3 == 0 else "minimally_influential")
    return json.dumps({"label": label, "reason": "scripted"})


def _contributions(req: ScriptedRequest, prefer_key: str | None) -> str:
    return json.dumps(
        {
            "problem_statement": "Models attend to a few tokens regardless of content, which wastes capacity.",
            "main_idea_headline": "Attention sinks explained and removed.",
            "novelty_type": "empirical_finding",
            "ideas": ["Measure sink strength across layers."],
            "contributions": ["A measurement of attention sinks.", "A fix that removes them."],
        }
    )


def _gaps(req: ScriptedRequest, prefer_key: str | None) -> str:
    h = zlib.crc32(user_text(req).encode())
    return json.dumps({"gaps": [f"The cited work leaves open why sinks form (case {h % 97})."]})


def _author_rqs(req: ScriptedRequest, prefer_key: str | None) -> str:
    keys = allowed_keys(req)
    first = [prefer_key] if prefer_key in keys else keys[:1]
    other = [k for k in keys if k not in first][:1] or first
    return json.dumps(
        {
            "research_questions": [
                {"question": "What makes attention concentrate on semantically empty tokens?", "cited_keys": first},
                {"question": "How can attention be normalised without creating sink tokens?", "cited_keys": other},
            ]
        }
    )


def _cited_contributions(req: ScriptedRequest, prefer_key: str | None) -> str:
    h = zlib.crc32(user_text(req).encode())
    return json.dumps(
        {
            "contributions": [
                f"Shows when attention sinks emerge during training (case {h % 97}).",
                "Removes sinks by replacing softmax normalisation.",
            ]
        }
    )


def _verification(req: ScriptedRequest, prefer_key: str | None) -> str:
    h = zlib.crc32(user_text(req).encode())
    return json.dumps(
        {"addressed": h % 4 != 0, "confidence": "medium", "reasoning": "scripted verdict", "evidence": "Section 3"}
    )


# -- generation and the judges ---------------------------------------------------------------


def novelty_score(text: str) -> dict[str, int]:
    """Deterministic from the text, so orderings give the same scores; the GT (no 'Question') scores 3s."""
    if not text.startswith("Question"):
        return {"relevance": 1, "originality": 3, "gap_addressing": 3, "non_obviousness": 3}
    k = int(text.split()[1])
    return {"relevance": 1, "originality": k % 4, "gap_addressing": 2, "non_obviousness": (k + 1) % 4}


def narrow_score(text: str) -> dict[str, Any]:
    sb = 0 if not text.startswith("Question") else 1 + int(text.split()[1]) % 3
    scopes = ("not_source_bound", "mildly_source_bound", "source_bound", "strongly_source_bound")
    return {
        "mentions_source_specific_name": 0,
        "main_object_in_source": 1,
        "introduces_new_mechanism": 0,
        "source_bound_score": sb,
        "diagnostic_test_score": 1,
        "source_bound_scope": scopes[sb],
        "diagnostic_scope": "mildly_diagnostic",
        "short_reason_source_bound": "r1",
        "short_reason_diagnostic": "r2",
    }


def _generation(req: ScriptedRequest, prefer_key: str | None) -> str:
    return json.dumps(
        {
            "gaps": ["The background leaves open how sparse routing scales."],
            "research_questions": [f"How does generated variant {k} change accuracy on long inputs?" for k in range(5)],
        }
    )


def _novelty_standalone(req: ScriptedRequest, prefer_key: str | None) -> str:
    return json.dumps({"scores": [novelty_score(candidates_of(req)[0])]})


def _novelty_comparative(req: ScriptedRequest, prefer_key: str | None) -> str:
    scores = [novelty_score(c) for c in candidates_of(req)]
    ranking = sorted(range(len(scores)), key=lambda i: -sum(v for k, v in scores[i].items() if k != "relevance"))
    return json.dumps({"scores": scores, "ranking": ranking})


def _narrowness_standalone(req: ScriptedRequest, prefer_key: str | None) -> str:
    return json.dumps(narrow_score(candidates_of(req)[0]))


def _narrowness_comparative(req: ScriptedRequest, prefer_key: str | None) -> str:
    return json.dumps({"scores": [narrow_score(c) for c in candidates_of(req)]})


def _overlap(req: ScriptedRequest, prefer_key: str | None) -> str:
    n = len(candidates_of(req))
    return json.dumps({"pairwise_scores": [1] * n, "covering_subset_indices": [], "covered": False})


REPLIES: dict[str, Callable[[ScriptedRequest, str | None], str]] = {
    "influence": _influence,
    "contributions": _contributions,
    "gaps": _gaps,
    "author_rqs": _author_rqs,
    "cited_contributions": _cited_contributions,
    "verification": _verification,
    **{name: _generation for name in STEPS if name.startswith("generation_")},
    "novelty_standalone": _novelty_standalone,
    "novelty_comparative": _novelty_comparative,
    "narrowness_standalone": _narrowness_standalone,
    "narrowness_comparative": _narrowness_comparative,
    "overlap": _overlap,
}


def reply(req: ScriptedRequest, *, prefer_key: str | None = None) -> str:
    """The scripted reply to ``req``'s step; ``prefer_key`` is a cited key the builder steps favour."""
    try:
        answer = REPLIES[req.step]
    except KeyError:
        raise AssertionError(f"no scripted reply for step {req.step!r}") from None
    return answer(req, prefer_key)


def responder_with(overrides: dict[str, Callable[[ScriptedRequest], str | None]]) -> Callable[[ScriptedRequest], str]:
    """``reply`` except where an override for the request's step returns text."""

    def respond(req: ScriptedRequest) -> str:
        fn = overrides.get(req.step)
        if fn is not None:
            text = fn(req)
            if text is not None:
                return text
        return reply(req)

    return respond
