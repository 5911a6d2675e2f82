"""Outcomes of single calls, and when two outcomes are equal.

An outcome is ``ok`` with the canonical return value and the canonical in-place changes to the
arguments, or ``raise`` with an exception type name.  Timeouts and process deaths are ``raise``
outcomes with their own names: ``Timeout``, ``MemoryError``, ``Crash(SIGSEGV)``.

Canonical values are produced by the worker (stdlib only, under the user's interpreter) as tagged
JSON lists, so they cross process and Python-version boundaries:

    ["N"]                 None
    ["B", true]           bool (kept apart from numbers: ``True`` and ``1`` are different outcomes)
    ["I", "123"]          int (decimal string: big ints survive JSON)
    ["F", 1.5]            float, Fraction, Decimal; "nan", "inf", "-inf" as strings
    ["C", re, im]         complex
    ["S", "text"]         str
    ["Y", "hex"]          bytes, bytearray
    ["L", [...]]          list
    ["T", [...]]          tuple (namedtuples too)
    ["E", [...]]          set, frozenset (items in a canonical order)
    ["D", [[k, v], ...]]  dict (items in a canonical order)
    ["O", "Type", state]  other object, by its canonical state (``__dict__``/``__slots__``)
    ["R", "Type", "repr"] object whose repr is its state (datetime, ...)
    ["X", "Type", "sha"]  unrepresentable: type name plus a stable digest
    ["Z", "Type", "sha"]  too large or too deep: type name plus digest of the canonical form
    ["CYCLE"]             a reference back to a container being canonicalized

Equality (``outcomes_equal``): ints and floats compare by value, floats with
``math.isclose(rel_tol=1e-6, abs_tol=1e-9)`` and NaN == NaN; sets and dicts ignore order (the
canonical order makes that exact, except for floats within tolerance of each other inside sets);
everything else compares exactly.
"""
