"""A criterion's dimensions and figures are spelled in its own module; the rest of the product reads them.

Issue 34: a dimension name typed in a dozen files is a dozen places to find when a criterion changes. Each string
constant of the product that equals a dimension or figure name is listed here by module; the criteria's own
modules are the declarations, and each other module allowed to spell one says why.
"""

from __future__ import annotations

import ast

import pytest
from test_import_graph import product_modules

from rqbench.evaluate.criteria import CRITERIA, DIMENSIONS, METRICS, headline, headline_figure

ALLOWED = {
    # the reply models: the JSON schema a provider is sent (part of every cached call's key); each criterion module
    # asserts its dimensions are the model's fields
    "rqbench.records.judging": "reply schemas",
    # the A.6 pair record: the study's dimension is a fact of its data, and records sit below evaluate/
    "rqbench.records.expert_pool": "the expert study's record",
    # the paper's protocol judges these three criteria whatever others are declared ("overlap" is a criterion here)
    "rqbench.evaluate.protocol": "the paper's criteria",
    # arXiv's own sort order, not a dimension
    "rqbench.builder.arxiv_api": "an arXiv API value",
}


def _spelled(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    names = set(DIMENSIONS) | set(METRICS)
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names and id(n) not in docstrings
    }


def test_no_module_outside_the_criteria_spells_a_dimension_or_figure_name():
    spelled = {
        module: sorted(found)
        for module, path in product_modules().items()
        if not module.startswith("rqbench.evaluate.criteria") and (found := _spelled(path))
    }
    unexpected = {m: s for m, s in spelled.items() if m not in ALLOWED}
    assert not unexpected, f"read these from rqbench.evaluate.criteria (headline, headline_figure, ...): {unexpected}"
    stale = sorted(set(ALLOWED) - set(spelled))
    assert not stale, f"allowed to spell names but no longer does: {stale}"


def test_headline_figures_come_from_each_criterions_declaration():
    assert headline("novelty") == "non_obviousness" and headline("narrowness") == "source_bound_score"
    assert headline_figure("novelty", "win") == "win_non_obviousness"
    assert CRITERIA["novelty"].tie_break[0] == headline("novelty")  # A.5: non-obviousness first
    with pytest.raises(KeyError, match="no headline"):
        headline("overlap")
    with pytest.raises(KeyError, match="reports no figure"):
        headline_figure("novelty", "median")
