"""Stage "verify" (method.md step 8): does M's own contribution address each author-anchored RQ?

One prompt per RQ with M's source and the question: its whole merged LaTeX,
preamble included, as the paper's verifier reads "the full LaTeX source" (A.7),
or the parsed body text. The text budget is by default what the model's context
window holds, so a hosted model reads the whole source; where the source does
not fit (the embedded model, ``--text-budget``) the preamble goes first (package
and macro set-up, no content an RQ is about), then the body is cut at the budget.
The reply is the strict JSON ``VerificationReply``. The verdict is kept as a label on the RQ
(the paper keeps unverified RQs), so nothing is dropped here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from rqbench.builder import prompt_text as pt
from rqbench.builder.author_rqs import AuthorRQsResult
from rqbench.builder.llm_stage import GRAMMAR_SAFE_TEXT, LLMStageSettings, ask, bounded, is_permanent
from rqbench.builder.stages import gather_calls
from rqbench.llm import LLMCallFailed
from rqbench.records import ParsedPaper, Record, Verification
from rqbench.steps import owned_step

STEP = owned_step(__name__)
SourceKind = Literal["latex", "text"]
# The registry's strict reply, with the reasoning bounded so a grammar-constrained local model can give it.
Reply = bounded(STEP.reply_model, reasoning=(str, Field(max_length=GRAMMAR_SAFE_TEXT)))


class VerificationResult(Record):
    arxiv_id: str
    verdicts: list[Verification | None]
    failures: list[str | None]
    source: SourceKind


def paper_source(folder: str | None, parsed: ParsedPaper, kind: SourceKind, budget: int | None) -> tuple[str, str]:
    """(text, kind actually used): M's whole merged LaTeX source when it can be read, else the parsed text."""
    if kind == "latex" and folder:
        from rqbench.builder.latex_source import load_source
        from rqbench.builder.paper_skip import PaperSkipped

        try:
            src = load_source(Path(folder), parsed.main_file)
        except (PaperSkipped, OSError):
            src = None  # the parse stage read it, so this is rare; the parsed text still serves
        if src is not None:
            text = src.text.strip()
            if budget is not None and len(text) > budget:
                m = re.search(r"\\begin\s*\{document\}", text)
                text = text[m.start() :] if m else text
            return pt.clip(text, budget), "latex"
    return pt.paper_text(parsed, budget), "text"


async def verify(
    item: dict[str, Any], llm: Any, *, settings: LLMStageSettings, source: SourceKind = "latex"
) -> list[VerificationResult]:
    parsed: ParsedPaper = item["parse"]
    rqs: AuthorRQsResult = item["author_rqs"]
    text, used = paper_source(item["filter"].folder, parsed, source, settings.text_budget_chars)
    calls = [ask(llm, settings, Reply, {"paper": text, "question": rq.question}) for rq in rqs.rqs]
    results = await gather_calls(calls)
    verdicts: list[Verification | None] = []
    failures: list[str | None] = []
    for res in results:
        if isinstance(res, LLMCallFailed):
            if not is_permanent(res):
                raise res
            verdicts.append(None)
            failures.append(f"{res.reason}: {res.detail}"[:500])
            continue
        reply, model = res
        verdicts.append(
            Verification(
                addressed=reply.addressed,
                confidence=reply.confidence,
                reasoning=reply.reasoning,
                evidence=reply.evidence,
                model=model,
            )
        )
        failures.append(None)
    return [VerificationResult(arxiv_id=parsed.arxiv_id, verdicts=verdicts, failures=failures, source=used)]
