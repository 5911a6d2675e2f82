"""Where a panel's missing warning recall is, and how far any per-input extension of the panel's
severity rule could lift it, from ``coherence eval --panel --keep-matrices`` output; no sandbox runs.

    python benchmarks/eval_panel_misses.py --misses PANEL_ROOT...  # what holds each missed failure down
    python benchmarks/eval_panel_misses.py --bound PANEL_ROOT...   # extensions, leave-one-model-out

``--misses``: each failing function the shipped rule (``verdict.PANEL_TERMS``) leaves below a
warning goes in one bucket: the alternatives agree with yours on every input, or the panel term
or per-input rule whose removal alone makes it a warning (then the pair of model terms, then all
terms and masks together), or none (the bloc is under the warning shares of the same-model rule
itself).  Per bucket: how many would be warnings with the term lifted, how many of those the
reference backs (it returns the bloc's value on the evidence's input), how many have no
alternative that passes the tests (the panel shares the failure), and what lifting the term costs
on passing functions.

``--bound``: the shipped rule plus one extension: a warning on a function the shipped rule leaves
below, when N inputs or more (inside the domain, out of every cap) hold a bloc of B alternatives
or more that return one value against yours, with at most A alternatives agreeing with yours and
at most Y of the panel's models whole behind yours; the evidence's kind (both return a value,
yours raises, or either) and whether degenerate inputs count are parameters too.  For each
held-out author, the extension is chosen on the other authors: the highest recall with verified
precision at least the floor, else the highest precision (the shipped rule is among the choices);
floors 0.85 and 0.835.  "Verified" as in ``eval_panel_rules.py``: on the rule's own (unshrunk)
input, where the replay of the shipped rule comes out about 0.016 below the real runs, which
verify the shrunk counterexample the user sees: hence the second floor.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from coherence.engine.verdict import PANEL_TERMS, judge, rules
from coherence.engine.verdict.severity import _largest_blocs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_panel_rules import origins_of
from eval_verdict_rules import checked, input_masks, reference_backs, unpack

SHIPPED = dict(PANEL_TERMS)
# the terms a missed failure may be held down by: judge's keywords, then the masks left out
RELAXED: dict[str, tuple[dict, tuple[str, ...]]] = {
    "a whole model backs yours (model_backs)": ({**SHIPPED, "model_backs": ""}, ()),
    "the bloc's models hold 3/4 (held_share)": ({**SHIPPED, "held_share": 0.0}, ()),
    "whole models on 10+ inputs (whole_min_inputs)": ({**SHIPPED, "whole_min_inputs": 1}, ()),
    "empty-collections cap": (SHIPPED, ("empty_collections",)),
    "empty-strings cap": (SHIPPED, ("empty_strings",)),
    "yours ran out of time (yours_slow)": (SHIPPED, ("yours_slow",)),
    "outside the stated domain (inside)": (SHIPPED, ("inside",)),
}
BOTH_MODEL_TERMS = ({**SHIPPED, "model_backs": "", "held_share": 0.0}, ())
NO_TERMS = ({}, ("empty_collections", "empty_strings", "yours_slow", "inside"))
TOGETHER = ("model_backs and held_share together", "every panel term and mask together")


def judged(run: Path):
    """Per checked task of a panel run: what the replay needs, in one dict."""
    origins = origins_of(run)
    if origins is None:
        return
    for r, mtx in checked(run, complete=True):
        yield task_view(run.name, r, mtx, origins)


def task_view(run_name: str, r: dict, mtx: dict, origins: dict[str, list[str]] | None) -> dict:
    """One checked task as the replay reads it (``origins`` None: a same-model run)."""
    labels, raised, ref, ref_raised, inside = unpack(mtx)
    used = r.get("used") or list(range(len(r["passed"])))
    return {
        "task": f"{run_name}/{r['entry_point']}",
        "labels": labels,
        "raised": raised,
        "ref": ref,
        "ref_raised": ref_raised,
        "inside": inside,
        "masks": input_masks(mtx),
        "models": [origins[str(mtx["task_id"])][c] for c in mtx["candidates"]] if origins else ["one"] * len(labels),
        "fails": not r.get("candidate0_pass"),
        "incoherent": (r.get("incoherence") or 0) > 0,
        "alternatives_pass": sum(r["passed"][i] for i in used[1:]) if len(used) == len(labels) else None,
    }


def verdict_of(t: dict, terms: tuple[dict, tuple[str, ...]]):
    kw, off = terms
    masks = {k: v for k, v in t["masks"].items() if k not in off}
    inside = None if "inside" in off else t["inside"]
    return judge(
        t["labels"], t["raised"], inside=inside, incoherent=t["incoherent"], models=t["models"], masks=masks, **kw
    )


def backs_bloc(t: dict, ev) -> bool:
    """The reference returns the bloc's value on the evidence's input."""
    return reference_backs(t["labels"], t["ref"], t["ref_raised"], ev.rival, ev.input)


def panel_runs(roots: list[Path]) -> list[Path]:
    runs = sorted({p.parent for root in roots for p in root.rglob("matrices.jsonl")})
    return [r for r in runs if json.loads((r / "run.json").read_text())["settings"].get("panel")]


def misses(roots: list[Path]) -> None:
    buckets: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, list[str]] = defaultdict(list)
    cost: dict[str, Counter] = defaultdict(Counter)
    split: Counter = Counter()  # failing (True) or passing: the strongest evidence is one model's
    for run in panel_runs(roots):
        for t in judged(run):
            ev = verdict_of(t, (SHIPPED, ()))
            if ev.severity == "warning":
                continue
            lifts = {name: verdict_of(t, terms) for name, terms in RELAXED.items()}
            if t["incoherent"]:
                split[t["fails"]] += one_model_against(t)
            if not t["fails"]:  # what lifting each term costs on passing functions
                together = {TOGETHER[0]: verdict_of(t, BOTH_MODEL_TERMS), TOGETHER[1]: verdict_of(t, NO_TERMS)}
                for name, got in (lifts | together).items():
                    if got.severity == "warning":
                        cost[name]["warnings"] += 1
                        cost[name]["unverified"] += not backs_bloc(t, got)
                continue
            if ev.severity == "none":
                key, lifted = "none: the alternatives agree with yours on every input", None
            else:
                binding = [name for name, got in lifts.items() if got.severity == "warning"]
                if binding:
                    key, lifted = " / ".join(binding), lifts[binding[0]]
                elif (got := verdict_of(t, BOTH_MODEL_TERMS)).severity == "warning":
                    key, lifted = TOGETHER[0], got
                elif (got := verdict_of(t, NO_TERMS)).severity == "warning":
                    key, lifted = TOGETHER[1], got
                else:
                    key, lifted = (
                        f"the same-model warning shares, no term lifts it ({ev.why or 'a bloc under them'})",
                        None,
                    )
                key = f"{ev.severity}: {key}"
            c = buckets[key]
            c["n"] += 1
            c["no alternative passes"] += t["alternatives_pass"] == 0
            if lifted is not None:
                c["lifted"] += 1
                c["reference backs the bloc"] += backs_bloc(t, lifted)
            examples[key].append(t["task"])
    total = sum(c["n"] for c in buckets.values())
    print(f"failing functions below a warning: {total}\n")
    print(
        "| held down by | failing | no alternative passes the tests | warnings if lifted | of which the reference backs the bloc | e.g. |"
    )
    print("|---|---|---|---|---|---|")
    for key, c in sorted(buckets.items(), key=lambda kv: -kv[1]["n"]):
        print(
            f"| {key} | {c['n']} | {c['no alternative passes']} | {c['lifted']} | {c['reference backs the bloc']} | "
            f"{', '.join(examples[key][:3])} |"
        )
    print("\n| term lifted | warnings added on passing functions | of which unverified |")
    print("|---|---|---|")
    for name in (*RELAXED, *TOGETHER):
        print(f"| {name} | {cost[name]['warnings']} | {cost[name]['unverified']} |")
    print(
        f"\nbelow a warning, the strongest evidence is one whole model against yours and every other model whole "
        f"behind it: {split[True]} failing, {split[False]} passing functions"
    )


# --- the bound: one per-input extension of the shipped rule, chosen leave-one-model-out ---

KINDS = ("value", "yours-raises", "either")
GRID = list(
    itertools.product(KINDS, (2, 3, 4, 5, 6), (0, 1, 2, 3, 4, 6), (0, 1, 2, 3), (1, 3, 10, 30, 100), (False, True))
)  # kind, bloc B, agree A, whole models behind yours Y, inputs N, degenerate inputs excluded


def one_model_against(t: dict) -> bool:
    """Whether, on the input with the largest bloc against yours (then the fewest with yours),
    the bloc is one model's every alternative and every other model's stand whole behind yours."""
    f = features(t)
    if not len(f):
        return False
    best = largest_bloc(f)
    models = Counter(t["models"][1:])
    return best[7] == 1 and best[3] == sum(k >= 2 for k in models.values()) - 1 and best[1] == max(models.values())


def largest_bloc(f: np.ndarray) -> np.ndarray:
    """Of ``features``' rows, the input with the largest bloc against yours, then the fewest
    alternatives with yours."""
    return f[np.lexsort((f[:, 2], -f[:, 1]))[0]]


def features(t: dict) -> np.ndarray:
    """Per input where yours and a bloc of alternatives differ and the bloc returns a value, inside
    the domain and out of every cap: (input, bloc, agree, whole models behind yours, yours
    raised, degenerate, the reference backs the bloc, whole models in the bloc)."""
    labels, raised, models = t["labels"], t["raised"], t["models"]
    rows_of = [np.array([i for i, m in enumerate(models[1:]) if m == name]) for name in sorted(set(models[1:]))]
    rows_of = [r for r in rows_of if len(r) >= 2]
    differs = labels[1:] != labels[0]
    n = labels.shape[1]
    out_of_caps = t["inside"].copy()
    for rule in rules.JUDGED:
        if rule.effect == "cap" and rule.name in t["masks"]:
            out_of_caps &= ~rule.flagged(t["masks"][rule.name])
    xs = np.flatnonzero((differs.sum(axis=0) > 0) & out_of_caps)
    degenerate = t["masks"].get("degenerate", np.zeros(n, dtype=bool))
    if not xs.size:
        return np.zeros((0, 8), dtype=np.int64)
    blocs, rivals = _largest_blocs(labels[1:, xs], differs[:, xs])
    out = []
    for x, bloc, rival in zip(xs.tolist(), blocs.tolist(), rivals.tolist()):
        if raised[rival, x]:
            continue
        col = labels[1:, x]
        behind = sum(bool((col[r] == labels[0, x]).all()) for r in rows_of)
        against = sum(bool((col[r] == col[rival - 1]).all()) for r in rows_of)
        agree = int((~differs[:, x]).sum())
        backs = not t["ref_raised"][x] and t["ref"][x] == labels[rival, x]
        out.append((x, bloc, agree, behind, bool(raised[0, x]), bool(degenerate[x]), backs, against))
    return np.array(out, dtype=np.int64).reshape(-1, 8)


def extension(f: np.ndarray, kind: str, bloc: int, agree: int, behind: int, inputs: int, no_degenerate: bool):
    """Whether the extension warns on a function with features ``f``, and whether the reference
    backs the bloc on its evidence's input (None: no warning)."""
    keep = (f[:, 1] >= bloc) & (f[:, 2] <= agree) & (f[:, 3] <= behind)
    if kind != "either":
        keep &= f[:, 4] == (kind == "yours-raises")
    if no_degenerate:
        keep &= f[:, 5] == 0
    if keep.sum() < inputs:
        return None
    q = f[keep]
    return bool(q[np.lexsort((q[:, 0], -q[:, 1], q[:, 5], q[:, 4]))[0], 6])


def bound(roots: list[Path], floors: tuple[float, ...] = (0.85, 0.835)) -> None:
    counts: dict[str, dict[tuple, Counter]] = {}
    for run in panel_runs(roots):
        by = counts[run.name] = defaultdict(Counter)
        for t in judged(run):
            ev = verdict_of(t, (SHIPPED, ()))
            base = Counter(failing=t["fails"])
            if ev.severity == "warning":
                base.update(W=1, Wf=t["fails"], Wv=t["fails"] or backs_bloc(t, ev))
            by[()].update(base)
            if ev.severity == "warning" or not t["incoherent"]:
                continue
            f = features(t)
            for params in GRID if len(f) else ():
                got = extension(f, *params)
                if got is not None:
                    by[params].update(W=1, Wf=t["fails"], Wv=t["fails"] or got)
        for params in GRID:  # the extension adds to the shipped rule's counts
            by[params].update(by[()])
    rate = lambda a, b: a / b if b else 0.0  # noqa: E731
    choices = [(), *GRID]

    def fit(train: list[str], params: tuple, floor: float) -> tuple[bool, float, float]:
        w, wf, wv, fl = (sum(counts[a][params][k] for a in train) for k in ("W", "Wf", "Wv", "failing"))
        p, r = rate(wv, w), rate(wf, fl)
        return (p >= floor, r if p >= floor else p, p)

    def line(name: str, row: Counter) -> str:
        return f"| {name} | {row['W']} | {rate(row['Wf'], row['failing']):.3f} | {rate(row['Wv'], row['W']):.3f} |"

    for floor in floors:
        print(
            f"\n| held-out author | extension chosen on the others (floor {floor}) | W | W recall | W prec. (verified) |"
        )
        print("|---|---|---|---|---|")
        shipped: Counter = Counter()
        chosen_rows: Counter = Counter()
        for held in counts:
            train = [a for a in counts if a != held]
            chosen = max(choices, key=lambda p, train=train: fit(train, p, floor))
            print(line(f"{held} | {chosen or 'none (shipped)'}", counts[held][chosen]))
            chosen_rows.update(counts[held][chosen])
            shipped.update(counts[held][()])
        print("\n| pooled over the held-out authors | W | W recall | W prec. (verified) |\n|---|---|---|---|")
        print(line("shipped", shipped))
        print(line(f"chosen leave-one-model-out, floor {floor}", chosen_rows))
    total = {p: sum((counts[a][p] for a in counts), Counter()) for p in choices}
    frontier, top = [], -1.0
    for p in sorted(
        choices, key=lambda p: (-rate(total[p]["Wf"], total[p]["failing"]), -rate(total[p]["Wv"], total[p]["W"]))
    ):
        if rate(total[p]["Wv"], total[p]["W"]) > top + 1e-9:
            frontier.append(p)
            top = rate(total[p]["Wv"], total[p]["W"])
    print("\nin sample (all authors), the recall/precision frontier of the extensions:\n")
    print("| extension (kind, B, A, Y, N, no degenerate) | W | W recall | W prec. (verified) |\n|---|---|---|---|")
    for p in frontier:
        print(line(str(p or "none (shipped)"), total[p]))


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv if not a.startswith("--")]
    if "--misses" in argv:
        misses(roots)
    if "--bound" in argv:
        bound(roots)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
