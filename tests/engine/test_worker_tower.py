"""The worker package is a tower: each module imports only modules of the layers below its own,
so no import runs back up and none closes a circle (annotations' imports included)."""

from __future__ import annotations

from pathlib import Path

from coherence.engine.execution import sandbox as sb
from tests.support.imports import cycles, import_graph

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


def test_every_module_has_one_layer():
    modules = set(import_graph(PACKAGE))
    layered = [m for layer in LAYERS for m in layer]
    assert len(layered) == len(set(layered)), "a module is in two layers"
    assert modules == set(layered), f"unlayered: {modules - set(layered)}, gone: {set(layered) - modules}"


def test_no_import_circle():
    assert cycles(import_graph(PACKAGE)) == []


def test_every_import_goes_down_the_tower():
    level = {m: k for k, layer in enumerate(LAYERS) for m in layer}
    upward = sorted(
        f"{m} (layer {level[m]}) imports {n} (layer {level.get(n)})"
        for m, names in import_graph(PACKAGE).items()
        for n in names
        if n not in level or m not in level or level[n] >= level[m]
    )
    assert upward == []
