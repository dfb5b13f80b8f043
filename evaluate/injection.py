"""Spot submitted text that tries to talk to the judge instead of asking a research question.

Submitted RQs are untrusted: they are pasted into judge prompts. The judge
prompts delimit them and say they are data (see ``judges.base``); this module
is the second line, run at submission time. Each rule names what it caught, so
a rejected submitter reads the reason, and a maintainer can see which rule
fired. The rules aim at text no research question needs: words addressed to an
evaluator, claimed scores, JSON, chat role tags, our own delimiters, and
invisible characters.
"""

from __future__ import annotations

import re
import unicodedata

_RUBRIC_KEYS = (
    r"originality|gap[_ ]addressing|non[_ -]?obviousness|relevance|source[_ ]bound(?:_score|edness)?"
    r"|diagnostic[_ ](?:test[_ ])?score|pairwise[_ ]scores?|covering[_ ]subset|ranking"
)

# (reason, pattern); case-insensitive unless the pattern says otherwise.
RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "addresses the judge: asks to ignore or override instructions",
        re.compile(
            r"\b(ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}\b(instruction|prompt|rule|rubric|guideline|"
            r"above|previous|prior|system)s?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "addresses the judge: speaks to the evaluator or model",
        re.compile(
            r"(^|[.!?]\s*|\b(dear|attention|note to( the)?|hey|hello)\s+)(the\s+)?(judge|reviewer|evaluator|grader|"
            r"assistant|language model|llm|ai)\s*[,:!]|\byou (are|must|should|will) (now )?(act|be|score|rate|give|"
            r"assign|rank|output|respond|reply|return|ignore)\b|\bas an ai\b|\bnew instructions?\b|"
            r"\bsystem prompt\b|\bjailbreak\b",
            re.IGNORECASE,
        ),
    ),
    (
        "claims a score",
        re.compile(
            rf"\b({_RUBRIC_KEYS})\b\s*[\"']?\s*[:=]\s*\d|"
            r"\b(give|assign|award|rate|score|grade|rank)\b[^.?!]{0,40}\b(maximum|max|full|perfect|highest|top)\b"
            r"[^.?!]{0,20}\b(score|marks?|points?|rating|grade|rank)|"
            r"\b(deserves?|merits?|earns?)\b[^.?!]{0,20}\b(a |the )?(maximum|max|full|perfect|highest|top)\b|"
            r"\b(rank|place|put)\b[^.?!]{0,20}\b(this|me|it)\b[^.?!]{0,20}\b(first|highest|top|#\s*1)\b|"
            r"\b10\s*/\s*10\b|\b3\s*/\s*3\b|\b4\s*/\s*4\b",
            re.IGNORECASE,
        ),
    ),
    (
        "contains a JSON fragment",
        re.compile(r"[{\[]\s*\"[^\"]{1,40}\"\s*:|\"\s*:\s*[\[{\d\"]|```|\}\s*,\s*\{|^\s*[{\[]", re.IGNORECASE),
    ),
    (
        "contains a chat role tag or template marker",
        re.compile(
            r"<\|[a-z_ ]{1,20}\|>|\[/?INST\]|<<\s*/?SYS\s*>>|</?\s*(system|assistant|user|s|im_start|im_end)\s*>|"
            r"(^|\n)\s*#{0,3}\s*(system|assistant|user|human|instruction)\s*:|\b(role|content)\"\s*:",
            re.IGNORECASE,
        ),
    ),
    (
        "contains the judge prompt's data delimiters",
        re.compile(r"<<<|>>>|\bCANDIDATES\b(?=\s*>>>)|\bBACKGROUND\s*:", re.IGNORECASE),
    ),
]

_INVISIBLE = {"Cf", "Co", "Cs"}  # format (zero-width, bidi overrides), private use, surrogates


def scan_for_injection(text: str) -> list[str]:
    """The reasons ``text`` looks like an attempt to steer a judge; [] when it looks like a plain question."""
    reasons = [reason for reason, pattern in RULES if pattern.search(text)]
    hidden = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in _INVISIBLE})
    controls = [c for c in text if unicodedata.category(c) == "Cc" and c not in "\t"]
    if hidden:
        reasons.append(f"contains invisible or format characters ({', '.join(hidden[:5])})")
    if controls:
        reasons.append("contains control characters or line breaks")
    return reasons
