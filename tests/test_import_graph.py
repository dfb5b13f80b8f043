"""The product's modules import one another without a loop.

The graph is read from the source with ``ast`` (nothing is imported): every
``import`` and ``from ... import`` of an ``rqbench`` module, at the top of a
module or inside a function, is an edge; imports under ``if TYPE_CHECKING:``
are not, since they never run (they name types for annotations only). A loop means two modules that can only
be understood (and loaded) together; the fix is a third module they both use.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _package_roots() -> dict[str, Path]:
    """Top package name -> its folder, as the build declares them (``rqbench.builder`` lives in ``builder/``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def product_modules() -> dict[str, Path]:
    """Every module of the product: dotted name -> file (a package's name -> its ``__init__.py``)."""
    roots = _package_roots()
    claimed = {p.resolve() for p in roots.values()}
    modules: dict[str, Path] = {}
    for name, folder in roots.items():
        for f in sorted(folder.rglob("*.py")):
            rel = f.relative_to(folder).with_suffix("")
            # a folder another entry maps (none today) or one that is not a package is not part of this one
            parents = [folder.joinpath(*rel.parts[:i]) for i in range(1, len(rel.parts))]
            if any(p.resolve() in claimed or not (p / "__init__.py").is_file() for p in parents):
                continue
            parts = [name, *rel.parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = f
    return modules


def _is_type_checking_block(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The product modules ``module`` imports, wherever in the file the import stands."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()

    def add(name: str) -> None:
        while name and name not in known:  # ``import a.b.c`` of a name that is no module: its package
            name = name.rpartition(".")[0]
        if name and name != module:
            out.add(name)

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {
        id(n)
        for block in ast.walk(tree)
        if _is_type_checking_block(block)
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                add(sub if sub in known else origin)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = product_modules()
    known = set(modules)
    return {m: _imported(m, f, known) for m, f in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One loop in ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_walk_sees_every_part_of_the_product():
    modules = product_modules()
    for name in (
        "rqbench",
        "rqbench.io",
        "rqbench.llm.client",
        "rqbench.builder.citations",
        "rqbench.builder.cite_syntax",
        "rqbench.evaluate.criteria.base",
        "rqbench.space.stores",
        "rqbench.dataset_card.card",
    ):
        assert name in modules, name
    graph = import_graph()
    assert "rqbench.builder.cite_syntax" in graph["rqbench.builder.latex_text"]
    assert "rqbench.evaluate.criteria.base" in graph["rqbench.evaluate.criteria"]  # a relative or package import counts


def test_imports_inside_functions_and_relative_imports_are_edges(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text(
        "from . import sibling\n"
        "from .pkg import thing\n"
        "def later():\n"
        "    from rqbench.a.b import name\n"
        "    import rqbench.c.d\n",
        encoding="utf-8",
    )
    known = {
        "rqbench.a",
        "rqbench.a.b",
        "rqbench.c",
        "rqbench.x",
        "rqbench.x.sibling",
        "rqbench.x.pkg",
        "rqbench.x.mod",
    }
    assert _imported("rqbench.x.mod", f, known) == {"rqbench.a.b", "rqbench.c", "rqbench.x.sibling", "rqbench.x.pkg"}


def test_the_cycle_finder_names_the_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle_among_the_product_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import loop: " + " -> ".join(cycle or [])


def test_the_builder_does_not_reach_the_publisher():
    """The builder makes a build; publishing it is the dataset card's. Nothing under ``rqbench.builder`` imports,
    directly or through another module, the module that publishes a release (``rqbench setup-sample``, which does
    both, lives beside the publisher)."""
    graph = import_graph()
    publisher = "rqbench.dataset_card.publish"

    def reaches(start: str) -> list[str] | None:
        seen, stack = {start}, [[start]]
        while stack:
            path = stack.pop()
            for nxt in sorted(graph.get(path[-1], ())):
                if nxt == publisher:
                    return [*path, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append([*path, nxt])
        return None

    for module in sorted(m for m in graph if m.startswith("rqbench.builder")):
        path = reaches(module)
        assert path is None, " -> ".join(path or [])


# evaluate/'s rooms, lowest first: a room imports only rooms before it (docs/architecture.md); the protocol module
# (the paper's protocol as data) stands between the metrics and the judging run
EVALUATE_ROOMS = (
    "benchmark",
    "generate",
    "criteria",
    "metrics",
    "protocol",
    "judge",
    "judge_board",
    "report",
    "bundle",
)
# module-level edges that run against that order, each for a reason the architecture note gives
ROOM_EXCEPTIONS = {
    # a criterion declares its figures with the metric array functions
    ("rqbench.evaluate.criteria", "rqbench.evaluate.metrics.metric"),
    ("rqbench.evaluate.criteria.base", "rqbench.evaluate.metrics.metric"),
    ("rqbench.evaluate.criteria.novelty", "rqbench.evaluate.metrics.metric"),
    ("rqbench.evaluate.criteria.narrowness", "rqbench.evaluate.metrics.metric"),
    ("rqbench.evaluate.criteria.overlap", "rqbench.evaluate.metrics.metric"),
    ("rqbench.evaluate.criteria.declared", "rqbench.evaluate.metrics.metric"),
    # a command prints the protocol's departures
    ("rqbench.evaluate.generate.cli", "rqbench.evaluate.protocol"),
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["rqbench", "evaluate"] or len(parts) < 3 or parts[2] not in EVALUATE_ROOMS:
        return None
    return parts[2]


def test_evaluate_rooms_import_only_the_rooms_below_them():
    graph = import_graph()
    rank = {room: k for k, room in enumerate(EVALUATE_ROOMS)}
    upward = sorted(
        (a, b)
        for a, targets in graph.items()
        for b in targets
        if _room(a) and _room(b) and rank[_room(b)] > rank[_room(a)] and (a, b) not in ROOM_EXCEPTIONS
    )
    assert not upward, "an import against the rooms' order (docs/architecture.md): " + ", ".join(
        f"{a} -> {b}" for a, b in upward
    )


def test_every_evaluate_module_is_in_a_room_of_at_most_15_modules():
    modules = [m for m in product_modules() if m.startswith("rqbench.evaluate.")]
    loose = sorted(m for m in modules if m.count(".") == 2 and m.split(".")[2] not in EVALUATE_ROOMS)
    assert loose == ["rqbench.evaluate.evaluate_cli"], loose
    for room in (r for r in EVALUATE_ROOMS if r != "protocol"):
        size = sum(1 for m in modules if _room(m) == room and m.count(".") == 3)
        assert 1 <= size <= 15, (room, size)


def test_no_product_module_is_over_800_lines():
    """A module past 800 lines holds more than one concept (docs/architecture.md): split it before it grows."""
    long = {name: n for name, path in product_modules().items() if (n := len(path.read_text().splitlines())) > 800}
    assert not long, long
