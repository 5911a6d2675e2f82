"""The coherence engine: a library with no editor dependency.

Pipeline: markers -> Spec -> sampling -> inputs -> execution -> outcomes -> metrics
-> verdict (severity) and calibration (trust) -> counterexample -> CheckResult.  ``check.Checker`` is the orchestration entry point
(``await Checker(config).check(target)``, or ``check_source`` for every marked function of a file).
"""

from __future__ import annotations
