"""Tally of the data-boundary attacks (issue 28, sections 4 and 5): tried / contained / escapes.

    python benchmarks/boundary_tally.py [--verbose] [--sandbox]

* report values: every payload of ``tests/hostile/test_reports.py`` (secrets in 12 formats,
  control and bidi characters, markdown) in every field of a result a program fills, checked in
  every rendering (text, JSON, SARIF, diagnostic, lens, hover rendered as markdown, command result);
* prompt secrets: each secret of that table as a module constant, and in the docstring, through
  ``build_messages`` (what a check sends);
* language-server faults: every fault of ``tests/faults/test_lsp_framing.py`` against one real
  ``coherence serve`` over raw stdio, each followed by a request that must be answered;
* repository files: what a cloned repository ships (``tests/hostile/repo_files.py``): links
  planted as the report or the baseline, an untrusted table that raises samples, mode, the cost
  cap or the time budgets, baselines nested deep or too large, gzip replay bombs, test files the
  seeder cannot decode, thousands of marked functions to key;
* with ``--sandbox``: the hostile corpus (``tests/hostile/corpus.py``) in each sandbox mode that
  works here, one line per attack class, naming the user it ran as and the sandbox that ran it
  (CI runs it as root and again as an ordinary user, see ``.ci/run``), then the attacks on the
  job leader and beside the workspace (``tests/hostile/leader_attacks.py``), per class.

Exit status 1 when anything escaped.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "server"))

from tests.hostile.test_reports import ATTACKS, SECRETS, hostile_result, renderings, secret_of, violations  # noqa: E402


def reports() -> dict[str, list[str]]:
    return {
        name: violations(name, renderings([hostile_result(payload)]), secret_of(name))
        for name, payload in ATTACKS.items()
    }


def prompts() -> dict[str, list[str]]:
    from coherence.engine.markers import find_targets
    from coherence.engine.sampling.prompt import build_messages

    out = {}
    for name, secret in SECRETS.items():
        hidden = secret_of(f"secret: {name}")
        source = f'VALUE = {secret!r}\n\n\n# coherence\ndef f(x: int) -> int:\n    """Return x (see {secret!r})."""\n    return x\n'
        (target,) = find_targets(source, "m.py")
        sent = "".join(m["content"] for m in build_messages(target.spec))
        out[name] = [f"sent {sent.count(hidden)} time(s)"] if hidden in sent else []
    return out


def server_faults() -> dict[str, list[str]]:
    from tests.faults.test_lsp_framing import FAULTS, inflict, start

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        server, uri = start(Path(tmp) / "0")
        try:
            for k, name in enumerate(FAULTS):
                out[name] = inflict(server, uri, name)
                if out[name]:  # it died or went deaf: the next fault gets a new server
                    server.close()
                    server, uri = start(Path(tmp) / str(k + 1))
        finally:
            code = server.close()
        out["exit 0 after shutdown"] = [] if code == 0 else [f"exit code {code}"]
    return out


def repository_files() -> dict[str, list[str]]:
    from tests.hostile.repo_files import run_all

    return run_all()


def sandbox_tally() -> int:
    """The hostile corpus in each sandbox mode that works here: per attack class, tried /
    contained / escapes, naming the user it ran as and the sandbox that ran it.  The escapes."""
    from benchmarks.hostile_tally import run_all

    from coherence.engine.execution import sandbox as sb
    from tests.hostile.corpus import CORPUS
    from tests.hostile.harness import modes

    who = f"uid {os.getuid()}" + (" (root)" if os.getuid() == 0 else " (an ordinary user)")
    place, why = sb.memory_cgroup()
    print(
        f"memory beyond RLIMIT_AS (memfd, shared memory, tmpfs) as {who}: "
        + (f"a cgroup v2 memory.max per run under {place} (guard)" if place else f"no cgroup v2 memory limit ({why})")
        + "; seccomp denies memfd_create, shmget, mq_open"
        + ("" if "seccomp" in sb.kernel_layers() else ": NOT HERE (no seccomp on this kernel/architecture)")
    )
    escapes = 0
    for mode in modes():
        started = time.monotonic()
        tried: dict[str, int] = {}
        escaped: dict[str, list[str]] = {}
        for r in run_all(CORPUS, mode):
            c = r.entry.category
            tried[c] = tried.get(c, 0) + 1
            if r.violations:
                escaped.setdefault(c, []).append(f"{r.entry.name}: {'; '.join(r.violations)}")
        bad = sum(len(v) for v in escaped.values())
        escapes += bad
        name = sb.sandbox_name(mode, sb.planned_layers(mode))
        print(
            f"sandbox {name} as {who}: tried {len(CORPUS)} / contained {len(CORPUS) - bad} / escapes {bad}"
            f"  ({time.monotonic() - started:.1f}s)"
        )
        for c in sorted(tried):
            print(
                f"    {c}: tried {tried[c]} / contained {tried[c] - len(escaped.get(c, []))} / escapes {len(escaped.get(c, []))}"
            )
            for line in escaped.get(c, []):
                print(f"      ESCAPE {line}")
    return escapes + leader_tally(who)


def leader_tally(who: str) -> int:
    """The attacks on the job leader and beside the workspace (issue 50,
    ``tests/hostile/leader_attacks.py``) in each sandbox mode, per class.  The escapes."""
    from coherence.engine.execution import sandbox as sb
    from tests.hostile.harness import modes
    from tests.hostile.leader_attacks import ATTACKS, CLASSES, run_attack

    escapes = 0
    for mode in modes():
        name = sb.sandbox_name(mode, sb.planned_layers(mode))
        by_class: dict[str, list[str]] = {}
        failed: list[str] = []
        for attack in ATTACKS:
            by_class.setdefault(CLASSES[attack], [])
            problems = run_attack(attack, mode)
            if problems:
                by_class[CLASSES[attack]].append(attack)
                failed.append(f"{attack}: {'; '.join(problems)}")
        escapes += len(failed)
        print(f"leader and beside the workspace, {name} as {who}: tried {len(ATTACKS)} / escapes {len(failed)}")
        for c, bad in by_class.items():
            tried = sum(1 for a in ATTACKS if CLASSES[a] == c)
            print(f"    {c}: tried {tried} / contained {tried - len(bad)} / escapes {len(bad)}")
        for line in failed:
            print(f"      ESCAPE {line}")
    return escapes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="one line per attack")
    ap.add_argument(
        "--sandbox", action="store_true", help="also the hostile corpus per attack class, in each sandbox mode"
    )
    args = ap.parse_args()
    escapes = 0
    for label, run in (
        ("report values", reports),
        ("prompt secrets", prompts),
        ("language-server faults", server_faults),
        ("repository files", repository_files),
    ):
        started = time.monotonic()
        results = run()
        bad = {k: v for k, v in results.items() if v}
        escapes += len(bad)
        print(
            f"{label}: tried {len(results)} / contained {len(results) - len(bad)} / escapes {len(bad)}  ({time.monotonic() - started:.1f}s)"
        )
        for name, problems in results.items():
            if problems or args.verbose:
                print(f"    {name}: {'; '.join(problems) if problems else 'contained'}")
    if args.sandbox:
        escapes += sandbox_tally()
    return 1 if escapes else 0


if __name__ == "__main__":
    raise SystemExit(main())
