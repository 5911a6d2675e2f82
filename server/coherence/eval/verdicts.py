"""How good the verdicts are: severity against the benchmark's tests and against the reference
solution on the counterexample the user would see, and how well trust is calibrated.

Per task (``tasks.jsonl``): ``severity`` (the engine's verdict), ``trust``, and for a flagged
function ``counterexample.reference``: what the reference solution does on the counterexample
("theirs": it agrees with the alternatives the counterexample sets against yours, "yours",
"neither", "rejects": it raises there, the input is out of contract, "unknown").

Definitions (over checked tasks):

- a diagnostic is a verdict of severity ``warning`` or ``information`` (a ``hint`` shows in the code
  lens only);
- a warning is **verified** when candidate 0 fails the benchmark's tests, or when the reference agrees
  with theirs on the counterexample (an input it accepts);
- ``warning_recall_tests``: failing functions that get a warning, over failing functions;
- ``warning_precision_tests``: warnings on failing functions, over warnings;
- ``warning_precision_verified``: verified warnings, over warnings; ``information_precision_verified``
  the same for information;
- ``counterexample_rejected_share``: diagnostics whose counterexample the reference rejects;
- ``clean``: candidate 0 passes the tests and agrees with the reference on every input the reference
  accepts (pointwise ``error == 0``); ``diagnostics_on_clean`` counts diagnostics on them, and
  ``incoherent_on_clean`` counts those with any disagreement at all (every one of them got a
  diagnostic before verdicts had severities);
- ``ece_trust``: expected calibration error of ``trust`` as the probability that candidate 0 passes
  its tests (10 equal-width bins), ``auroc_trust`` and ``auroc_dsde`` for predicting a failure;
- ``pr_curve``: precision (verified) and recall (tests) of "warning" when the bloc that outvotes
  yours must be at least a share s of the alternatives, for s in 0.1 .. 1.0.
"""

from __future__ import annotations

from collections.abc import Iterable

from coherence.eval.stats import auroc

CHECKED = ("coherent", "incoherent", "nondeterministic")
DIAGNOSTIC = ("warning", "information")


def _checked(records: Iterable[dict]) -> list[dict]:
    return [r for r in records if r.get("status") in CHECKED and r.get("incoherence") is not None]


def fails(r: dict) -> bool:
    return not r.get("candidate0_pass", False)


def reference_says(r: dict) -> str | None:
    return ((r.get("counterexample") or {}).get("reference")) if isinstance(r.get("counterexample"), dict) else None


def verified(r: dict) -> bool:
    return fails(r) or reference_says(r) == "theirs"


def clean(r: dict) -> bool:
    return not fails(r) and r.get("error") == 0


def _share(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _bins(probs: list[float], outcomes: list[bool], bins: int) -> list[tuple[float, float, int, float, float]]:
    """(lo, hi, n, mean prob, mean outcome) of each non-empty equal-width bin; 1.0 falls in the last."""
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, p in enumerate(probs) if (lo <= p < hi) or (b == bins - 1 and p == 1.0)]
        if idx:
            out.append(
                (lo, hi, len(idx), sum(probs[i] for i in idx) / len(idx), sum(outcomes[i] for i in idx) / len(idx))
            )
    return out


def ece(probs: list[float], outcomes: list[bool], bins: int = 10) -> float | None:
    """Expected calibration error: the mean over equal-width bins of |mean prob - mean outcome|,
    weighted by the bin's share of the points."""
    if not probs:
        return None
    return round(sum(n * abs(p - o) for _, _, n, p, o in _bins(probs, outcomes, bins)) / len(probs), 4)


def reliability(probs: list[float], outcomes: list[bool], bins: int = 10) -> list[dict]:
    return [
        {"bin": [lo, hi], "n": n, "trust": round(p, 4), "pass_rate": round(o, 4)}
        for lo, hi, n, p, o in _bins(probs, outcomes, bins)
    ]


def pr_curve(records: list[dict]) -> list[dict]:
    """Warning precision (verified) and recall (tests) as the bloc share behind a warning varies."""
    checked = _checked(records)
    failing = sum(1 for r in checked if fails(r))
    out = []
    for k in range(1, 11):
        s = k / 10
        flagged = [
            r
            for r in checked
            if r.get("severity") in DIAGNOSTIC
            and _bloc_share(r) >= s
            and (r.get("evidence") or {}).get("bloc", 0) > (r.get("evidence") or {}).get("agree", 0)
        ]
        out.append(
            {
                "share": s,
                "warnings": len(flagged),
                "recall_tests": _share(sum(fails(r) for r in flagged), failing),
                "precision_verified": _share(sum(verified(r) for r in flagged), len(flagged)),
            }
        )
    return out


def _bloc_share(r: dict) -> float:
    ev = r.get("evidence") or {}
    alts = ev.get("alternatives") or 0
    return (ev.get("bloc") or 0) / alts if alts else 0.0


def verdict_summary(records: list[dict]) -> dict:
    checked = _checked(records)
    failing = [r for r in checked if fails(r)]
    warnings = [r for r in checked if r.get("severity") == "warning"]
    infos = [r for r in checked if r.get("severity") == "information"]
    diags = warnings + infos
    cleans = [r for r in checked if clean(r)]
    trusts = [r for r in checked if r.get("trust") is not None]
    # the raw DSDE where recorded (the trust score clips it); a record without either is left out
    dsde_known = [(r, d) for r in checked if (d := r.get("dsde_raw", r.get("dsde"))) is not None]
    return {
        "warnings": len(warnings),
        "informations": len(infos),
        "hints": sum(1 for r in checked if r.get("severity") == "hint"),
        "failing": len(failing),
        "warning_recall_tests": _share(sum(fails(r) for r in warnings), len(failing)),
        "warning_precision_tests": _share(sum(fails(r) for r in warnings), len(warnings)),
        "warning_precision_verified": _share(sum(verified(r) for r in warnings), len(warnings)),
        "information_precision_verified": _share(sum(verified(r) for r in infos), len(infos)),
        "diagnostic_recall_tests": _share(sum(fails(r) for r in diags), len(failing)),
        "counterexample_rejected_share": _share(sum(reference_says(r) == "rejects" for r in diags), len(diags)),
        "clean": len(cleans),
        "diagnostics_on_clean": sum(1 for r in cleans if r.get("severity") in DIAGNOSTIC),
        "incoherent_on_clean": sum(1 for r in cleans if (r.get("incoherence") or 0) > 0),
        "ece_trust": ece([r["trust"] for r in trusts], [not fails(r) for r in trusts]),
        "auroc_trust": auroc([-r["trust"] for r in trusts], [fails(r) for r in trusts]),
        "auroc_dsde": auroc([d for _, d in dsde_known], [fails(r) for r, _ in dsde_known]),
        "reliability": reliability([r["trust"] for r in trusts], [not fails(r) for r in trusts]),
        "pr_curve": pr_curve(records),
    }
