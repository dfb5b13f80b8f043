"""Test support stays out of the product: no module of it imports ``rqbench.testing``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("rqbench", "builder", "evaluate", "space", "dataset_card")
TESTING = ROOT / "rqbench" / "testing"


def imports_of_testing(source: str) -> list[int]:
    """The lines of ``source`` that import ``rqbench.testing`` or a module in it, in any form."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == "rqbench.testing" or n.startswith("rqbench.testing.") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_product_module_imports_the_testing_package():
    files = [f for folder in PRODUCT for f in sorted((ROOT / folder).rglob("*.py")) if TESTING not in f.parents]
    assert len(files) > 100
    offending = [
        f"{f.relative_to(ROOT)}:{line}" for f in files for line in imports_of_testing(f.read_text(encoding="utf-8"))
    ]
    assert offending == []


def test_the_check_sees_each_form_of_import():
    for source in (
        "import rqbench.testing",
        "import rqbench.testing.scripted_server as s",
        "from rqbench.testing.synthetic import make_results",
        "from rqbench import testing",
    ):
        assert imports_of_testing("import json\n" + source) == [2], source
    assert imports_of_testing("from rqbench import records\nimport testing_lib") == []
    assert imports_of_testing((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
