"""What a cloned repository ships, as attacks on the code that reads it (issue 50, findings 4, 5,
6b and 7), each run in this process through the public functions the CLI and the language server
call.  ``run_all()`` gives each attack's problems (empty: contained); ``benchmarks/boundary_tally.py``
prints them, and ``test_repo_files.py`` runs the same attacks end to end.
"""

from __future__ import annotations

import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

BASHRC = b"# the user's shell startup\nexport PATH=$HOME/bin:$PATH\n"


def _link_to_bashrc(tmp: Path, name: str) -> tuple[Path, Path]:
    bashrc = tmp / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_bytes(BASHRC)
    repo = tmp / "repo"
    repo.mkdir()
    (repo / name).symlink_to(bashrc)
    return repo / name, bashrc


def _report_link(tmp: Path) -> list[str]:
    from coherence.cli.report import write_report

    link, bashrc = _link_to_bashrc(tmp, "coherence.sarif")
    try:
        write_report('{"runs": []}', link)
    except OSError:
        pass
    return [] if bashrc.read_bytes() == BASHRC else ["the report was written into ~/.bashrc"]


def _baseline_link(tmp: Path) -> list[str]:
    from coherence.engine import baseline

    link, bashrc = _link_to_bashrc(tmp, baseline.DEFAULT_NAME)
    try:
        baseline.write(link, [])
    except OSError:
        pass
    return [] if bashrc.read_bytes() == BASHRC else ["the baseline was written into ~/.bashrc"]


def _resolved(tmp: Path, table: str):
    from coherence.engine.resolve import ConfigResolver
    from coherence.engine.trust import TrustStore

    repo = tmp / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[tool.coherence]\n" + table)
    resolver = ConfigResolver(store=TrustStore(tmp / "trusted.json"), user_dir=tmp / "user", env={})
    return resolver.for_path(repo / "m.py").config


def _spending(tmp: Path) -> list[str]:
    cfg = _resolved(tmp, 'samples = 1000\nmode = "docstring"\nmax_cost_usd = 1000\ninclude = ["*.py::*"]\n')
    got = {"samples": cfg.samples, "mode": cfg.mode, "max_cost_usd": cfg.max_cost_usd, "include": cfg.include}
    wanted = {"samples": 10, "mode": "marked", "max_cost_usd": 5.0, "include": ()}
    return [f"{k} = {got[k]!r} taken from an untrusted repository" for k in got if got[k] != wanted[k]]


def _budgets(tmp: Path) -> list[str]:
    cfg = _resolved(tmp, "call-timeout = 100000\nprogram-budget = 100000\nrun-budget = 100000\n")
    return [
        f"{k} = {getattr(cfg, k)!r} taken from an untrusted repository"
        for k in ("call_timeout", "program_budget", "run_budget")
        if getattr(cfg, k) == 100000
    ]


def _baseline(tmp: Path, text: str) -> list[str]:
    from coherence.engine.baseline import Baseline, BaselineError

    path = tmp / ".coherence-baseline.json"
    path.write_text(text)
    try:
        Baseline(path)
    except BaselineError:
        return []  # refused with a message (the CLI prints it, the editor shows it)
    except Exception as exc:  # what escapes is the finding
        return [f"{type(exc).__name__} escaped the baseline reader"]
    return ["read without complaint"]


def gzip_bomb(path: Path, line: bytes, total: int) -> None:
    """``total`` bytes of ``line`` repeated, gzip-compressed a chunk at a time."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: with a gzip header
    chunk = line * max(1, (1 << 20) // len(line))
    with open(path, "wb") as fh:
        for _ in range(total // len(chunk)):
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())


def _replay_bomb(tmp: Path, line: bytes, total: int) -> list[str]:
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.sampling.replay import ReplayProvider

    bomb = tmp / "samples.jsonl.gz"
    gzip_bomb(bomb, line, total)
    try:
        ReplayProvider(bomb).entry_points()
    except ConfigurationError:
        return []
    except Exception as exc:  # what escapes is the finding
        return [f"{type(exc).__name__} escaped the replay reader"]
    return ["read without complaint"]


def _seeder(tmp: Path) -> list[str]:
    from coherence.engine.inputs.seeds.workspace import workspace_seeds
    from coherence.engine.markers import find_targets

    module = (
        '# coherence\ndef clamp(x: int, lo: int, hi: int) -> int:\n    """Clamp."""\n    return max(lo, min(x, hi))\n'
    )
    (target,) = find_targets(module, "clampmod.py")
    problems = []
    for coding in ("zlib", "hex", "utf-16"):
        ws = tmp / coding
        (ws / "tests").mkdir(parents=True)
        (ws / "tests" / "test_clamp.py").write_bytes(f"# -*- coding: {coding} -*-\nclamp(5, 0, 3)\n".encode())
        try:
            workspace_seeds(target.spec, ws, module)
        except Exception as exc:  # what escapes is the finding
            problems.append(f"coding {coding}: {type(exc).__name__} escaped the seeder")
    return problems


def _many_functions(tmp: Path) -> list[str]:
    """Keys of 500 and 8,000 marked functions: linear work grows about 16-fold and quadratic
    256-fold; the language server computes them on every parse of the document."""
    from coherence.engine.config import CheckConfig
    from coherence.engine.markers import find_targets
    from coherence.engine.results_key import results_keys

    seconds = []
    for count in (500, 8000):
        source = "".join(
            f'# coherence\ndef f{i}(x: int) -> int:\n    """Return x plus {i}."""\n    return x + {i}\n\n\n'
            for i in range(count)
        )
        targets = find_targets(source, "many.py")
        # the least of three, and counts 16 apart: a 2x gap (1,500 against 3,000) read 3.3x when
        # the machine was loaded, while 16x apart leaves a factor of 4 of noise either way
        runs = []
        for _ in range(3):
            started = time.process_time()
            results_keys(targets, CheckConfig())
            runs.append(time.process_time() - started)
        seconds.append(min(runs))
    ratio = seconds[1] / max(seconds[0], 1e-6)
    return [f"keying 8,000 functions took {ratio:.0f}x as long as 500 (quadratic)"] if ratio > 64 else []


ATTACKS: dict[str, Callable[[Path], list[str]]] = {
    "report written through a planted link": _report_link,
    "baseline written through a planted link": _baseline_link,
    "untrusted samples, mode, include, cost cap": _spending,
    "untrusted time budgets": _budgets,
    "baseline nested 100,000 deep": lambda tmp: _baseline(tmp, "[" * 100_000 + "]" * 100_000),
    "baseline over 8 MB": lambda tmp: _baseline(tmp, " " * (9 << 20)),
    "replay gzip bomb, one endless line": lambda tmp: _replay_bomb(tmp, b" ", 16 << 20),
    "replay gzip bomb, many lines": lambda tmp: _replay_bomb(tmp, b" " * 1023 + b"\n", 160 << 20),
    "test files the seeder cannot decode": _seeder,
    "8,000 marked functions keyed": _many_functions,
}


def run_all() -> dict[str, list[str]]:
    out = {}
    for name, attack in ATTACKS.items():
        with tempfile.TemporaryDirectory() as tmp:
            try:
                out[name] = attack(Path(tmp))
            except Exception as exc:  # a crash of the reader is an escape too
                out[name] = [f"{type(exc).__name__}: {str(exc)[:200]}"]
    return out
