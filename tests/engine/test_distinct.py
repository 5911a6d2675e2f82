"""Which samples count as the same program (``distinct.program_key``): one key only for programs
that differ by nothing they could compute from, so that one run stands for all of them."""

from __future__ import annotations

import pytest

from coherence.engine.execution import ModuleContext, Program
from coherence.engine.execution.distinct import distinct_programs, program_key
from coherence.engine.execution.executor import Executor
from coherence.engine.inputs.values import Input


def same(a: str, b: str, entry: str = "f") -> bool:
    return program_key(Program(entry, a)) == program_key(Program(entry, b))


DOUBLED = '''
def f(xs):
    """Double every item."""
    result = []
    for item in xs:
        result.append(item * 2)
    return result
'''


@pytest.mark.parametrize(
    "other",
    [
        # other local names, no docstring, other comments and layout
        "def f(xs):\n    res = []\n    for i in xs:  # each one\n        res.append(i * 2)\n    return res\n",
        # another docstring
        'def f(xs):\n    "Twice each."\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n',
    ],
)
def test_programs_that_differ_in_local_names_or_docstrings_are_one_program(other):
    assert same(DOUBLED, other)


def test_closures_exception_names_and_comprehensions_are_renamed_consistently():
    a = (
        "def f(n):\n    total = 0\n    def add(k):\n        nonlocal total\n        total += k\n"
        "    for i in range(n):\n        try:\n            add(i)\n        except ValueError as e:\n            raise e\n"
        "    return [t * 2 for t in [total]]\n"
    )
    b = (
        "def f(n):\n    acc = 0\n    def add(k):\n        nonlocal acc\n        acc += k\n"
        "    for j in range(n):\n        try:\n            add(j)\n        except ValueError as err:\n            raise err\n"
        "    return [v * 2 for v in [acc]]\n"
    )
    assert same(a, b)


@pytest.mark.parametrize(
    "a, b, why",
    [
        # inputs may pass the entry point's parameters by keyword
        ("def f(xs):\n    return len(xs)\n", "def f(ys):\n    return len(ys)\n", "entry point parameter"),
        # a keyword names a parameter of an inner function
        (
            "def f(x):\n    def g(a):\n        return a\n    return g(a=x)\n",
            "def f(x):\n    def g(b):\n        return b\n    return g(a=x)\n",
            "keyword",
        ),
        # a string spells a parameter's name (**{...})
        (
            "def f(x):\n    def g(a):\n        return a\n    return g(**{'a': x})\n",
            "def f(x):\n    def g(b):\n        return b\n    return g(**{'a': x})\n",
            "string",
        ),
        # a function's name is its __name__
        (
            "def f(x):\n    def helper():\n        return x\n    return helper\n",
            "def f(x):\n    def aid():\n        return x\n    return aid\n",
            "def name",
        ),
        # module-level names are globals other code may reach
        ("LIMIT = 3\ndef f(x):\n    return x < LIMIT\n", "CAP = 3\ndef f(x):\n    return x < CAP\n", "module name"),
        # a free name is the module's (or a builtin): which one matters
        ("def f(x):\n    return helper(x)\n", "def f(x):\n    return helper2(x)\n", "free name"),
        ("def f(x):\n    return sum(x)\n", "def f(x):\n    return max(x)\n", "builtin"),
        # locals() sees the names
        (
            "def f(x):\n    a = 1\n    return sorted(locals())\n",
            "def f(x):\n    b = 1\n    return sorted(locals())\n",
            "locals()",
        ),
        # eval reads names from text
        ("def f(x):\n    a = x\n    return eval('a')\n", "def f(x):\n    b = x\n    return eval('a')\n", "eval"),
        # an f-string's "=" spells the name
        ("def f(x):\n    a = x\n    return f'{a=}'\n", "def f(x):\n    b = x\n    return f'{b=}'\n", "f-string ="),
        # a docstring a program reads is part of what it computes
        ('def f(x):\n    "one"\n    return f.__doc__\n', 'def f(x):\n    "two"\n    return f.__doc__\n', "__doc__"),
        # two locals swapped are not a renaming of one program into the other
        (
            "def f(x):\n    a = x\n    b = 1\n    return a - b\n",
            "def f(x):\n    a = x\n    b = 1\n    return b - a\n",
            "swap",
        ),
        # an imported name is the module's
        (
            "def f(x):\n    import math as m\n    return m.floor(x)\n",
            "def f(x):\n    import math as mm\n    return mm.floor(x)\n",
            "import alias",
        ),
    ],
)
def test_programs_that_may_compute_differently_stay_apart(a, b, why):
    assert not same(a, b), why


def test_a_local_that_shadows_a_builtin_elsewhere_is_not_renamed():
    # "list" is a local of g but the builtin in f: renaming it everywhere would make f's call
    # to the builtin a call of something else in one program and not the other
    a = "def g(y):\n    list = [y]\n    return list\ndef f(x):\n    return list(x)\n"
    b = "def g(y):\n    items = [y]\n    return items\ndef f(x):\n    return list(x)\n"
    assert not same(a, b)


def test_a_match_capture_is_renamed_with_its_uses():
    a = "def f(x):\n    match x:\n        case [first, *rest]:\n            return first\n    return None\n"
    b = "def f(x):\n    match x:\n        case [head, *tail]:\n            return head\n    return None\n"
    c = "def f(x):\n    match x:\n        case [head, *tail]:\n            return tail\n    return None\n"
    assert same(a, b)
    assert not same(a, c)


def test_merged_programs_run_once_and_those_kept_apart_run_on_their_own():
    renamed = "def f(xs, k=1):\n    out = []\n    for v in xs:\n        out.append(v * k)\n    return out\n"
    # the same up to names, but the entry point's second parameter is called otherwise: an input
    # that passes k by keyword makes it raise, so it must run on its own
    other_param = DOUBLED.replace("def f(xs):", "def f(xs, m=1):").replace("item * 2", "item * m")
    programs = [
        Program("f", DOUBLED.replace("def f(xs):", "def f(xs, k=1):").replace("item * 2", "item * k")),
        Program("f", renamed),
        Program("f", other_param),
    ]
    run, runs_for = distinct_programs(programs)
    assert len(run) == 2 and runs_for == [0, 0, 1]
    inputs = [Input(([1, 2],), ()), Input(([3],), (("k", 3),))]
    report = Executor().run(ModuleContext(), programs, inputs)
    assert report.programs_run == 2
    rows = report.outcomes
    assert rows[0] == rows[1] and rows[0][1].kind == "ok"
    assert rows[2][0] == rows[0][0] and rows[2][1].kind == "raise" and rows[2][1].error == "TypeError"


def test_a_program_too_deep_to_compare_runs_on_its_own_and_the_others_still_run():
    # ast.dump recurses once per nesting level: a 1000-term sum raised RecursionError in this
    # process and lost the whole check
    deep = "def f(x):\n    return " + " + ".join(["x"] * 1000) + "\n"
    programs = [Program("f", deep), Program("f", deep), Program("f", DOUBLED), Program("f", DOUBLED)]
    assert program_key(programs[0]) is None
    _, runs_for = distinct_programs(programs)
    assert runs_for == [0, 1, 2, 2]
    report = Executor().run(ModuleContext(), programs, [Input(([1, 2],), ())])
    assert report.programs_run == 3 and len(report.outcomes) == 4
    assert report.outcomes[2] == report.outcomes[3] and report.outcomes[2][0].kind == "ok"
    assert report.outcomes[0] == report.outcomes[1] and report.outcomes[0][0].kind == "ok"  # the list, 1000 times over


def test_recorded_samples_merged_by_name_behave_alike_when_run_apart(corpus_dir, monkeypatch):
    """Real samples: each group of gpt-4o's HumanEval alternatives that one key now merges (and
    the plain syntax tree did not) runs member by member, and every member computes the same."""
    import ast
    import gzip
    import json

    import coherence.engine.execution.prepared as prepared_module
    from coherence.engine.inputs.generate import generate_inputs
    from coherence.engine.markers import target_for
    from coherence.engine.sampling.prompt import extract_program

    monkeypatch.setattr(prepared_module, "distinct_programs", lambda ps: (list(ps), list(range(len(ps)))))
    with gzip.open(corpus_dir / "humaneval-gpt_4o.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for line in fh][:40]
    ex = Executor()
    checked = 0
    for row in rows:
        name = row["entry_point"]
        groups: dict = {}
        for candidate in row["candidates"][:10]:
            code = extract_program(candidate, name, None).code
            if code:
                groups.setdefault(program_key(Program(name, code)), {})[ast.dump(ast.parse(code))] = code
        merged = [list(g.values()) for g in groups.values() if len(g) > 1]
        if not merged:
            continue
        target = target_for(row["candidates"][0], name, "task.py", docstring=row["description"])
        inputs = generate_inputs(target.spec, 60, module_source=target.module_source)
        for sources in merged:
            report = ex.run(ModuleContext(), [Program(name, s) for s in sources], inputs)
            assert report.programs_run == len(sources)  # they did run apart
            # calls that ran out of time or memory say how fast, not what: left out
            timed = {
                x
                for row_ in report.outcomes
                for x, o in enumerate(row_)
                if o.kind == "raise" and o.error in ("Timeout", "BudgetExceeded", "MemoryError")
            }
            rows_ = [[o for x, o in enumerate(r) if x not in timed] for r in report.outcomes]
            assert all(r == rows_[0] for r in rows_), (row["task_id"], sources)
            checked += 1
    assert checked >= 20  # the first 40 tasks hold 38 such groups


def test_distinct_and_the_executor_do_not_need_each_other():
    """``copy_rows`` takes an ``ExecutionReport``, which lives in program.py: its annotation
    resolves at run time, and importing distinct loads no executor (the two used to form an
    import cycle, broken only by a TYPE_CHECKING import)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import coherence

    code = (
        "import sys, typing; from coherence.engine.execution import distinct, program; "
        "assert typing.get_type_hints(distinct.copy_rows)['report'] is program.ExecutionReport; "
        "print('coherence.engine.execution.executor' in sys.modules)"
    )
    server = str(Path(coherence.__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": server},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
