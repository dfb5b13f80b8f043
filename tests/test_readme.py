"""The README says what a user does; measured figures live in docs/benchmarks.md, which it links."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
# a measurement: a number with a unit of time, size or ratio ("0.34 s", "403 MB", "108x", "12.5%")
MEASURED = re.compile(r"\b\d[\d.,]*\s?(?:ms|s|min|minutes|seconds|[kMG]i?B|x|%)(?![\w-])")


def test_the_readme_quotes_no_measurement_and_links_the_benchmarks():
    text = README.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)  # commands are not measurements
    prose = re.sub(r"\b\d+% (?:CI|confidence|interval)", "", prose)  # a confidence level is a setting
    assert MEASURED.findall(prose) == []
    assert "(docs/benchmarks.md)" in text


def test_the_measurement_pattern_finds_what_the_readme_used_to_quote():
    old = "a filter change's p95 0.06 s at 10 visitors; 108x a static server; RSS 403 MB; 1.6-3.1 s over four runs"
    assert MEASURED.findall(old) == ["0.06 s", "108x", "403 MB", "3.1 s"]
