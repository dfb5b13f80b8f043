"""Prompt text from records, cut to a budget the same way every time.

A budget is a number of characters (about four to a token for English). Text is
cut at the last whitespace before the budget and marked, so a reader (and the
model) can see that something was left out; the same input always gives the
same prompt, so the LLM cache keeps working.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rqbench.records import BibEntry, CitationContext, CitedWork, ParsedPaper

CUT_MARK = " [... cut: {n} more characters]"


def clip(text: str, budget: int | None) -> str:
    """``text`` if it fits in ``budget`` characters, else its head cut at a word boundary and marked."""
    text = text.strip()
    if budget is None or len(text) <= budget:
        return text
    if budget <= 0:
        return CUT_MARK.format(n=len(text)).strip()
    head = text[:budget]
    space = head.rfind(" ")
    if space > budget // 2:
        head = head[:space]
    return head.rstrip() + CUT_MARK.format(n=len(text) - len(head.rstrip()))


def sections_text(sections: Iterable[tuple[str, str]], budget: int | None) -> str:
    """(name, text) sections in document order, each under a ``## name`` heading, within ``budget``."""
    parts = []
    for name, text in sections:
        body = text.strip()
        if not body:
            continue
        parts.append(f"## {name}\n{body}" if name else body)
    return clip("\n\n".join(parts), budget)


def sections_read(sections: Iterable[tuple[str, str]], budget: int | None) -> list[str]:
    """The names of the sections ``sections_text`` keeps within ``budget``, in order; the one it cuts is marked."""
    kept, used = [], 0
    for name, text in sections:
        body = text.strip()
        if not body:
            continue
        start = used + (2 if kept else 0)
        used = start + len(f"## {name}\n{body}" if name else body)
        if budget is not None and start >= budget:
            break
        kept.append(name + (" (cut)" if budget is not None and used > budget else ""))
    return kept


def paper_text(parsed: ParsedPaper, budget: int | None) -> str:
    """The body of a parsed paper, section by section in document order, within ``budget``."""
    return sections_text(((s.name, s.text) for s in parsed.sections), budget)


def abstract_of(parsed: ParsedPaper) -> str:
    """The abstract section's text, when the parser found one."""
    for s in parsed.sections:
        if s.name.strip().lower() in ("abstract", "summary") and s.text.strip():
            return s.text.strip()
    return ""


def cited_title(work: CitedWork) -> str:
    return title_of(work.bib, work.key)


def title_of(bib: BibEntry | None, key: str) -> str:
    if bib is not None and bib.title:
        extra = ", ".join(x for x in (", ".join(bib.authors[:3]), str(bib.year or "")) if x)
        return f"{bib.title} ({extra})" if extra else bib.title
    return f"(title unknown; citation key {key})"


def context_text(ctx: CitationContext) -> str:
    before = " ".join(s.strip() for s in ctx.before)
    after = " ".join(s.strip() for s in ctx.after)
    core = f">>> {ctx.citing_sentence.strip()} <<<"
    return " ".join(x for x in (before, core, after) if x)


def contexts_block(contexts: Sequence[CitationContext], budget: int | None) -> str:
    """Numbered citation contexts with their section; stops at the budget and says how many were left out."""
    lines: list[str] = []
    used = 0
    for i, ctx in enumerate(contexts):
        line = f"[{i + 1}] (section: {ctx.section or 'unknown'}) {context_text(ctx)}"
        if budget is not None and lines and used + len(line) > budget:
            lines.append(f"({len(contexts) - i} more citations not shown)")
            break
        if budget is not None and not lines:
            line = clip(line, budget)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) if lines else "(no citation context was found)"


def bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {x.strip()}" for x in items) if items else "(none)"


def sections_list(work: CitedWork) -> str:
    return ", ".join(work.sections) if work.sections else "(unknown)"
