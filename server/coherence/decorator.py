"""``coherence.generated``: a marker for functions an LLM wrote, which does nothing at run time.

coherence finds marked functions by reading the source: any decorator whose name ends in
``generated`` marks one, so a project may define its own.  This one is for a project that has
coherence installed where its code runs (``from coherence import generated``), so that the
decorator docs/guide.md shows, ``@generated(assume="lo <= hi")``, also runs.  It imports nothing
beyond ``typing``: the sandbox loads the user's module, and with it this file, before every check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

F = TypeVar(
    "F", bound="Callable[..., Any]"
)  # a string: runs on 3.8, where collections.abc.Callable is not subscriptable


@overload
def generated(fn: F, /) -> F: ...
@overload
def generated(*, assume: str | list[str] = ..., accept: str | list[str] = ...) -> Callable[[F], F]: ...


def generated(fn: Any = None, /, *, assume: str | list[str] = "", accept: str | list[str] = "") -> Any:
    """Mark ``fn`` for coherence: ``@generated`` or ``@generated(assume="lo <= hi",
    accept="clamp(0, 1, 0)")``.  Returns ``fn`` itself; ``assume`` and ``accept`` are read from
    the source by coherence, not here."""
    if fn is None:
        return lambda f: f
    return fn
