"""How untrusted text (a candidate research question) enters a prompt: as data that cannot act on it.

A candidate reaches a judge prompt only as ``candidate_values(texts)``:

- ``candidates``: one ``[i] text`` line per candidate, made plain by
  ``neutralize`` (one line, no hidden characters, and look-alikes for our data
  delimiters, chat-template tokens, role tags, bracketed markers and role labels);
- ``data_tag``: a hash of that block. The templates fence the block, last in the
  user message, between ``<<<CANDIDATES <tag>`` and ``<tag> CANDIDATES>>>``. A
  candidate cannot write the closing line: it cannot contain ``>>>``, and its
  author would have to know the hash of a text that contains that very hash.
  The tag is a function of the content, not a random draw, so the same
  candidates always get the same prompt and a rerun pays for nothing;
- ``n_candidates``.

Only markers change; every word a judge scores stays, so a question *about*
role tags or jailbreaks reads the same to the judge, and the templates say such
topics are content to score, never instructions.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

__all__ = ["CANDIDATE_VARIABLES", "candidate_block", "candidate_values", "data_tag", "neutralize"]

# The template variables ``candidate_values`` fills: they differ from call to call of an instance, so a
# template puts them last (after everything the instance's calls share; see ``Template.shared_user_chars``).
CANDIDATE_VARIABLES = frozenset({"candidates", "data_tag", "n_candidates"})

# What candidate text may not carry into a prompt. Each is replaced by a look-alike that a reader
# (human or model) still reads as the same words, but that is not the prompt's or a chat template's
# own marker: angle brackets become single guillemets, square brackets white square brackets, a
# role label's colon the modifier-letter colon.
_LT, _GT, _LSQ, _RSQ, _COLON = "\u2039", "\u203a", "\u27e6", "\u27e7", "\ua789"
_DELIMS = re.compile(r"<{3,}|>{3,}")  # our data delimiters
# <|im_start|>, <|eot_id|>, <|endoftext|>, and the full-width bars of DeepSeek's tokens (<｜User｜>)
_TEMPLATE_TOKEN = re.compile(r"<([|\uff5c])([^|\uff5c<>]{0,40})([|\uff5c])>")
_TAG = re.compile(  # <system>, </s>, <bos>, <start_of_turn>, <b class="x">, <br/>; not "x < y and z > w"
    r"<(\s*/?\s*[A-Za-z][\w:.-]{0,40}(?:\s+[\w:.-]+\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'|[^\s<>]+))*\s*/?\s*)>"
)
_COMMENT = re.compile(r"<!--|-->")  # an HTML comment's ends
_BRACKET_MARK = re.compile(  # [INST], [/INST], [SYS], [Paper 2] (a background header), [1] (another candidate)
    r"\[(\s*/?\s*(?:inst|sys|system|user|assistant|human|ai|paper\s*\d+|candidate\s*\d+|\d{1,3})\s*)\]"
    r"|\[(/?[A-Z]+(?:_[A-Z]+)+)\]",  # Mistral's control tokens: [SYSTEM_PROMPT], [TOOL_CALLS], [/TOOL_RESULTS]
    re.IGNORECASE,
)
_ROLE_LABEL = re.compile(  # "System:", "Assistant:", "### Instruction:", our own section names
    r"\b(system|assistant|user|human|developer|instructions?|background(?:\s+papers?)?|reference"
    r"|candidates?(?:\s+research\s+questions?)?)(\s*):",
    re.IGNORECASE,
)


def _visible(c: str) -> str:
    """White space stays; hidden characters go (zero-width, bidi, tag, private use, control); U+FFFD for a surrogate."""
    if c.isspace():
        return " "
    cat = unicodedata.category(c)
    if cat == "Cs":
        return "\ufffd"
    return "" if cat in ("Cf", "Cc", "Co") else c


def neutralize(text: str) -> str:
    """Candidate text as plain words on one line, unable to act on the prompt's structure.

    Hidden characters are dropped and whitespace collapsed (no new line, so no new section or
    role turn); our delimiters, chat-template tokens, tags, bracketed role and numbering markers and
    role labels get look-alike characters. Only markers change: the words a judge scores stay.
    """
    text = " ".join("".join(map(_visible, text)).split())
    text = _DELIMS.sub(lambda m: (_LT if m.group(0)[0] == "<" else _GT) * len(m.group(0)), text)
    text = _TEMPLATE_TOKEN.sub(lambda m: f"{_LT}{m.group(1)}{m.group(2)}{m.group(3)}{_GT}", text)
    text = _TAG.sub(lambda m: f"{_LT}{m.group(1)}{_GT}", text)
    text = _COMMENT.sub(lambda m: f"{_LT}!--" if m.group(0)[0] == "<" else f"--{_GT}", text)
    text = _BRACKET_MARK.sub(lambda m: f"{_LSQ}{m.group(1) or m.group(2)}{_RSQ}", text)
    return _ROLE_LABEL.sub(lambda m: f"{m.group(1)}{m.group(2)}{_COLON}", text)


def candidate_block(texts: Sequence[str]) -> str:
    """The candidates as the judge sees them, numbered from 0; the one place candidate text enters a prompt."""
    return "\n".join(f"[{i}] {neutralize(t)}" for i, t in enumerate(texts))


def data_tag(block: str) -> str:
    """The tag in the delimiter lines around ``block``: derived from the block, so stable across reruns."""
    return hashlib.blake2b(block.encode("utf-8"), digest_size=5, person=b"rqb-fence").hexdigest()


def candidate_values(texts: Sequence[str]) -> dict[str, str]:
    """The template variables that carry candidates: the block, its tag, and how many there are."""
    block = candidate_block(texts)
    return {"candidates": block, "data_tag": data_tag(block), "n_candidates": str(len(texts))}
