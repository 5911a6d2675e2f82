"""Pick, shrink and explain one input on which the user's function disagrees with alternatives.

Choice (DESIGN.md): an input where the user's outcome differs from the largest cluster that
disagrees with the user, preferring inputs where both sides returned normally, then the smallest.
Shrinking re-runs only those two programs on one-step smaller inputs while they still disagree
(and still both return, when they did).  A candidate the main run already tried (or an earlier
round) is not run again: its outcomes are known.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from coherence.engine.execution import ModuleContext, Program
from coherence.engine.execution.executor import OUT_OF_TIME
from coherence.engine.inputs import Input
from coherence.engine.inputs.generate import shrink_candidates
from coherence.engine.inputs.shrink import shrink_key
from coherence.engine.outcomes import Outcome, group_outcomes, outcomes_equal
from coherence.engine.result import ClusterOutput, Counterexample
from coherence.engine.verdict import mutation
from coherence.engine.verdict.metrics import Metrics

if TYPE_CHECKING:
    from coherence.engine.execution.executor import Executor
    from coherence.engine.execution.prepared import PreparedRun
    from coherence.engine.execution.seen import SeenView


def choose(
    labels: np.ndarray, raised: np.ndarray, inputs: Sequence[Input], metrics: Metrics, prefer: np.ndarray | None = None
) -> tuple[int, int] | None:
    """(input index, representative program of the opposing cluster), or None when P0 agrees with all.
    The opposing cluster is the largest one that differs from P0.  ``prefer`` (a mask over
    inputs, e.g. those inside the domain the docstring describes) wins over the rest: then it is
    the largest that differs from P0 on a preferred input, when one does (a disagreement where
    the docstring rules the input out is one the user would dismiss)."""
    others = [g for i, g in enumerate(metrics.cluster_members) if i != metrics.user_cluster]
    if not others:
        return None
    rep = others[0][0]  # clusters are sorted largest first
    differs = np.flatnonzero(labels[0] != labels[rep])
    if differs.size == 0:
        return None
    if prefer is not None:
        for g in others:
            d = np.flatnonzero((labels[0] != labels[g[0]]) & prefer)
            if d.size:
                rep, differs = g[0], d
                break
    both_ok = differs[~raised[0, differs] & ~raised[rep, differs]]
    pool = both_ok if both_ok.size else differs
    best = min(pool.tolist(), key=lambda x: (inputs[x].size(), x))
    return best, rep


class KnownOutcomes:
    """Every program's outcome on each input a run already tried, by the input's key.

    Shrinking steps down from the smallest disagreeing input, and generation mutated its seeds
    the same ways (deletion, truncation, smaller numbers): many one-step shrinks are inputs the
    main run tried.  Their outcomes are known, and a round whose candidates all are needs no run
    (each a worker job, a fork per program).  ``seen`` adds what these programs gave before, in
    this check's shrinking or an earlier check's (``execution.seen``): a re-check of an unchanged
    function shrinks without running anything."""

    def __init__(
        self,
        inputs: Sequence[Input],
        outcomes: Sequence[Sequence[Outcome]],
        seen: SeenView | None = None,
    ):
        self._index: Mapping[str, int] = {inp.key(): x for x, inp in enumerate(inputs)}
        self._outcomes = outcomes  # [program][input], aligned with ``inputs``
        self._seen = seen
        self.ran: dict[str, Input] = {}  # the inputs that had to be run, by key
        # every outcome a shrink read or ran, as (program, input key) -> the outcome's key: the
        # same outcomes there take a shrink the same way (``agrees``)
        self.consulted: dict[tuple[int, str], str] = {}

    def outcome(self, program: int, key: str) -> Outcome | None:
        """One program's outcome on the input with this key, or None when it is not known."""
        x = self._index.get(key)
        if x is not None:
            return self._outcomes[program][x]
        return self._seen.get(program, key) if self._seen is not None else None

    def get(self, key: str) -> list[Outcome] | None:
        """Every program's outcome on the input with this key, or None when one is not known."""
        found = []
        for p in range(len(self._outcomes)):
            outcome = self.outcome(p, key)
            if outcome is None:
                return None
            found.append(outcome)
        for p, outcome in enumerate(found):
            self.consulted[(p, key)] = outcome.key
        return found

    def pair(self, key: str, rival: int) -> tuple[Outcome, Outcome] | None:
        """Yours and the rival's outcomes on the input with this key, or None when one is not known."""
        mine, theirs = self.outcome(0, key), self.outcome(rival, key)
        if mine is None or theirs is None:
            return None
        self.consulted[(0, key)], self.consulted[(rival, key)] = mine.key, theirs.key
        return mine, theirs

    def learn(self, inp: Input, outcomes: Mapping[int, Outcome]) -> None:
        """Keep what these programs (by index) gave on ``inp``, which had to be run."""
        key = inp.key()
        self.ran.setdefault(key, inp)
        for program, outcome in outcomes.items():
            self.consulted[(program, key)] = outcome.key
            if self._seen is not None:
                self._seen.put(program, key, outcome)

    def agrees(self, consulted: Mapping[tuple[int, str], str]) -> bool:
        """Whether every outcome another shrink read (``consulted``) is known, and the same here."""
        for (program, key), was in consulted.items():
            now = self.outcome(program, key)
            if now is None or now.key != was:
                return False
        return True


# Shrinking only makes a counterexample easier to read, so it gets little time: each of its runs
# gives a program this many seconds (or two calls' timeouts) over all its inputs (a candidate that
# needs more is one the user could not read anyway: a timeout is no disagreement to show), and no
# round starts past SHRINK_SECONDS (without them, one round on a slow task took seconds).
SHRINK_BUDGET = 1.0
SHRINK_SECONDS = 2.0


def shrink(
    executor: Executor,
    module: ModuleContext,
    programs: Sequence[Program],
    rival: int,
    start: Input,
    start_outcomes: Sequence[Outcome],
    *,
    rounds: int = 4,
    seed: int = 0,
    cancel: threading.Event | None = None,
    fanout: int = 8,
    limit: int = 256,
    keep: Callable[[Input], bool] | None = None,
    budget: float = SHRINK_BUDGET,
    seconds: float = SHRINK_SECONDS,
    known: KnownOutcomes | None = None,
) -> tuple[Input, list[Outcome]]:
    """Greedy shrinking: the simplest variant on which the user's function and ``rival`` still
    disagree.  Returns the input and every program's outcome on it.

    ``keep`` (a predicate) limits the shrinks, e.g. to inputs inside the examples' domain.
    Each round runs the two programs on the one- and two-step shrinks of the current input in one
    sandbox run (a worker start costs more than a few hundred extra calls).  Every program runs
    once more, on the final input alone, to describe it: that is one run of ten programs instead of
    one per round.  ``known`` holds the outcomes of inputs already run (the main run's): those
    candidates, and the final input when it is one, are not run again.

    A job's leader loads the module and the programs before it can take inputs, a large part of a
    short run.  So each
    round's job starts loading while the round before it runs (``Executor.prepare``), and the
    job that describes the final input starts once a round has found a smaller input.
    """
    current = start
    pair = [programs[0], programs[rival]]
    want_both_ok = start_outcomes[0].kind == "ok" and start_outcomes[rival].kind == "ok"
    until = time.monotonic() + seconds
    budget = max(budget, 2 * executor.limits.call_timeout)  # room for a call the user allows to be slow
    ahead = _Ahead(executor, module, pair, seed, budget)
    describe = _Ahead(executor, module, programs, seed, budget)
    try:
        current = _shrink_rounds(
            ahead, describe, current, rival, want_both_ok, rounds, until, fanout, limit, keep, known, cancel
        )
        if current is start:
            return start, list(start_outcomes)
        outcomes = known.get(current.key()) if known is not None else None
        if outcomes is None:
            job = describe.take()
            try:
                report = job.run([current], cancel=cancel)
            finally:
                job.close()
            if report.module_error:
                return start, list(start_outcomes)
            outcomes = [row[0] for row in report.outcomes]
            if known is not None and not any(report.load_errors):
                known.learn(current, dict(enumerate(outcomes)))
    finally:
        ahead.close()
        describe.close()
    if not _disagree(outcomes[0], outcomes[rival], want_both_ok):
        return start, list(start_outcomes)  # it did not disagree again (a flaky program): keep the original
    return Input(args=current.args, kwargs=current.kwargs, origin="shrink"), outcomes


class _Ahead:
    """One job of these programs, started (``Executor.prepare``) before its inputs exist."""

    def __init__(
        self, executor: Executor, module: ModuleContext, programs: Sequence[Program], seed: int, budget: float
    ):
        self._executor, self._module, self._programs = executor, module, list(programs)
        self._seed, self._budget = seed, budget
        self._prepared: PreparedRun | None = None

    @property
    def started(self) -> bool:
        return self._prepared is not None

    def start(self) -> None:
        if self._prepared is None:
            self._prepared = self._executor.prepare(self._module, self._programs, seed=self._seed, budget=self._budget)

    def take(self) -> PreparedRun:
        """The started job (one is started now if none was), for one ``run``; the next ``start``
        starts another."""
        self.start()
        prepared, self._prepared = self._prepared, None
        assert prepared is not None
        return prepared

    def close(self) -> None:
        if self._prepared is not None:
            self._prepared.close()
            self._prepared = None


def _shrink_rounds(
    ahead: _Ahead,
    describe: _Ahead,
    current: Input,
    rival: int,
    want_both_ok: bool,
    rounds: int,
    until: float,
    fanout: int,
    limit: int,
    keep: Callable[[Input], bool] | None,
    known: KnownOutcomes | None,
    cancel: threading.Event | None,
) -> Input:
    """``shrink``'s rounds: the smallest input found, or ``current`` itself."""
    tried: dict[str, tuple[Outcome, Outcome]] = {}  # (mine, the rival's) per candidate key, run or known
    # a candidate's rank and whether it is kept are asked again in every round that proposes it
    # (the examples' magnitudes, the domain's bounds: most of a round's own time)
    ranks: dict[str, tuple[int, float, int]] = {}
    kept: dict[str, bool] = {}

    def rank(c: Input) -> tuple[int, float, int]:
        k = c.key()
        r = ranks.get(k)
        if r is None:
            r = ranks[k] = shrink_key(c)
        return r

    def keeps(c: Input) -> bool:
        if keep is None:
            return True
        k = c.key()
        ok = kept.get(k)
        if ok is None:
            ok = kept[k] = keep(c)
        return ok

    for round_ in range(rounds):
        if time.monotonic() >= until:
            break
        first = [c for c in shrink_candidates(current, rank=rank) if rank(c) < rank(current) and keeps(c)]
        candidates = {c.key(): c for c in first}
        for c in sorted(first, key=rank)[:fanout]:
            for cc in shrink_candidates(c, rank=rank):
                if len(candidates) >= limit:
                    break
                if keeps(cc):
                    candidates.setdefault(cc.key(), cc)
        batch = list(candidates.values())
        if not batch:
            break
        todo = []
        for cand in batch:
            key = cand.key()
            if key not in tried:
                pair = known.pair(key, rival) if known is not None else None
                if pair is None:
                    todo.append(cand)
                else:
                    tried[key] = pair
        if todo:
            job = ahead.take()
            if round_ + 1 < rounds and not describe.started:
                # The next round's, loading while this one runs.  Two jobs at once at most: the pool
                # keeps two idle workers per key, and a third would start an interpreter.
                ahead.start()
            try:
                report = job.run(todo, cancel=cancel)
            finally:
                job.close()
            if report.module_error or report.load_errors[0] or report.load_errors[1]:
                break
            for idx, cand in enumerate(todo):
                tried[cand.key()] = (report.outcomes[0][idx], report.outcomes[1][idx])
                if known is not None:
                    known.learn(cand, {0: report.outcomes[0][idx], rival: report.outcomes[1][idx]})
        best: tuple[Any, ...] | None = None
        for cand in batch:
            mine, theirs = tried[cand.key()]
            if _disagree(mine, theirs, want_both_ok):
                order = (rank(cand), cand.key())
                if best is None or order < best[0]:
                    best = (order, cand)
        if best is None or not rank(best[1]) < rank(current):
            break
        current = best[1]
        if todo and (known is None or known.get(current.key()) is None):
            # unless a smaller one follows, every program runs on this input: its job loads while
            # the next round runs (a round that ran nothing has nothing to hide it behind, and a
            # job started and given up costs its close)
            describe.start()
    return current


def toward_examples(
    executor: Executor,
    module: ModuleContext,
    programs: Sequence[Program],
    rival: int,
    current: Input,
    outcomes: Sequence[Outcome],
    candidates: Sequence[Input],
    *,
    seed: int = 0,
    cancel: threading.Event | None = None,
    budget: float = SHRINK_BUDGET,
    known: KnownOutcomes | None = None,
) -> tuple[Input, list[Outcome]]:
    """The first of ``candidates`` (variants of ``current`` with the examples' magnitudes, in
    order of preference) on which yours and ``rival`` still disagree the same way, with every
    program's outcome on it; else ``current`` unchanged.  Two runs at most: the pair on all
    candidates, then every program on the one chosen; none where ``known`` has the outcomes."""
    if not candidates:
        return current, list(outcomes)
    want_both_ok = outcomes[0].kind == "ok" and outcomes[rival].kind == "ok"
    budget = max(budget, 2 * executor.limits.call_timeout)
    pairs: list[tuple[Outcome, Outcome] | None] = [
        known.pair(c.key(), rival) if known is not None else None for c in candidates
    ]
    if any(p is None for p in pairs):
        report = executor.run(
            module, [programs[0], programs[rival]], list(candidates), seed=seed, cancel=cancel, budget=budget
        )
        if report.module_error or report.load_errors[0] or report.load_errors[1]:
            return current, list(outcomes)
        ran = [(report.outcomes[0][idx], report.outcomes[1][idx]) for idx in range(len(candidates))]
        if known is not None:
            for cand, (mine, theirs) in zip(candidates, ran):
                known.learn(cand, {0: mine, rival: theirs})
        pairs = list(ran)
    for cand, pair in zip(candidates, pairs):
        if pair is not None and _disagree(pair[0], pair[1], want_both_ok):
            found = known.get(cand.key()) if known is not None else None
            if found is None:
                full = executor.run(module, list(programs), [cand], seed=seed, cancel=cancel, budget=budget)
                if full.module_error:
                    break
                found = [row[0] for row in full.outcomes]
                if known is not None and not any(full.load_errors):
                    known.learn(cand, dict(enumerate(found)))
            if _disagree(found[0], found[rival], want_both_ok):
                return cand, found
            break
    return current, list(outcomes)


def _disagree(mine: Outcome, theirs: Outcome, want_both_ok: bool) -> bool:
    if outcomes_equal(mine, theirs):
        return False
    if want_both_ok and (mine.kind != "ok" or theirs.kind != "ok"):
        return False
    # a disagreement made of a timeout is not one a user can read
    return not ({mine.error, theirs.error} & OUT_OF_TIME)


def render_outcomes(outcomes: Sequence[Outcome], receiver: bool = False) -> list[str]:
    """Every outcome as the user reads it.  On a method, when some program changed the object,
    the ones that returned without changing anything say so (``0 (and leaves the object
    unchanged)``): a bare ``0`` beside ``0 (and leaves the object as Cart(items={'': 0}))`` reads
    as agreement."""
    shown = [o.render(receiver=receiver) for o in outcomes]
    if any(o.kind == "ok" and o.mutated is not None for o in outcomes):
        # a function's arguments as a method's object: two equal values never read as a disagreement
        unchanged = " (and leaves the object unchanged)" if receiver else " (and leaves its arguments unchanged)"
        shown = [f"{s}{unchanged}" if o.kind == "ok" and o.mutated is None else s for o, s in zip(outcomes, shown)]
    return shown


def describe(
    name: str,
    inp: Input,
    outcomes: Sequence[Outcome],
    rival_index: int,
    *,
    shrunk_from: Input | None = None,
    receiver: bool = False,
    params: Sequence[str] = (),
) -> Counterexample:
    """Group every program's outcome on ``inp``; ``outcomes[0]`` is the user's.  ``name`` is the
    callee as written in a call (``Counter().add`` for a method); ``receiver`` says the outcomes'
    first argument is that object."""
    labels = group_outcomes(outcomes)
    mine = outcomes[0]
    shown = render_outcomes(outcomes, receiver)
    groups: dict[int, list[int]] = {}
    for prog, lab in enumerate(labels[1:], start=1):
        groups.setdefault(lab, []).append(prog)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    alternatives = [ClusterOutput(output=shown[g[0]], count=len(g), agrees=lab == labels[0]) for lab, g in ordered]
    disagreeing = sum(1 for lab in labels[1:] if lab != labels[0])
    rival = rival_index
    if outcomes_equal(outcomes[rival], mine):  # the rival cluster's representative agreed here after all
        rival = next((g[0] for lab, g in ordered if lab != labels[0]), rival)
    return Counterexample(
        call=inp.call(name),
        yours=shown[0],
        theirs=shown[rival],
        alternatives=alternatives,
        disagreeing=disagreeing,
        total=len(outcomes) - 1,
        shrunk_from=shrunk_from.call(name) if shrunk_from is not None and shrunk_from.key() != inp.key() else None,
        mutation=None if receiver else mutation.in_words(inp, outcomes, params),
        yours_message=mine.message if mine.kind == "raise" else None,
    )
