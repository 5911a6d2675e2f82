"""The coherence engine: a library with no editor dependency.

Pipeline: markers -> Spec -> sampling -> inputs -> execution -> outcomes -> metrics
-> counterexample -> CheckResult.  ``check.check_target`` is the orchestration entry point.
"""
