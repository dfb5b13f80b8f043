"""One outcome vocabulary: a rater's pick and the model's verdict map onto each other, and no module keeps its own."""

from __future__ import annotations

import re
from pathlib import Path

from rqbench.records import PICKS, Verdict, pick_of, verdict_of

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("rqbench", "evaluate", "space", "builder", "dataset_card")


def test_a_pick_and_a_verdict_map_both_ways():
    assert [verdict_of(p) for p in PICKS] == [Verdict.lose, Verdict.win, Verdict.tie]
    assert all(pick_of(verdict_of(p)) == p for p in PICKS)
    assert {pick_of(v) for v in Verdict} == set(PICKS)


def test_no_product_module_spells_the_picks_or_verdicts_again():
    """The words are declared in rqbench/records/outcomes.py; a second list of them is how the two copies drift."""
    lists = re.compile(r"""["'](gt|model|tie)["'],\s*["'](gt|model|tie)["'],\s*["'](gt|model|tie)["']""")
    enums = re.compile(r'win = "win"')
    found = []
    for folder in PRODUCT:
        for f in (ROOT / folder).rglob("*.py"):
            if f.name == "outcomes.py":
                continue
            text = f.read_text(encoding="utf-8")
            found += [f"{f.relative_to(ROOT)}: {m.group(0)}" for m in lists.finditer(text)]
            found += [f"{f.relative_to(ROOT)}: a Verdict enum" for _ in enums.finditer(text)]
    assert found == []
