"""``coherence eval``: replay recorded LLM samples through the engine and measure it against the
benchmarks' own labels, with no oracle in the estimator.

For every task of a recorded-samples file (the ``../shared/corpus`` schema), candidate 0 plays the
user's function and candidates 1..m-1 the alternatives; the engine's ``Checker`` runs them exactly
as it would in the editor.  Labels come from the benchmark, run in the same sandbox, and are used
only to measure: they are never fed to the estimator.

Counting follows DESIGN.md: **m counts programs, candidate 0 included** (``--samples 10`` means
candidate 0 plus candidates 1..9).  Alternatives that do not define the function are dropped, as
the Checker does, and the real count is reported per task (``samples``).

Per task (``tasks.jsonl``)
--------------------------
- ``passed``: per candidate 0..m-1, whether it passes the benchmark's own tests (HumanEval
  ``check(candidate)``, MBPP ``test_imports`` + ``test_list`` asserts), run in the sandbox.
- ``error``: the papers' *pointwise error* of candidate 0: the share of the fuzzed inputs on which
  candidate 0's outcome differs from the reference solution's (HumanEval ``prompt +
  canonical_solution``, MBPP ``code``), over the inputs where the reference returns normally (inputs
  where the reference raises are excluded).  Outcomes compare with the engine's equality
  (``outcomes_equal``: return value *and* in-place changes of the arguments).
  ``error_value`` is the same with return values only (argument mutation ignored);
  ``error_mean_candidates`` is the mean pointwise error over all m programs (the E of
  Theorem 4.1, E >= I/2, is the error of a *sampled* program).
- every engine metric of the check: ``incoherence`` (U-statistic), ``disagreement``, ``sde``,
  ``dsde``, ``trust``, clusters, status, counterexample.

Summary (``summary.json``)
--------------------------
Tasks whose check produced metrics (status coherent, incoherent or nondeterministic) are *checked*;
the others (candidate 0 does not define the function, its module fails to load, ...) count in
``pass_at_1`` and ``tasks`` but in no metric that needs an incoherence.

- ``pass_at_1``: share of all tasks whose candidate 0 passes the benchmark tests.
- ``mean_error``: mean ``error`` over checked tasks where it is defined.
- ``mean_incoherence``: mean Î over checked tasks.
- ``spearman_error_incoherence``: Spearman ρ between ``error`` and Î over checked tasks (average
  ranks for ties).
- ``detection_rate`` (the paper's definition): among checked tasks with ``error > 0``, the share
  with Î > 0.
- ``detection_rate_mean_error``: the same with ``error_mean_candidates`` (the error of a *sampled*
  program, averaged over the m programs): the paper's logged ``Err`` is this mean, so this is the
  figure to put next to the paper's detection rates.
- ``detection_rate_tests``: among checked tasks whose candidate 0 *fails the benchmark tests*, the
  share with Î > 0.
- ``undetected_mean_error``: mean ``error`` of checked tasks with Î = 0 but ``error > 0``.
  ``confident_mean_error`` is the paper's variant: mean ``error`` over all checked tasks with Î = 0.
- ``false_alarm_rate``: among checked tasks with Î > 0 (the denominator, reported as
  ``false_alarm_denominator``), the share where every program that took part in the check
  (candidate 0 and the alternatives used) passes the benchmark tests.
- ``auroc_incoherence``, ``auroc_sde``, ``auroc_dsde``: AUROC of the score for predicting that
  candidate 0 *fails the benchmark tests*, over checked tasks (Mann-Whitney rank statistic; ties
  count one half).
- ``incoherent_precision_tests``: P(candidate 0 fails the tests | Î > 0) over checked tasks (every
  incoherent task, whatever its verdict; the warnings' own precision is ``warning_precision_tests``).
- ``share_zero_incoherence``: share of all tasks whose check reports Î = 0 (the paper's "deemed
  correct by incoherence"; ranked against ``pass_at_1`` by ``coherence eval --compare``).
- ``share_zero_error``: share of all tasks whose candidate 0 has zero pointwise error (the paper's
  "deemed correct" by the oracle on the fuzzed inputs; Figure 1's second ranking).
- ``seconds_per_task_median``: median wall time of one task (check + labels).
"""

from coherence.eval.stats import auroc, detection_rate, rankdata, roc_curve, spearman

__all__ = ["auroc", "detection_rate", "rankdata", "roc_curve", "spearman"]
