"""The import graph: packages stack in one order, and no module imports its way back to itself.

Every ``import`` counts, the ones inside functions too (they are how a light module reaches a heavy one, and
a cycle through them is still a cycle of concepts). ``from pkg import name`` is an edge to ``pkg.name``
when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
# lowest first: a package may import only from itself and the ones before it
LAYERS = ("ecoagent", "crawlers", "generators", "validators", "rated", "live", "publish", "flows")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def import_graph() -> nx.DiGraph:
    """Module -> module edges of the project's own packages, with the line of each import."""
    modules = project_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target, line=node.lineno)
    return graph


def test_every_package_has_a_layer() -> None:
    tops = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    assert tops == set(LAYERS), f"give these a place in LAYERS: {sorted(tops ^ set(LAYERS))}"


def test_no_import_climbs_to_a_higher_layer() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    up = [
        f"{a}:{data['line']} -> {b}"
        for a, b, data in import_graph().edges(data=True)
        if rank[b.split(".")[0]] > rank[a.split(".")[0]]
    ]
    assert up == [], "imports that climb back up:\n" + "\n".join(up)


def test_no_import_cycle() -> None:
    graph = import_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    by_module = defaultdict(list)
    for cycle in cycles:
        for a in cycle:
            by_module[a] += [
                f"{a}:{graph.edges[a, b]['line']} -> {b}" for b in graph.successors(a) if b in cycle
            ]
    assert cycles == [], "import cycles:\n" + "\n".join(e for es in by_module.values() for e in es)


def test_the_graph_sees_imports_inside_functions() -> None:
    # a known in-function import (validators.recall reaches BM25 only when asked for it)
    assert import_graph().has_edge("validators.recall", "ecoagent.retrievers")
