"""The builder's use of the well-formedness gate: per-item drops, their records, their counts.

The stages that write dataset text (contributions, gaps, author_rqs) keep the
texts of a reply that pass ``rqbench.wellformed`` and record each one that does
not as a ``GateDrop`` naming its rules; the records stage applies the same gate
once more to whatever it assembles. ``malformed_counts`` sums the drops per kind
and rule for the funnel, the manifest and the dataset card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rqbench import wellformed
from rqbench.records import GateDrop, MalformedCount


def drop_of(text: str, kind: wellformed.Kind, field: str, failures: Sequence[wellformed.Failure]) -> GateDrop:
    """The record of one refused text: its kind, where it stood, the rules it broke, its start."""
    rules = list(dict.fromkeys(f.rule.value for f in failures))
    return GateDrop(kind=kind.value, field=field, rules=rules, text=text.strip()[:300])


def gated_items(texts: Sequence[str], kind: wellformed.Kind, field: str) -> tuple[list[str], list[GateDrop]]:
    """The texts that pass the gate (stripped, in order) and a drop for each that does not.

    A text that repeats an earlier one but for case, spacing or end punctuation fails too (rule
    ``duplicate``), so a list never holds the same item twice.
    """
    kept: list[str] = []
    dropped: list[GateDrop] = []
    for i, (text, failures) in enumerate(zip(texts, wellformed.check_many(texts, kind))):
        if failures:
            dropped.append(drop_of(text, kind, f"{field}[{i}]", failures))
        else:
            kept.append(text.strip())
    return kept, dropped


def gated_text(text: str, kind: wellformed.Kind, field: str) -> GateDrop | None:
    """None when ``text`` passes the gate, else its drop."""
    failures = wellformed.check(text, kind)
    return drop_of(text, kind, field, failures) if failures else None


def malformed_counts(drops: Iterable[GateDrop]) -> dict[str, MalformedCount]:
    """Per kind (in the gate's order): the texts dropped, and per rule how many broke it (a text counts under each)."""
    items: Counter[str] = Counter()
    rules: dict[str, Counter[str]] = {}
    for d in drops:
        items[d.kind] += 1
        rules.setdefault(d.kind, Counter()).update(d.rules)
    order = [k.value for k in wellformed.Kind]
    return {
        k: MalformedCount(items=items[k], rules=dict(sorted(rules[k].items())))
        for k in sorted(items, key=lambda k: order.index(k) if k in order else len(order))
    }


def gate_fingerprint() -> dict[str, str]:
    """Part of a gated stage's fingerprint: a change to the gate redoes its items (their replies come from the cache)."""
    return {"wellformed": wellformed.fingerprint()}
