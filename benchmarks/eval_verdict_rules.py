"""Replay severity rules on recorded eval runs: the engine's shipped rule (``verdict.judge``)
against the old one (Warning when trust < 0.5), per model, from ``coherence eval --keep-matrices``
output.  Prints a markdown table; no sandbox runs.

    python benchmarks/eval_verdict_rules.py RUN_ROOT...     # e.g. /tmp/ev-before-he /tmp/ev-before-mbpp

Each run directory needs ``tasks.jsonl`` and ``matrices.jsonl``.  The inside-the-domain mask is
the one recorded in the matrix (``inside``, written by the eval when present), else every input
counts as inside; the degenerate and empty-string inputs come from the input sources recorded beside it (runs from
before they were recorded are judged without those terms).  "verified" here uses the reference's outcome on the rule's own (unshrunk)
input, from the matrix's last row; ``coherence eval`` itself verifies the shrunk counterexample
the user would see.  Definitions: ``coherence.eval.verdicts``.
"""

from __future__ import annotations

import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from coherence.engine.execution.executor import OUT_OF_TIME
from coherence.engine.inputs import Input
from coherence.engine.verdict import judge
from coherence.engine.verdict.rules import input_masks as input_masks_of

CHECKED = ("coherent", "incoherent")


def checked(run: Path, *, complete: bool = False, only: set[str] | None = None):
    """``(task record, matrix)`` of each task of one run that was checked (``complete``: whose
    record says so; ``only``: of these task ids)."""
    records = {
        str(r["task_id"]): r
        for r in map(json.loads, filter(str.strip, (run / "tasks.jsonl").read_text().splitlines()))
        if (not complete or r.get("complete")) and (only is None or str(r["task_id"]) in only)
    }
    for line in (run / "matrices.jsonl").read_text().splitlines():
        mtx = json.loads(line)
        r = records.get(str(mtx["task_id"]))
        if r is not None and r.get("status") in CHECKED:
            yield r, mtx


def tasks(root: Path):
    for run in sorted(p.parent for p in root.rglob("matrices.jsonl")):
        yield from checked(run)


def reference_backs(labels, ref, ref_raised, rival: int | None, x: int) -> bool:
    """The reference returns what ``rival`` returns on input ``x``: a disagreement the
    benchmark's tests miss, which makes a diagnostic on a passing function right."""
    return rival is not None and not ref_raised[x] and ref[x] == labels[rival, x]


def _kept(mtx: dict) -> np.ndarray:
    """The inputs every program reached: the rest are left out, as the check does."""
    errors = np.array(mtx["errors"])
    names = mtx["error_names"]
    keep = np.ones(errors.shape[1], dtype=bool)
    if "BudgetExceeded" in names:
        keep &= ~(errors[: len(mtx["candidates"])] == names.index("BudgetExceeded")).any(axis=0)
    return keep


def unpack(mtx: dict):
    labels = np.array(mtx["labels"])
    errors = np.array(mtx["errors"])
    m = len(mtx["candidates"])
    keep = _kept(mtx)
    inside = np.array([c == "1" for c in mtx.get("inside") or "1" * labels.shape[1]])
    return labels[:m, keep], errors[:m, keep] >= 0, labels[m, keep], errors[m, keep] >= 0, inside[keep]


def input_masks(mtx: dict) -> dict[str, np.ndarray]:
    """``judge``'s masks of the rules that read the inputs alone (``verdict.rules``: every rule
    the domain does not decide), as the engine builds them, from the input sources the eval stores
    beside the matrix, each parsed once (none for runs recorded before the sources were; an input
    whose source does not parse as literals is in no mask); and ``yours_slow``, from the outcomes."""
    sources = mtx.get("inputs")
    if not sources:
        return {}
    inputs, parsed = [], []
    for x, src in enumerate(sources):
        try:
            args, kwargs = ast.literal_eval(src)
            inputs.append(Input(tuple(args), tuple(kwargs.items())))
            parsed.append(x)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            inputs.append(Input(()))
    keep = _kept(mtx)
    return {name: mask[keep] for name, mask in input_masks_of(inputs, parsed).items()} | yours_slow(mtx)


def yours_slow(mtx: dict) -> dict[str, np.ndarray]:
    """``judge``'s ``yours_slow`` mask, as the check builds it: the inputs where your function
    (row 0) ran out of time (``OUT_OF_TIME``), among those every program reached."""
    names = mtx["error_names"]
    slow = [names.index(n) for n in OUT_OF_TIME if n in names]
    return {"yours_slow": np.isin(np.array(mtx["errors"])[0], slow)[_kept(mtx)]}


def evaluate(root_dirs: list[Path]) -> dict:
    rows: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    for root in root_dirs:
        for r, mtx in tasks(root):
            labels, raised, ref, ref_raised, inside = unpack(mtx)
            fails = not r.get("candidate0_pass")
            clean = not fails and r.get("error") == 0
            incoherent = (r.get("incoherence") or 0) > 0
            ev = judge(labels, raised, inside=inside, incoherent=incoherent, masks=input_masks(mtx))
            for key in (r["model"], "pooled"):
                row = rows[key]
                row["functions"] += 1
                row["failing"] += fails
                # old: a diagnostic for any disagreement, a warning below trust 0.5
                if incoherent and r["trust"] < 0.5:
                    row["old W"] += 1
                    row["old W failing"] += fails
                row["old diag on clean"] += incoherent and clean
                if ev.severity in ("warning", "information"):
                    x, rival = ev.input, ev.rival
                    verified = fails or reference_backs(labels, ref, ref_raised, rival, x)
                    row[f"{ev.severity} verified"] += verified
                    row[ev.severity] += 1
                    row["new diag on clean"] += clean
                    if ev.severity == "warning":
                        row["new W failing"] += fails
    return rows


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv] or [Path("coherence-eval")]
    rows = evaluate(roots)
    f = lambda a, b: f"{a / b:.2f}" if b else "–"  # noqa: E731
    print(
        "| model | functions | failing | old W | old recall | old diag. on clean | W | recall | W prec. (verified) | I | I prec. (verified) | diag. on clean |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model in sorted(rows, key=lambda k: (k == "pooled", k)):
        r = rows[model]
        print(
            f"| {model} | {r['functions']} | {r['failing']} | {r['old W']} | {f(r['old W failing'], r['failing'])} | {r['old diag on clean']} | "
            f"{r['warning']} | {f(r['new W failing'], r['failing'])} | {f(r['warning verified'], r['warning'])} | {r['information']} | "
            f"{f(r['information verified'], r['information'])} | {r['new diag on clean']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
