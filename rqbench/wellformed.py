"""One well-formedness gate for every text the benchmark stores.

An LLM reply can be valid JSON of the right shape and still carry debris: a
cut-off JSON object inside a string, an echoed template slot (``<gap>``), the
prompt's own field names (``question: ...``), a list glued into one string, or
a statement with a "?" on the end. This module judges the text itself, for five
kinds (research question, gap, contribution or idea, problem statement,
main-idea headline), so that the builder, the records, the submission validator
and the Space all refuse the same things for the same named reasons.

Two standards (``Standard``). Text the builder's models extract from papers is
held to every rule. A submitted research question, which reaches a judge only
through ``rqbench.untrusted`` (fenced, markers neutralised) and a reader only as
escaped text, is refused only when it is not a question or cannot be shown
safely; what may be debris of our own pipeline goes to review with its reason,
and a token, tag, JSON fragment, field name or formula it names is its subject.

Every rule has a stable name (``Rule``); ``check`` returns every failure, never
raises, and runs in time linear in the text (bounded regex quantifiers, no
nested repetition, no recursion). ``require`` and ``validator`` raise a
ValueError whose text says plainly what to fix, because a re-ask quotes it back
to the model. The rules, the word ranges and the reasons for both are listed in
docs/wellformed.md.

The vocabulary the rules share (words, field names, slots, debris) is ``wellformed_vocabulary.py``; the
patterns a grammar-constrained decoder gets are ``grammar_patterns.py``. The prompt-echo rule compares a text with the packaged prompt templates
(``rqbench/prompts/*/*.md``); they are read once, on first use.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rqbench.wellformed_vocabulary import (
    ANGLE,
    ANY_ANGLE,
    AUX,
    CHAT_TAG,
    CITE_KEYS,
    CITE_NUMBERS,
    CLAUSE_SPLIT,
    COPULA,
    DANGLING_END,
    DANGLING_START,
    DOUBLE_BRACES,
    ECHO_CONTENT,
    ECHO_RUN,
    ELLIPSIS_END,
    ENTITY,
    ENUMERATOR,
    FIELD_NAMES,
    FUNCTION_WORDS,
    HTML_TAGS,
    INSERT,
    INVISIBLE,
    JSON_DEBRIS,
    KEY_ANY,
    KEY_AT_CLAUSE,
    KEY_LABEL,
    KEY_VALUE_RUN,
    LABEL_WHOLE,
    LATEX,
    LEADING_CONJ,
    LETTERS,
    LINE_LIST,
    LIST_MARKER,
    LOREM,
    MARKDOWN,
    MATH,
    QUESTION_REPLY_FIELDS,
    QUOTATION,
    RELATIVE,
    RENDERED_MATERIAL,
    REPEATED_PUNCT,
    SENTENCE_END,
    SNAKE_FIELDS,
    SNAKE_TOKEN,
    SPACE,
    STAND_IN_TOKEN,
    STAND_IN_WHOLE,
    TEMPLATE_VAR,
    UNCLOSED_ANGLE,
    WH,
    WORD,
)

# --------------------------------------------------------------------------
# Kinds, rules, failures
# --------------------------------------------------------------------------


class Kind(str, enum.Enum):
    """What a text is meant to be; the gate's rules and word ranges depend on it."""

    research_question = "research_question"
    gap = "gap"
    contribution = "contribution"  # also an idea: both are short statements of what a paper does
    problem_statement = "problem_statement"
    headline = "headline"

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


class Rule(str, enum.Enum):
    """The gate's rules, by stable name (documented one by one in docs/wellformed.md)."""

    empty = "empty"
    too_short = "too_short"
    too_long = "too_long"
    not_a_question = "not_a_question"
    several_questions = "several_questions"
    no_capital_start = "no_capital_start"
    fragment = "fragment"
    cut_off = "cut_off"
    placeholder = "placeholder"
    list_marker = "list_marker"
    json_debris = "json_debris"
    double_quote = "double_quote"
    markup_debris = "markup_debris"
    key_value_run = "key_value_run"
    field_name_echo = "field_name_echo"
    prompt_echo = "prompt_echo"
    few_letters = "few_letters"
    repeated_punctuation = "repeated_punctuation"
    repeated_words = "repeated_words"
    overlong_word = "overlong_word"
    line_break = "line_break"
    control_characters = "control_characters"
    duplicate = "duplicate"  # only from check_many: a text that repeats an earlier one


class Standard(str, enum.Enum):
    """Whose text the gate judges; the standard decides which rules apply and which of them refuse.

    ``extracted``: text the builder's models extract from papers (problem statements, headlines,
    ideas, contributions, gaps, author-anchored RQs), and every stored dataset row. Every rule
    refuses: there LaTeX, JSON syntax, a template token or a field name is debris of parsing or of the
    reply, and a dropped item is recorded by rule (no one reviews a build item by item).

    ``submitted``: a research question that a person or a model under test wrote, to be judged. It
    reaches a judge only through ``rqbench.untrusted`` (fenced, one line, markers neutralised) and a
    reader only as escaped text, so the gate refuses only what is not a question or cannot be shown
    safely (``Severity.refuse``); what may be debris of our own pipeline goes to review with its
    reason (``Severity.review``); and the syntax a question about LLM research names (tokens, tags,
    JSON, LaTeX, markdown, field names, placeholders that are not ours) is its subject, not a finding.
    """

    extracted = "extracted"
    submitted = "submitted"


class Severity(str, enum.Enum):
    """What a failure does: ``refuse`` (the text is not accepted) or ``review`` (accepted, held for a person to read).

    Under ``Standard.extracted`` every failure refuses.
    """

    refuse = "refuse"
    review = "review"


@dataclass(frozen=True, slots=True)
class Failure:
    """One broken rule: its name, a message that says what is wrong and how to fix it, and what it does."""

    rule: Rule
    message: str
    severity: Severity = Severity.refuse

    @property
    def refuses(self) -> bool:
        return self.severity is Severity.refuse


@dataclass(frozen=True, slots=True)
class Bounds:
    """The size a kind of text may have: words (see ``words``) and characters."""

    min_words: int
    max_words: int
    max_chars: int


# Word ranges per kind. Characters follow the limits of the reply models in records.py
# (600 for an RQ, 1000 for long text, 400 for a headline); test_wellformed keeps them in step.
BOUNDS: dict[Kind, Bounds] = {
    Kind.research_question: Bounds(min_words=6, max_words=80, max_chars=600),
    Kind.gap: Bounds(min_words=6, max_words=150, max_chars=1000),
    Kind.contribution: Bounds(min_words=4, max_words=150, max_chars=1000),
    Kind.problem_statement: Bounds(min_words=10, max_words=180, max_chars=1000),
    Kind.headline: Bounds(min_words=3, max_words=40, max_chars=400),
}

# Fewer letters than this share of the non-space characters ([MATH] counts as one symbol) is not
# prose; nor is a text with more [MATH] placeholders than half its word count.
MIN_LETTER_SHARE = 0.6
# Prose is made of words: when over half the words of an extracted text are single letters, it is initials
# ("A C Heusser, P C Fitzpatrick, J R Manning, 2021") or a word spelled out ("M N E T R A L I C E").
MAX_SINGLE_LETTER_SHARE = 0.5
MIN_WORDS_FOR_LETTER_SHARE = 4

# No word of prose runs longer than this without a hyphen or a space ("electroencephalographically" has 27);
# longer runs are hashes, base64, a key held down, or words glued together.
MAX_WORD_CHARS = 30
OVERLONG = re.compile(rf"[^\W_]{{{MAX_WORD_CHARS + 1}}}")


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of the gate's source (this module and the vocabulary its rules share): a stage whose output the gate
    decides redoes its items when either changes."""
    h = hashlib.blake2b(digest_size=8)
    for source in (Path(__file__), Path(__file__).with_name("wellformed_vocabulary.py")):
        h.update(source.read_bytes())
    return h.hexdigest()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def words(text: str, *, split: Literal["letters", "spaces"] = "letters") -> list[str]:
    """The words in ``text``. ``"letters"``: runs of letters or digits joined by hyphens or apostrophes, [MATH]
    not counted (what the gate's bounds count). ``"spaces"``: every run of non-space characters (what the dataset
    card's length statistics have always counted, so published figures keep their meaning)."""
    if split == "spaces":
        return text.split()
    return WORD.findall(MATH.sub(" ", text))


def _clauses_open_with_question(text: str) -> bool:
    """Does some clause open like a question (How ..., Does ..., Given X, can ...) or hold a wh-word early
    (To what extent ..., Given X and Y how ...)? A statement with "?" appended has neither."""
    for clause in CLAUSE_SPLIT.split(text):
        ws = [w.lower().replace("\u2019", "'") for w in WORD.findall(clause)[:9]]
        while ws and ws[0] in LEADING_CONJ:
            ws = ws[1:]
        if ws and (ws[0] in WH or ws[0] in AUX or any(w in WH for w in ws[1:8])):
            return True
    return False


def _letter_share(text: str) -> float:
    visible = SPACE.sub("", MATH.sub("#", text))
    if not visible:
        return 0.0
    return (len(visible) - len(LETTERS.sub("", visible))) / len(visible)


def _single_letter_share(ws: Sequence[str]) -> float:
    """The share of single-letter words among the words that hold a letter (0 below MIN_WORDS_FOR_LETTER_SHARE)."""
    lettered = [w for w in ws if LETTERS.search(w)]
    if len(lettered) < MIN_WORDS_FOR_LETTER_SHARE:
        return 0.0
    return sum(len(w) == 1 for w in lettered) / len(lettered)


def _bracket_problem(text: str) -> str | None:
    """Why the brackets do not balance, or None; an enumerator such as "1)" or "b)" closes nothing on purpose."""
    for opening, closing in ("()", "[]"):
        depth = 0
        for m in re.finditer(rf"[{re.escape(opening + closing)}]", text):
            if m.group(0) == opening:
                depth += 1
            elif depth > 0:
                depth -= 1
            elif not (closing == ")" and ENUMERATOR.search(text, max(0, m.start() - 5), m.start())):
                return f"a '{closing}' closes nothing"
        if depth > 0:
            return f"a '{opening}' is never closed"
    return None


def _repetition(tokens: Sequence[str]) -> str | None:
    """A loop in the words: a 1-4 word unit three times running, a 5-24 word unit twice, or few distinct words.

    For each unit length n, position i "matches" when word i equals word i+n; a unit repeats when
    enough positions in a row match. The matches are searched as bytes, so each n costs one pass.
    """
    lowered = [t.lower() for t in tokens]
    for n in range(1, 25):
        if len(lowered) < 2 * n:
            break
        need = 2 * n if n <= 4 else n  # matches in a row: three copies of a short unit, two of a long one
        matches = bytes(map(operator.eq, lowered, lowered[n:]))
        pos = matches.find(b"\x01" * need)
        while pos >= 0:
            if any(c.isalpha() for w in lowered[pos : pos + n] for c in w):
                return f"a run of {n} word(s) occurs again right after itself"
            end = matches.find(b"\x00", pos)  # a unit of numbers only ("1, 1, 1"): skip its whole run
            if end < 0:
                break
            pos = matches.find(b"\x01" * need, end)
    if len(lowered) >= 12 and len(set(lowered)) / len(lowered) < 0.3:
        return f"only {len(set(lowered))} distinct words among {len(lowered)}"
    return None


def _prompt_tokens(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[^\W_]+", text)]


@functools.lru_cache(maxsize=1)
def _instruction_runs() -> frozenset[tuple[str, ...]]:
    """Every run of _ECHO_RUN words of the packaged prompt templates, line by line, slots removed."""
    runs: set[tuple[str, ...]] = set()
    for path in sorted((Path(__file__).parent / "prompts").glob("*/*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for piece in re.split(r"\{\{[^}]*\}\}", line):
                toks = _prompt_tokens(piece)
                for i in range(len(toks) - ECHO_RUN + 1):
                    run = tuple(toks[i : i + ECHO_RUN])
                    if sum(1 for w in run if w not in FUNCTION_WORDS) >= ECHO_CONTENT:
                        runs.add(run)
    return frozenset(runs)


@functools.lru_cache(maxsize=1)
def _prompt_labels() -> re.Pattern[str]:
    """The capitalised labels the templates put before material ("PAPER M:", "BACKGROUND:", "<<<GAPS")."""
    labels: set[str] = set()
    for path in sorted((Path(__file__).parent / "prompts").glob("*/*.md")):
        text = path.read_text(encoding="utf-8")
        labels.update(m.group(1) for m in re.finditer(r"(?m)^([A-Z][A-Z' ]{2,40}[A-Z])(?: \([^)\n]*\))?:", text))
    alternatives = "|".join(sorted((re.escape(x) for x in labels), key=len, reverse=True)) or r"(?!x)x"
    return re.compile(rf"(?:^|\n)\s{{0,3}}(?:{alternatives})\b[^:\n]{{0,60}}:")


def _echoes_instructions(text: str) -> bool:
    toks = _prompt_tokens(text)
    runs = _instruction_runs()
    return not runs.isdisjoint(zip(*(toks[i:] for i in range(ECHO_RUN))))


# --------------------------------------------------------------------------
# The gate
# --------------------------------------------------------------------------


def check(text: str, kind: Kind | str, standard: Standard | str = Standard.extracted) -> list[Failure]:
    """Every rule ``text`` breaks as a ``kind`` under ``standard``; [] when it is well formed. Never raises on a str.

    The text is judged stripped of surrounding whitespace, as the records store it. Under
    ``Standard.submitted`` some rules take a narrower form and each failure says whether it refuses
    or goes to review (docs/wellformed.md, "Refused, reviewed, or subject matter").
    """
    kind = Kind(kind)
    sub = Standard(standard) is Standard.submitted
    b = BOUNDS[kind]
    t = text.strip()
    what = kind.label
    out: list[Failure] = []

    def fail(rule: Rule, message: str, review: bool = False) -> None:
        out.append(Failure(rule, message, Severity.review if sub and review else Severity.refuse))

    if not t:
        fail(Rule.empty, f"the {what} is empty: write it out")
        return out

    ws = words(t)
    n = len(ws)
    is_rq = kind is Kind.research_question
    # A submitted question may quote a fragment (a prompt, a question, a JSON value): quoted text is mentioned, not
    # used, so the rules that read the question's own structure read it with each quotation as one word.
    own = _unquoted(t) if sub else t

    # --- size
    if n < b.min_words:
        fail(Rule.too_short, f"it has {n} word(s); a {what} needs {b.min_words} to {b.max_words}")
    if n > b.max_words or len(t) > b.max_chars:
        fail(
            Rule.too_long,
            f"it has {n} words and {len(t)} characters; a {what} has at most {b.max_words} words and "
            f"{b.max_chars} characters: say it in one shorter piece",
        )

    # --- a research question is one question
    if is_rq:
        if not t.endswith("?"):
            fail(Rule.not_a_question, "it does not end with '?': write it as one question that ends with '?'")
        elif not (_clauses_open_with_question(own) or (sub and _clauses_open_with_question(_last_sentence(own)))):
            fail(
                Rule.not_a_question,
                "it reads as a statement with '?' added: ask it as a question (How, What, Which, Why, Does, Can, "
                "To what extent ...)",
            )
        if "?" in own[:-1]:
            fail(Rule.several_questions, "it holds more than one '?': give exactly one question per entry")
        if not ("A" <= t[0] <= "Z"):
            fail(
                Rule.no_capital_start,
                "it does not start with a capital letter: begin like 'How ...' or 'Does ...'",
                review=True,
            )

    # --- pieces of something longer
    start = _fragment_start(t, is_rq)
    if start:
        fail(Rule.fragment, f"it looks like a piece cut from a longer text ({start}): write it whole")
    # A submitted question is whole by the rules above (a capital, an interrogative opening, one "?"); a bracket
    # inside it that does not pair up is notation ("[0.9, 1.0)") or a slip, shown safely either way.
    brackets = None if sub else _bracket_problem(t)
    if brackets:
        fail(Rule.fragment, f"it looks like a piece cut from a longer text ({brackets}): write it whole")
    if ELLIPSIS_END.search(t) or (not t.endswith("?") and _ends_mid_sentence(t, ws)):
        fail(Rule.cut_off, "it stops mid-sentence: finish the sentence")

    # --- slots and stand-ins
    ph, whole = _placeholder(own, sub) if sub else _placeholder(t, sub)
    if ph:
        fail(Rule.placeholder, f"it holds a placeholder ({ph}), not content: write the actual {what}", review=not whole)
    if LIST_MARKER.match(t) or KEY_LABEL.match(t) or LINE_LIST.search(t):
        fail(
            Rule.list_marker,
            f"it carries a list marker or label: write only the {what}, unnumbered, one per entry",
            review=True,
        )

    # --- debris
    m = None if sub else JSON_DEBRIS.search(t)
    if m:
        fail(Rule.json_debris, f"it contains JSON syntax ({m.group(0)!r}): write plain text, not JSON")
    if is_rq and '"' in t and (t.count('"') % 2 or t.startswith('"') or t.rstrip("?").endswith('"')):
        fail(
            Rule.double_quote,
            'its straight double quotes do not pair up inside the question ("): quote a phrase as "like this", '
            "or drop them",
            review=True,
        )
    md = CITE_KEYS.search(t) if sub else _markup(t, is_rq)
    if md:
        shown = repr(md.group(0)[:40]) if isinstance(md, re.Match) else md
        fail(Rule.markup_debris, f"it contains markup ({shown}): write plain text", review=True)
    m = None if sub else KEY_VALUE_RUN.search(t)
    if m:
        fail(Rule.key_value_run, f"it reads as 'key: value' pairs ({m.group(0).strip()!r}): write a sentence")
    echo = _field_key(own, kind) if sub else _field_echo(t)
    if echo:
        fail(
            Rule.field_name_echo,
            f"it repeats the reply's field name {echo!r}: write only the {what} itself",
            review=True,
        )
    pe = _prompt_echo(t, sub)
    if pe:
        fail(
            Rule.prompt_echo,
            f"it repeats the instructions or the prompt's material ({pe}): write your own {what}",
            review=True,
        )

    # --- is it prose at all
    if _letter_share(t) < MIN_LETTER_SHARE or 2 * len(MATH.findall(t)) > n:
        fail(Rule.few_letters, f"it is mostly symbols, digits or [MATH]: write the {what} in words")
    elif not sub and _single_letter_share(ws) > MAX_SINGLE_LETTER_SHARE:
        fail(
            Rule.few_letters,
            f"it is mostly single letters (initials, or a word spelled out): write the {what} in words",
        )
    rp = _repeated_punctuation(own, sub)
    if rp:
        fail(
            Rule.repeated_punctuation, f"it repeats punctuation ({rp.group(0)!r}): write a normal sentence", review=True
        )
    rep = _repetition(words(own) if sub else ws)
    if rep:
        fail(Rule.repeated_words, f"it repeats itself ({rep}): write the {what} once")
    long_run = OVERLONG.search(t)
    if long_run:
        fail(
            Rule.overlong_word,
            f"it has a run of over {MAX_WORD_CHARS} letters or digits with no space: write words",
            review=True,
        )

    # --- characters
    if "\n" in t and kind is not Kind.problem_statement:
        fail(Rule.line_break, f"it spans several lines: write the {what} on one line", review=True)
    bad = sorted(f"U+{ord(c):04X}" for c in set(t) if _is_hidden(c))
    if bad:
        fail(Rule.control_characters, f"it contains control or invisible characters ({', '.join(bad[:5])}): drop them")
    return out


def _is_hidden(c: str) -> bool:
    if c == "\n":
        return False
    cat = unicodedata.category(c)
    return cat == "Cc" or cat in INVISIBLE


def _ends_mid_sentence(t: str, ws: list[str]) -> bool:
    """Ends on a comma, an open bracket, a connective ("... of the"), or a relative clause's verb ("..., which is")."""
    if t[-1] in ",;:-(\u2013\u2014[":
        return True
    if not ws or not t[-1].isalnum():
        return False
    return ws[-1] in DANGLING_END or (len(ws) > 1 and ws[-2] in RELATIVE and ws[-1] in COPULA)


def _fragment_start(t: str, is_rq: bool) -> str | None:
    """How the text starts when no sentence starts that way: on closing punctuation, "1]", or a connective."""
    if re.match(r"[)\]}.,;:!?%]|\d{1,4}\s{0,2}\]", t):
        return f"it starts with {t[:3]!r}"
    first = WORD.match(t)
    if not is_rq and first and first.start() == 0 and first.group(0) in DANGLING_START:
        return f"it starts with {first.group(0)!r}"
    return None


def _placeholder(t: str, submitted: bool) -> tuple[str | None, bool]:
    """(what stands in for content, whether it is the whole text), or (None, False).

    A whole text that is a stand-in or a bare label is no content at all. Inside a text, an
    extracted item refuses every slot, template variable and stand-in word; a submitted question
    only what echoes our own templates (their angle-bracket slots and ``{{variables}}``), an
    "[insert ...]" and lorem ipsum: "<image>", "{paragraph}" or "TODO" there is what it asks about.
    """
    bare = t.casefold().strip(" \t\n\"'`()[]")
    if bare in STAND_IN_WHOLE or bare.rstrip(".!?:;") in STAND_IN_WHOLE or LABEL_WHOLE.fullmatch(t.strip("\"'` ")):
        return repr(t[:40]), True
    if submitted:
        slots, variables = _template_slots()
        for m in ANY_ANGLE.finditer(t):
            if m.group(1).split()[0].lower() in slots:
                return m.group(0), False
        for m in DOUBLE_BRACES.finditer(t):
            if m.group(1).strip().lower() in variables:
                return m.group(0), False
        m = INSERT.search(t) or LOREM.search(t)
        return (m.group(0), False) if m else (None, False)
    for m in ANGLE.finditer(t):
        if m.group(2).lower() not in HTML_TAGS:
            return m.group(0), False
    m = TEMPLATE_VAR.search(t) or INSERT.search(t) or STAND_IN_TOKEN.search(t)
    return (m.group(0), False) if m else (None, False)


@functools.lru_cache(maxsize=1)
def _template_slots() -> tuple[frozenset[str], frozenset[str]]:
    """The slot names of the packaged templates: the first word of each "<...>", and each "{{name}}"."""
    slots: set[str] = set()
    variables: set[str] = set()
    for path in sorted((Path(__file__).parent / "prompts").glob("*/*.md")):
        text = path.read_text(encoding="utf-8")
        slots.update(m.group(1).split()[0].lower() for m in ANY_ANGLE.finditer(text))
        variables.update(m.group(1).strip().lower() for m in DOUBLE_BRACES.finditer(text))
    return frozenset(slots), frozenset(variables)


def _last_sentence(t: str) -> str:
    """What follows the last full stop or "!" that ends a sentence: a submitted question after its context."""
    return SENTENCE_END.split(t)[-1]


def _repeated_punctuation(t: str, submitted: bool) -> re.Match[str] | None:
    """A run of repeated punctuation; in a submitted question not one inside a token ("std::vector", "a..b")."""
    for m in REPEATED_PUNCT.finditer(t):
        inside = m.start() > 0 and m.end() < len(t) and t[m.start() - 1].isalnum() and t[m.end()].isalnum()
        if not (submitted and inside):
            return m
    return None


def _unquoted(t: str) -> str:
    """The text with each quotation (straight or curly double quotes, single quotes, backticks) as one word."""
    return QUOTATION.sub(" quoted ", t)


def _field_key(t: str, kind: Kind) -> str | None:
    """A field of the replies that carry ``kind`` used as a key ("question: ...", '{"research_questions": ').

    The rule for a submitted question: the reply's own structure around it. A field name as a word
    ("the gap_addressing score") or another reply's key in quoted JSON is what the question is about.
    """
    fields = QUESTION_REPLY_FIELDS if kind is Kind.research_question else FIELD_NAMES
    for m in KEY_ANY.finditer(t):
        key = m.group(1).strip().lower().replace(" ", "_")
        if key in fields:
            return m.group(1).strip()
    return None


def _markup(t: str, is_rq: bool) -> str | None:
    for m in ANGLE.finditer(t):
        if m.group(2).lower() in HTML_TAGS:
            return f"the tag {m.group(0)!r}"
    for rx in (LATEX, MARKDOWN, ENTITY, CITE_NUMBERS, CITE_KEYS, CHAT_TAG):
        m = rx.search(t)
        if m:
            return repr(m.group(0)[:40])
    opened = UNCLOSED_ANGLE.search(t)
    if opened:  # a tag or template slot whose ">" never came: the reply was cut inside it, or echoed its shape
        return f"the unclosed {opened.group(0)!r}"
    if is_rq:
        if "\\" in t:
            return "a backslash"
        stray = re.search(r"[<>]", ANGLE.sub(" ", t))
        if stray:
            return f"a stray {stray.group(0)!r}; write comparisons in words"
    return None


def _field_echo(t: str) -> str | None:
    """A reply field's name, one of the gate's own rule names (which a re-ask quotes), or a text that is
    one snake_case identifier and nothing else."""
    rule_names = [r.value for r in Rule if "_" in r.value]
    for m in SNAKE_TOKEN.finditer(t):
        token = m.group(0).lower()
        if token in SNAKE_FIELDS or any(name in token for name in rule_names) or m.group(0) == t.rstrip(".!?"):
            return m.group(0)
    for m in KEY_AT_CLAUSE.finditer(t):
        key = m.group(1).strip().lower().replace(" ", "_")
        if key in FIELD_NAMES:
            return m.group(1).strip()
    return None


def _prompt_echo(t: str, submitted: bool = False) -> str | None:
    """Our prompts' material or labels; for an extracted item also six words in a row of their instructions.

    A submitted question may share wording with our rubric when it asks about it; only the structure
    our prompts wrap around material ("(section: ...)", "<<<", "BACKGROUND:") is an echo there.
    """
    m = RENDERED_MATERIAL.search(t) or _prompt_labels().search(t)
    if m:
        return repr(m.group(0).strip())
    if not submitted and _echoes_instructions(t):
        return f"{ECHO_RUN} or more words in a row from a prompt template"
    return None


def is_wellformed(text: str, kind: Kind | str, standard: Standard | str = Standard.extracted) -> bool:
    """No failure that refuses (a submitted question may still carry failures that go to review)."""
    return not refusals(check(text, kind, standard))


def refusals(failures: Iterable[Failure]) -> list[Failure]:
    """The failures that refuse the text."""
    return [f for f in failures if f.refuses]


def reviews(failures: Iterable[Failure]) -> list[Failure]:
    """The failures that send the text to review (only under ``Standard.submitted``)."""
    return [f for f in failures if not f.refuses]


# --------------------------------------------------------------------------
# Raising, for validators; rendering, for reports
# --------------------------------------------------------------------------


class NotWellformed(ValueError):
    """A text broke the gate; ``failures`` keeps the rules for counting, the message says what to fix."""

    def __init__(self, kind: Kind, failures: list[Failure]):
        self.kind = kind
        self.failures = failures
        super().__init__(explain(kind, failures))


def explain(kind: Kind | str, failures: Sequence[Failure]) -> str:
    """One paragraph naming each broken rule and what to fix: the text a re-ask quotes back to the model."""
    kind = Kind(kind)
    names = ", ".join(dict.fromkeys(f.rule.value for f in failures))
    fixes = "; ".join(f"[{f.rule.value}] {f.message}" for f in failures)
    return f"not a well-formed {kind.label} (rules: {names}): {fixes}"


def require(text: str, kind: Kind | str, standard: Standard | str = Standard.extracted) -> str:
    """``text`` stripped, or NotWellformed (a ValueError) naming every rule broken that refuses it."""
    kind = Kind(kind)
    failures = refusals(check(text, kind, standard))
    if failures:
        raise NotWellformed(kind, failures)
    return text.strip()


def validator(kind: Kind | str, standard: Standard | str = Standard.extracted) -> Callable[[str], str]:
    """A function for pydantic's AfterValidator (or a field_validator) that applies the gate to one field."""
    kind = Kind(kind)

    def gate(value: str) -> str:
        return require(value, kind, standard)

    gate.__name__ = f"wellformed_{kind.value}"
    return gate


def describe(failure: Failure, *, record: str, field: str) -> str:
    """One line for a report or a validation error: which record, which field, which rule, what is wrong."""
    return f"{record}: {field}: {failure.rule.value}: {failure.message}"


# --------------------------------------------------------------------------
# Duplicates and lists
# --------------------------------------------------------------------------

_SPACE_BEFORE = re.compile(r" ([,.;:?!)\]])")
_SPACE_AFTER = re.compile(r"([(\[]) ")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def normalize_for_duplicates(text: str) -> str:
    """The form two texts share when they differ only in spacing, case, quote style or end punctuation."""
    t = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
    t = " ".join(t.split())
    t = _SPACE_BEFORE.sub(r"\1", t)
    t = _SPACE_AFTER.sub(r"\1", t)
    return t.strip(" .?!;:,'\"`")


def duplicates(texts: Iterable[str]) -> dict[int, int]:
    """For each text that repeats an earlier one, its index mapped to the index of the first."""
    first: dict[str, int] = {}
    out: dict[int, int] = {}
    for i, t in enumerate(texts):
        key = normalize_for_duplicates(t)
        if key in first:
            out[i] = first[key]
        else:
            first[key] = i
    return out


def check_many(
    texts: Sequence[str], kind: Kind | str, standard: Standard | str = Standard.extracted
) -> list[list[Failure]]:
    """``check`` on each text of one list, plus ``duplicate`` (which refuses) on a text that repeats an earlier one."""
    kind = Kind(kind)
    result = [check(t, kind, standard) for t in texts]
    for i, j in duplicates(texts).items():
        message = f"it repeats entry {j} (case, spacing and end punctuation aside): give a different {kind.label}"
        result[i].append(Failure(Rule.duplicate, message))
    return result
