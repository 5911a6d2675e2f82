"""Canonical forms (the worker's tagged JSON lists, see ``coherence_worker/canon.py``) written back
as Python-like text for people: ``[1, 2.5, 'a']``, bounded in length, for hovers, diagnostics and
reports.
"""

from __future__ import annotations

from typing import Any

SCALAR_TAGS = frozenset(("N", "B", "I", "F", "C", "S", "Y"))


class _Full(Exception):
    pass


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _float_text(v: Any) -> str:
    if isinstance(v, str):
        return v  # "nan", "inf", "-inf"
    return repr(float(v))


def render_canonical(c: Any, limit: int = 120) -> str:
    """Python-like text of a canonical form, cut to ``limit`` characters with "…"."""
    out: list[str] = []
    size = [0]

    def put(s: str) -> None:
        out.append(s)
        size[0] += len(s)
        if size[0] > limit:
            raise _Full

    def seq(items: list[Any], open_: str, close: str, single_comma: bool = False) -> None:
        put(open_)
        for j, item in enumerate(items):
            if j:
                put(", ")
            walk(item)
        if single_comma and len(items) == 1:
            put(",")
        put(close)

    def walk(x: Any) -> None:
        if not isinstance(x, list) or not x:
            put(repr(x))
            return
        tag = x[0]
        if tag == "N":
            put("None")
        elif tag == "B":
            put("True" if x[1] else "False")
        elif tag == "I":
            put(str(x[1]))
        elif tag == "F":
            put(_float_text(x[1]))
        elif tag == "C":
            re_, im = (float(v) if isinstance(v, str) else v for v in (x[1], x[2]))
            put(repr(complex(re_, im)))
        elif tag == "S":
            put(repr(x[1]))
        elif tag == "Y":
            try:
                put(repr(bytes.fromhex(x[1])))
            except ValueError:
                put("b'?'")
        elif tag == "L":
            seq(x[1], "[", "]")
        elif tag == "T":
            seq(x[1], "(", ")", single_comma=True)
        elif tag == "E":
            if not x[1]:
                put("set()")
            else:
                seq(x[1], "{", "}")
        elif tag == "D":
            put("{")
            for j, (k, v) in enumerate(x[1]):
                if j:
                    put(", ")
                walk(k)
                put(": ")
                walk(v)
            put("}")
        elif tag == "O":
            state = x[2]
            put(f"{x[1]}(")
            if (
                isinstance(state, list)
                and state[:1] == ["D"]
                and all(isinstance(k, list) and k[:1] == ["S"] for k, _ in state[1])
            ):
                for j, (k, v) in enumerate(state[1]):
                    if j:
                        put(", ")
                    put(f"{k[1]}=")
                    walk(v)
            else:
                walk(state)
            put(")")
        elif tag == "R":
            put(str(x[2]))
        elif tag == "X":
            put(f"<{x[1]} object>")
        elif tag == "Z":
            put(f"<{x[1]}, too large to show>")
        elif tag == "CYCLE":
            put("[...]")
        else:
            put(repr(x))

    try:
        walk(c)
    except _Full:
        pass
    return truncate("".join(out), limit)
