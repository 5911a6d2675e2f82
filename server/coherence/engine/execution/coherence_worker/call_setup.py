"""What a child makes ready before its call loop, once: a maker per input (marshal data loaded
afresh per call, or a function that evaluates the input afresh), whether calls must be reseeded
(the program may draw random numbers), numpy's seed when it is loaded, and the coroutine runner
of an async program.
"""

from __future__ import annotations

import marshal
import sys
import types

from . import loading

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .context import JobContext


def input_makers(codes: list[tuple[str, Any] | None], ns: dict[str, Any], receiver: type | None) -> list[Any]:
    """Per input: marshal data (bytes) that each call loads afresh, or a function that evaluates
    the input afresh in the program's namespace; None for an input that cannot be made."""
    makers: list[Any] = []
    add_maker = makers.append
    for code in codes:
        if code is None:
            add_maker(None)
        elif code[0] == "marshal":
            add_maker(code[1])
        elif code[0] == "fn":
            add_maker(types.FunctionType(code[1], ns))
        else:
            add_maker(lambda c=code[1]: eval(c, ns))
    if receiver is not None:
        # an instance method: called on an object built afresh for each call, which goes
        # first among the arguments, so what the call does to it is part of the outcome
        def on_fresh(
            mk: Any, build: type = receiver, loads: Callable[[bytes], Any] = marshal.loads
        ) -> Callable[[], Any]:
            def make() -> tuple[tuple[Any, ...], Any]:
                args, kwargs = loads(mk) if mk.__class__ is bytes else mk()
                return (build(),) + tuple(args), kwargs

            return make

        makers = [None if mk is None else on_fresh(mk) for mk in makers]
    return makers


def numpy_seed() -> Callable[[int], object] | None:
    if "numpy" in sys.modules:
        try:
            seed: Callable[[int], object] = sys.modules["numpy"].random.seed
            return seed
        except BaseException:
            pass
    return None


def may_draw(ctx: JobContext, text: str) -> tuple[bool, bool]:
    """Whether the program may draw random numbers, so that each call is reseeded (which costs
    more than a typical call, docs/results.md#call-costs): when its code or the module's
    mentions random, or a module it imported from the workspace holds a generator (see
    loading.draws).  ``(per call, watch)``: watch
    says whether to look again after a call that imported a module."""
    roots = ctx.workspace_roots
    # (the leader looked at every module it had; the program's load may have imported more)
    mark = loading.modules_mark()
    per_call_seed = (
        "random" in text
        or ctx.workspace_draws
        or ((mark is None or mark != ctx.modules_scanned) and loading.draws(roots, ctx.scanned))
    )
    return per_call_seed, not per_call_seed and bool(roots)


def coroutines(text: str) -> tuple[type | None, Callable[[Any], Any] | None]:
    """``(coroutine type, asyncio.run)`` for a program that may be async, else (None, None)."""
    if "async" not in text:
        return None, None
    try:
        import asyncio

        async def _probe() -> None:
            pass

        probe = _probe()
        coroutine_type = type(probe)
        probe.close()
        return coroutine_type, asyncio.run
    except BaseException:
        return None, None
