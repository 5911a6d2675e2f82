"""Shrinking a counterexample, with the real executor: it gets little time."""

from __future__ import annotations

import time

from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.inputs import Input
from coherence.engine.inputs.generate import shrink_candidates
from coherence.engine.verdict import counterexample as cx

MODULE = ModuleContext(source="def f(xs):\n    return len(xs)\n", filename="/workspace/m.py", module_name="m")
# The rival disagrees on every list, and takes 0.3 s (under the call timeout) on the short ones:
# every shrink candidate still disagrees, slowly.
RIVAL = Program(
    "f",
    "import time\ndef f(xs):\n    if len(xs) < 8:\n        time.sleep(0.3)\n    return len(xs) + 1\n",
    label="alternative 1",
)


class RecordingExecutor(Executor):
    """The real executor, noting when each run got its inputs and the budget it was given.

    Shrinking starts its jobs ahead (``prepare``) and hands them inputs later: a job that never
    gets any (the round after the last) ran nothing and is not a run.  Every job is closed."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.runs: list[tuple[float, int, float | None]] = []  # (start, programs, budget)
        self.inputs: list[list[str]] = []  # the keys of each run's inputs
        self.unclosed: list[object] = []  # prepared jobs not closed yet

    def prepare(self, module, programs, **kw):
        prepared = super().prepare(module, programs, **kw)
        run, close = prepared.run, prepared.close
        self.unclosed.append(prepared)

        def recording_run(inputs, **rkw):
            self.runs.append((time.monotonic(), len(programs), kw.get("budget")))
            self.inputs.append([i.key() for i in inputs])
            return run(inputs, **rkw)

        def recording_close():
            if prepared in self.unclosed:
                self.unclosed.remove(prepared)
            close()

        prepared.run, prepared.close = recording_run, recording_close
        return prepared


def test_shrinking_runs_on_a_small_budget_and_stops_at_its_time_limit():
    ex = RecordingExecutor(limits=ExecutionLimits(call_timeout=0.5, program_budget=5.0))
    # a third program, so that the describing run (every program) tells itself from the rounds (two)
    programs = [
        Program("f", label="yours"),
        RIVAL,
        Program("f", "def f(xs):\n    return len(xs)\n", label="alternative 2"),
    ]
    start = Input(args=(list(range(8)),))
    first = ex.run(MODULE, programs, [start])
    ex.runs.clear()
    assert first.outcomes[0][0] != first.outcomes[1][0]

    began = time.monotonic()
    shrunk, outcomes = cx.shrink(ex, MODULE, programs, 1, start, [row[0] for row in first.outcomes], seconds=1.5)

    # Each run gives a program at most max(SHRINK_BUDGET, two call timeouts) seconds, not the
    # configured 5 s: a round of dozens of 0.3 s candidates is cut after a few.
    assert ex.runs and all(budget == max(cx.SHRINK_BUDGET, 2 * 0.5) for _, _, budget in ex.runs)
    rounds = [t for t, n, _ in ex.runs if n == 2]
    assert rounds and all(t - began < 1.5 for t in rounds)  # no round starts past the limit
    assert [n for _, n, _ in ex.runs] == [2] * len(rounds) + [3]  # then every program, once
    # The result is still a counterexample: smaller, and the two still disagree on it.
    assert len(shrunk.args[0]) < 8
    assert outcomes[0] != outcomes[1] and outcomes[0].kind == outcomes[1].kind == "ok"
    assert outcomes[2] == outcomes[0]
    assert ex.unclosed == []  # the jobs started ahead and never used were given up


def test_no_time_left_means_the_start_input_stands_without_a_run():
    ex = RecordingExecutor(limits=ExecutionLimits(call_timeout=0.5, program_budget=5.0))
    programs = [Program("f", label="yours"), RIVAL]
    start = Input(args=(list(range(8)),))
    start_outcomes = [row[0] for row in ex.run(MODULE, programs, [start]).outcomes]
    ex.runs.clear()
    shrunk, outcomes = cx.shrink(ex, MODULE, programs, 1, start, start_outcomes, seconds=0.0)
    assert shrunk is start and outcomes == start_outcomes and ex.runs == []


FAST_RIVAL = Program("f", "def f(xs):\n    return len(xs) + 1\n", label="alternative 1")


def test_inputs_with_known_outcomes_are_not_run_again():
    ex = RecordingExecutor()
    programs = [
        Program("f", label="yours"),
        FAST_RIVAL,
        Program("f", "def f(xs):\n    return len(xs)\n", label="alternative 2"),
    ]
    start = Input(args=(list(range(8)),))
    # what the main run tried: the start, its one-step shrinks, and the empty list (where the
    # shrinking ends, since the two disagree on every list)
    tried = [start, *shrink_candidates(start), Input(args=([],))]
    main = ex.run(MODULE, programs, tried)
    start_outcomes = [row[0] for row in main.outcomes]
    ex.runs.clear()
    ex.inputs.clear()
    shrunk, outcomes = cx.shrink(ex, MODULE, programs, 1, start, start_outcomes)
    without = (shrunk.key(), outcomes)
    assert shrunk.args == ([],) and [n for _, n, _ in ex.runs][-1] == 3  # the describing run

    ex.runs.clear()
    ex.inputs.clear()
    known = cx.KnownOutcomes(tried, main.outcomes)
    shrunk, outcomes = cx.shrink(ex, MODULE, programs, 1, start, start_outcomes, known=known)
    assert (shrunk.key(), outcomes) == without  # the same counterexample
    keys = {i.key() for i in tried}
    assert ex.inputs and all(k not in keys for run in ex.inputs for k in run)  # only new candidates ran
    assert all(n == 2 for _, n, _ in ex.runs)  # the final input was tried: no describing run
    # and a candidate is run once, even when a later round proposes it again
    ran = [k for run in ex.inputs for k in run]
    assert len(ran) == len(set(ran))


def test_a_round_of_known_candidates_makes_no_run():
    ex = RecordingExecutor()
    programs = [Program("f", label="yours"), FAST_RIVAL]
    start = Input(args=([1],))
    tried = [start, Input(args=([],)), Input(args=([0],))]
    main = ex.run(MODULE, programs, tried)
    ex.runs.clear()
    shrunk, outcomes = cx.shrink(
        ex, MODULE, programs, 1, start, [row[0] for row in main.outcomes], known=cx.KnownOutcomes(tried, main.outcomes)
    )
    assert shrunk.args == ([],) and outcomes[0].render() == "0" and outcomes[1].render() == "1"
    assert ex.runs == []


def test_a_group_of_alternatives_that_agrees_with_yours_says_so():
    """Beside the groups that disagree, one that returned what yours did reads "the same as
    yours", not a copy of your outcome that looks like one more rival."""
    from coherence.engine.outcomes import Outcome, canonical

    ok = lambda v: Outcome("ok", value=canonical(v))  # noqa: E731
    ce = cx.describe("f", Input((3,)), [ok(4), ok(5), ok(5), ok(4), ok(6)], 1)
    assert [(a.output, a.count, a.agrees) for a in ce.alternatives] == [
        ("5", 2, False),
        ("4", 1, True),
        ("6", 1, False),
    ]
    assert ce.disagreeing == 3 and ce.theirs == "5"
    assert [a.shown(ce.total) for a in ce.alternatives] == [
        "2 of 4 alternatives: 5",
        "1 of 4 alternatives: the same as yours",
        "1 of 4 alternatives: 6",
    ]


def test_outcomes_seen_in_one_shrink_spare_the_next_its_runs():
    """A re-check of an unchanged function shrinks from the same input: what its programs gave
    there is kept (``execution.seen``), so it shrinks to the same place without a run; a changed
    module (yours edited) is another program, and runs again."""
    from coherence.engine.execution.seen import SeenOutcomes

    ex = RecordingExecutor()
    programs = [Program("f", label="yours"), FAST_RIVAL, Program("f", "def f(xs):\n    return 2\n", label="alt 2")]
    start = Input(args=(list(range(6)),))
    main = ex.run(MODULE, programs, [start])
    start_outcomes = [row[0] for row in main.outcomes]
    seen = SeenOutcomes()

    def shrink(module):
        view = seen.for_run(module, programs, 0, ex.limits)
        known = cx.KnownOutcomes([start], main.outcomes, view)
        return cx.shrink(ex, module, programs, 1, start, start_outcomes, known=known)

    ex.runs.clear()
    first = shrink(MODULE)
    assert first[0].args == ([],) and ex.runs  # it ran its candidates and the describing run
    ex.runs.clear()
    again = shrink(MODULE)
    assert (again[0].key(), again[1]) == (first[0].key(), first[1]) and ex.runs == []
    assert ex.unclosed == []  # no job started ahead and given up either

    edited = ModuleContext(source="def f(xs):\n    return len(xs) * 1\n", filename=MODULE.filename, module_name="m")
    ex.runs.clear()
    shrink(edited)
    assert ex.runs  # yours changed: its outcomes are not the old ones


def test_a_timeout_is_never_kept_as_seen():
    from coherence.engine.execution.seen import SeenOutcomes
    from coherence.engine.execution.worker_run import TIMEOUT
    from coherence.engine.outcomes import Outcome

    seen = SeenOutcomes(size=2)
    view = seen.for_run(MODULE, [Program("f", label="yours")], 0, ExecutionLimits())
    view.put(0, "k", TIMEOUT)
    assert view.get(0, "k") is None
    for i in range(3):  # bounded: the oldest goes
        view.put(0, f"k{i}", Outcome("ok", value=i))
    assert view.get(0, "k0") is None and view.get(0, "k2") is not None and len(seen) == 2


def test_alternatives_keep_their_seen_outcomes_across_a_body_edit_only_when_nothing_else_names_it():
    from coherence.engine.execution.seen import beside

    fn = "def f(xs):\n    return len(xs)\n"
    alone = "import os\n\n" + fn
    assert beside(alone, (fn, "f")) == "import os\n\n\0"
    assert beside(alone.replace("len(xs)", "len(xs) + 0"), (fn.replace("len(xs)", "len(xs) + 0"), "f")) == beside(
        alone, (fn, "f")
    )
    called = alone + "\ndef g(xs):\n    return f(xs) + 1\n"  # a helper an alternative may call reaches yours
    assert beside(called, (fn, "f")) == called
    assert beside(alone, None) == alone and beside(None, (fn, "f")) is None


def test_a_shrink_path_is_taken_again_only_where_every_outcome_it_read_is_the_same():
    from coherence.engine.execution.seen import SeenOutcomes
    from coherence.engine.outcomes import Outcome

    ok = lambda v: Outcome("ok", value=v)  # noqa: E731
    programs = [Program("f", label="yours"), FAST_RIVAL]
    a, b = Input(args=([1],)), Input(args=([],))
    main = [[ok(1)], [ok(2)]]  # [program][input] on ``a``
    seen = SeenOutcomes()
    view = seen.for_run(MODULE, programs, 0, ExecutionLimits())
    known = cx.KnownOutcomes([a], main, view)
    assert known.pair(a.key(), 1) is not None and known.pair(b.key(), 1) is None
    known.learn(b, {0: ok(0), 1: ok(1)})
    read = dict(known.consulted)
    assert set(read) == {(0, a.key()), (1, a.key()), (0, b.key()), (1, b.key())}
    assert cx.KnownOutcomes([a], main, view).agrees(read)
    assert not cx.KnownOutcomes([a], [[ok(5)], [ok(2)]], view).agrees(read)  # yours gives another value
    assert not cx.KnownOutcomes([a], main, None).agrees(read)  # ``b``'s outcomes are not known
