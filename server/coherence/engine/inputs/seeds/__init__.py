"""Seed inputs: doctest examples, calls in the workspace's tests, defaults, and values built from
types (annotations, or names when there are none).

Everything is read with ``ast``; user code is never executed.  Arguments that are not literals
(``date(2024, 2, 28)``) become :class:`Expr` nodes, kept verbatim, provided every free name in them
resolves in the user's module (a module-level name, a builtin, or a name the doctest / test file
imported, which is rewritten to ``__import__('mod').name``).

One module per source of seeds:

- ``module_names``: the names a module binds.
- ``expressions``: argument expressions to values, or to verbatim ``Expr`` nodes.
- ``doctests``: the docstring's examples and prose assignments.
- ``workspace``: calls and ``parametrize`` rows in the workspace's test files.
- ``defaults``: the all-defaults call and the boundary-value calls (values of each kind come
  from :mod:`coherence.engine.inputs.kinds`).
"""

from __future__ import annotations

from coherence.engine.inputs.seeds.defaults import default_seed, type_seeds
from coherence.engine.inputs.seeds.doctests import doctest_seeds
from coherence.engine.inputs.seeds.module_names import module_names
from coherence.engine.inputs.seeds.workspace import workspace_seeds

__all__ = [
    "doctest_seeds",
    "workspace_seeds",
    "default_seed",
    "type_seeds",
    "module_names",
]
