"""The background block a model reads: whole papers, cut only where the model's context window requires it.

The budget (``input_policy``): the model's context window (``catalog.context_window``,
or ``--context-tokens N``) minus its reply budget (``max_tokens``) and an allowance
for the prompt's fixed text, times a margin for the token estimate (``catalog.input_room``). Papers that
fit go whole, as the paper gives its models "these source texts". The embedded
model keeps a small budget (2,000 tokens: it reads prompts slowly on a CPU), and ``--background-tokens
N`` sets a fixed one; both are recorded as such (``BackgroundPolicy.basis``).

Policy ``title-abstract-sections/v1``, where a cut is needed: the instance's budget is split evenly
over its background papers. Per paper, in this order: the title (always), the
abstract, then body sections in document order, each whole while it fits. The
first section that does not fit is cut at a word boundary to fill what is left
(if at least ``MIN_PARTIAL_TOKENS`` remain), every later section is dropped,
and the block says so. A paper that needs less than its share leaves the rest
to the papers after it. The same inputs always give the same text, so cache
keys and submissions are reproducible; what was kept and cut is recorded
(``PaperCut``) in generation logs and results files.

Tokens are counted with a documented estimate, ceil(characters / 4), unless a
litellm model name is given (then litellm's counter, through
``rqbench.llm.catalog.count_tokens``). The estimate is model-independent, which
keeps one dataset's blocks identical across models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rqbench.llm.catalog import ESTIMATE, context_window, count_tokens, estimate_tokens, input_room, is_local
from rqbench.records import CitedPaper, PaperCut

POLICY_NAME = "title-abstract-sections/v1"
DEFAULT_BUDGET_TOKENS = 6000  # a fixed budget's default when none is named (BackgroundPolicy())
# The embedded model has an 8k context, but on 2 CPU cores llama.cpp reads a prompt at about 160 tokens/s: each
# prefix-cache miss (one per instance, criterion and setting) costs ~22 s at 3,000 tokens, ~15 s at 2,000.
LOCAL_BUDGET_TOKENS = 2000
MIN_PARTIAL_TOKENS = 40
TRUNCATION_MARK = " [...]"

Basis = Literal["window", "fixed", "embedded"]
WindowSource = Literal["catalog", "--context-tokens", "assumed"]


class BackgroundPolicy(BaseModel):
    """The truncation settings; stored with every output so a reader knows what the model saw."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = POLICY_NAME
    budget_tokens: int = Field(default=DEFAULT_BUDGET_TOKENS, ge=50)
    tokenizer: str = Field(default=ESTIMATE, description="'chars/4' or a litellm model name.")
    basis: Basis = Field(
        default="fixed",
        description="window: the model's context window minus the reply budget and the prompt allowance; "
        "fixed: a set budget (--background-tokens); embedded: the embedded model's small budget.",
    )
    window_tokens: int | None = Field(default=None, description="The context window the budget came from.")
    window_source: WindowSource | None = None
    reply_tokens: int | None = Field(default=None, description="Reply budget kept free within the window.")
    prompt_tokens: int | None = Field(default=None, description="Allowance kept free for the prompt's fixed text.")

    def describe(self) -> str:
        """One line: how large the budget is and why."""
        if self.basis == "embedded":
            ctx = f" (its context is {self.window_tokens:,} tokens)" if self.window_tokens else ""
            return f"the embedded model's small budget: {self.budget_tokens:,} tokens of background{ctx}"
        if self.basis == "fixed":
            return f"a fixed budget of {self.budget_tokens:,} tokens (--background-tokens)"
        src = {"catalog": "the model's", "--context-tokens": "--context-tokens", "assumed": "an assumed"}
        return (
            f"full text up to the context window ({src[self.window_source or 'catalog']} {self.window_tokens:,} "
            f"tokens; {self.budget_tokens:,} for background)"
        )


def input_policy(
    model: str, reply_tokens: int | None, *, context_tokens: int | None = None, fixed_tokens: int | None = None
) -> BackgroundPolicy:
    """The background budget of ``model``: its window minus the reply budget and the prompt allowance.

    ``fixed_tokens`` (``--background-tokens``) sets the budget outright; ``context_tokens``
    (``--context-tokens``) names the window; the embedded model keeps ``LOCAL_BUDGET_TOKENS``.
    """
    if fixed_tokens is not None:
        return BackgroundPolicy(budget_tokens=fixed_tokens, basis="fixed")
    if is_local(model) and context_tokens is None:
        return BackgroundPolicy(
            budget_tokens=LOCAL_BUDGET_TOKENS,
            basis="embedded",
            window_tokens=context_window(model),
            reply_tokens=reply_tokens,
        )
    room = input_room(model, reply_tokens, context_tokens=context_tokens)
    return BackgroundPolicy(
        budget_tokens=room.tokens,
        basis="window",
        window_tokens=room.window,  # type: ignore[arg-type]
        window_source=room.source,
        reply_tokens=room.reply_tokens,
        prompt_tokens=room.prompt_tokens,
    )


def token_counter(tokenizer: str = ESTIMATE) -> Callable[[str], int]:
    """A text -> token count function for the policy's tokenizer."""
    if tokenizer == ESTIMATE:
        return estimate_tokens
    return lambda text: count_tokens(tokenizer, text=text)


def _cut_words(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The longest word-boundary prefix of ``text`` within ``max_tokens`` (binary search on words)."""
    words = text.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(" ".join(words[:mid]) + TRUNCATION_MARK) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]).rstrip() + TRUNCATION_MARK if lo else ""


def _omitted(n: int) -> str:
    return f"[{n} further section(s) omitted for length]"


def paper_block(
    paper: CitedPaper, budget: int, count: Callable[[str], int], *, header: str = ""
) -> tuple[str, PaperCut]:
    """One paper's text within ``budget`` tokens, by the policy, and the record of the cut."""
    parts = [f"{header}Title: {paper.title}"]
    cut = PaperCut(
        paper_id=paper.paper_id,
        text_level=str(getattr(paper.text_level, "value", paper.text_level)),
        tokens=0,
        budget=budget,
    )
    used = count(parts[0])
    if paper.abstract.strip():
        abstract = "Abstract: " + " ".join(paper.abstract.split())
        if used + count(abstract) > budget:
            abstract = _cut_words(abstract, budget - used, count)
            cut.abstract_cut = True
        if abstract:
            parts.append(abstract)
            used += count(abstract)
    stopped = cut.abstract_cut
    # room for the "omitted" line and the line breaks, so the whole block stays within budget
    budget = max(used, budget - count(_omitted(len(paper.sections))) - 1 - len(paper.sections) // 2)
    for i, sec in enumerate(paper.sections):
        if stopped:
            cut.sections_dropped = len(paper.sections) - i
            break
        body = f"## {sec.section}\n{' '.join(sec.text.split())}"
        need = count(body)
        if used + need <= budget:
            parts.append(body)
            used += need
            cut.sections_kept.append(sec.section)
            continue
        room = budget - used
        if room >= MIN_PARTIAL_TOKENS:
            short = _cut_words(body, room, count)
            if short:
                parts.append(short)
                used += count(short)
                cut.section_cut = sec.section
        cut.sections_dropped = len(paper.sections) - i - (1 if cut.section_cut else 0)
        stopped = True
    if cut.sections_dropped:
        parts.append(_omitted(cut.sections_dropped))
    text = "\n".join(parts)
    cut.tokens = count(text)
    # the whole paper is counted only when something was left out (a paper that fits is its block)
    cut.tokens_cut = max(1, count(_whole(paper, header)) - cut.tokens) if cut.truncated else 0
    return text, cut


def _whole(paper: CitedPaper, header: str) -> str:
    """The paper's block with nothing cut (what ``paper_block`` gives when everything fits)."""
    parts = [f"{header}Title: {paper.title}"]
    if paper.abstract.strip():
        parts.append("Abstract: " + " ".join(paper.abstract.split()))
    parts += [f"## {sec.section}\n{' '.join(sec.text.split())}" for sec in paper.sections]
    return "\n".join(parts)


def background_block(
    papers: Sequence[CitedPaper], policy: BackgroundPolicy, *, numbered: bool = True
) -> tuple[str, list[PaperCut]]:
    """All of an instance's papers as one block; unused share passes to the papers after."""
    if not papers:
        raise ValueError("background_block needs at least one paper")
    count = token_counter(policy.tokenizer)
    blocks, cuts = [], []
    left = policy.budget_tokens
    for i, paper in enumerate(papers):
        share = left // (len(papers) - i)
        header = f"=== PAPER {i + 1} ===\n" if numbered and len(papers) > 1 else ""
        text, cut = paper_block(paper, share, count, header=header)
        blocks.append(text)
        cuts.append(cut)
        left -= min(share, cut.tokens)
    return "\n\n".join(blocks), cuts
