"""JSON-schema ``pattern``s for grammar-constrained decoders (llama.cpp, vLLM, the embedded runtime): what a decoder may
write for a research question or another extracted text. Each is a necessary condition of the well-formedness gate,
never a sufficient one: whatever a pattern refuses, the gate refuses too."""

from __future__ import annotations

from rqbench.wellformed import BOUNDS, Kind

# A JSON-schema ``pattern`` for a research question, for llama.cpp and vLLM grammars: a capital
# ASCII letter first; then 8 to 598 characters with no brace, angle bracket, straight double quote,
# backslash, "?", line break or tab; then the one closing "?". 10 to 600 characters in all, the
# gate's character bound. It is a necessary condition of the gate, never a sufficient one: every
# (stripped) text the pattern refuses, the gate refuses too (test_wellformed checks it), except a
# phrase in straight double quotes inside the question, which the gate takes and a grammar, writing
# the JSON string raw, cannot (a decoder writes curly quotes).
QUESTION_PATTERN = r'^[A-Z][^{}<>"\\?\n\r\t]{8,598}\?$'

# The builder's grammar for an author-anchored RQ is stricter, because there a weak grammar-constrained
# model writes the question from scratch: it must open with an interrogative word or phrase (the
# embedded model otherwise writes a statement and appends "?"), stay within 400 characters (it
# otherwise rambles and repeats), and hold no square bracket or "@" (with which it copies its
# prompt's rendered citations "[@key]" and "[MATH]" placeholders). The submission schema keeps
# QUESTION_PATTERN, the gate's necessary condition: a submitted RQ may hold a bracket ("in [0, 1]").
BUILDER_QUESTION_OPENINGS = (
    "How",
    "What",
    "Which",
    "Why",
    "When",
    "Where",
    "Who",
    "Whether",
    "To what extent",
    "In what",
    "Under what",
    "Is",
    "Are",
    "Do",
    "Does",
    "Did",
    "Can",
    "Could",
    "Will",
    "Would",
    "Should",
    "May",
    "Might",
    "Has",
    "Have",
)

BUILDER_QUESTION_PATTERN = r"^(" + "|".join(BUILDER_QUESTION_OPENINGS) + r') [^{}<>"\\?\[\]@\n\r\t]{8,400}\?$'

# The builder's other texts (gaps, contributions, ideas, problem statements, headlines) open with a capitalised
# word: a capital letter, then a small letter or a space ("A fix ..."). Written from scratch under a grammar, the
# embedded model otherwise opens with list markers ("2. Information ..."), numbers ("1.3.2.0.4:5687") and its
# prompt's shouted labels ("M'S CONTRIBUTIONS:", "CITED WORK_2017"), every one of which the gate then drops
# (the offline sample's gaps, measured). A text that opens with an acronym ("GPT-2 ...") is refused too; the
# decoder writes its words out instead.
BUILDER_TEXT_OPENING = "[A-Z][a-z ]"


def grammar_pattern(kind: Kind | str, max_chars: int | None = None) -> str:
    """The JSON-schema ``pattern`` a grammar-constrained decoder gets for a text of ``kind``.

    A research question gets ``BUILDER_QUESTION_PATTERN``. Every other kind opens with a capitalised word
    (``BUILDER_TEXT_OPENING``) and gets its character bound
    (``max_chars`` may lower it, for a reply model that asks for less) with no brace, angle bracket,
    straight double quote, backslash, square bracket, "@", line break or tab: the debris a regular grammar
    can keep out (brackets and "@" are how a model copies the prompt's "[@key]" citations and "[MATH]").
    The quote and the backslash are refused because the grammar writes the JSON string raw (an
    escape would need its own rule); the gate allows both in these kinds, so here the pattern is
    stricter than the gate, and a decoder writes curly quotes instead. Patterns go into the schema
    only (``json_schema_extra``); validation is the gate's, for every model.
    """
    kind = Kind(kind)
    if kind is Kind.research_question:
        return BUILDER_QUESTION_PATTERN
    b = BOUNDS[kind]
    top = b.max_chars if max_chars is None else min(b.max_chars, max_chars)
    least = 2 * b.min_words - 1  # the shortest text with min_words words of one letter each
    return rf'^{BUILDER_TEXT_OPENING}[^{{}}<>"\\\[\]@\n\r\t]{{{least - 2},{top - 2}}}$'
