"""The worker package is a tower: each module imports only modules of the layers below its own,
so no import runs back up and none closes a circle (annotations' imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

from coherence.engine.execution import sandbox as sb

PACKAGE = Path(sb.WORKER).with_name("coherence_worker")

# Bottom first.  A module may import the modules of any layer below its own, none of its own
# layer or above.
LAYERS: list[set[str]] = [
    # the wire format, the timer, the kernel's and the disk's primitives
    {"__init__", "protocol", "timer", "stash", "sealed", "disk", "cgroup", "landlock", "seccomp"},
    {"canon", "guard", "loading", "kernel", "output"},
    # the job's state, divided by owner: its context, a task, the inputs handed over
    {"flat", "task", "context", "handover"},
    {"anchor", "spawn", "call_setup"},
    # a child's side and the leader's reading of it
    {"watch", "child"},
    {"leader"},
    {"ahead"},
    {"job"},
    {"serve"},
    {"__main__"},
]


def sibling_imports(path: Path) -> set[str]:
    """The package's modules that a source file imports, anywhere in it (under
    ``TYPE_CHECKING`` and inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    return {p.stem: sibling_imports(p) for p in sorted(PACKAGE.glob("*.py"))}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)) is not None:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_find_cycle_finds_a_circle_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_every_module_has_one_layer():
    modules = set(import_graph())
    layered = [m for layer in LAYERS for m in layer]
    assert len(layered) == len(set(layered)), "a module is in two layers"
    assert modules == set(layered), f"unlayered: {modules - set(layered)}, gone: {set(layered) - modules}"


def test_no_import_circle():
    assert find_cycle(import_graph()) is None


def test_every_import_goes_down_the_tower():
    level = {m: k for k, layer in enumerate(LAYERS) for m in layer}
    upward = sorted(
        f"{m} (layer {level[m]}) imports {n} (layer {level.get(n)})"
        for m, names in import_graph().items()
        for n in names
        if n not in level or m not in level or level[n] >= level[m]
    )
    assert upward == []
