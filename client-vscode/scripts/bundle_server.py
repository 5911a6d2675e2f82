"""Puts the coherence language server into the extension (``bundled/``), as Microsoft's
vscode-python-tools-extension-template and ruff-vscode do:

- ``bundled/libs/``: coherence itself and every pure-Python (``py3-none-any``) distribution it
  needs, resolved for the oldest supported Python (3.10) so its backports are there too;
- ``bundled/binary.json``: the distributions with compiled code (numpy, ...) that the selected
  interpreter's environment must provide for the bundled server to run there (``tool/probe.py``);
- ``bundled/wheels/``: the coherence wheel, installed into a private environment in the
  extension's global storage when that environment does not provide them.

Run from client-vscode/ (``npm run bundle-server``, part of ``npm run package``) with the Python
that builds the wheel: ``python3 scripts/bundle_server.py [--force]``.  It needs the package index
(pip) and takes a few minutes; it does nothing when pyproject.toml and server/ did not change.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENT = HERE.parent
REPO = CLIENT.parent
BUNDLED = CLIENT / "bundled"
OLDEST_PYTHON = "3.10"
# The probe's own dependency (requirement specifiers), always bundled.
PROBE_NEEDS = ["packaging"]


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args], check=True)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def source_digest() -> str:
    """What the bundle is made from: pyproject.toml and the package's files (not the egg-info that
    building the wheel rewrites)."""
    h = hashlib.sha256()
    for f in [REPO / "pyproject.toml", *sorted((REPO / "server" / "coherence").rglob("*"))]:
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(f.relative_to(REPO).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def main() -> int:
    stamp = BUNDLED / ".source.sha256"
    digest = source_digest()
    if "--force" not in sys.argv and (BUNDLED / "binary.json").is_file() and stamp.is_file() and stamp.read_text() == digest:
        print("bundled/: up to date with pyproject.toml and server/ (--force rebuilds)")
        return 0
    for sub in ("libs", "wheels"):
        shutil.rmtree(BUNDLED / sub, ignore_errors=True)
    (BUNDLED / "wheels").mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        pip("wheel", "--no-deps", "-q", "-w", tmp, str(REPO))
        (wheel,) = Path(tmp).glob("coherence-*.whl")
        shutil.copy2(wheel, BUNDLED / "wheels" / wheel.name)
        report = Path(tmp) / "report.json"
        # What installing the wheel would install on the oldest supported Python, as wheels only.
        pip("install", "-q", "--dry-run", "--ignore-installed", "--only-binary=:all:", "--python-version", OLDEST_PYTHON,
            "--target", str(Path(tmp) / "unused"), "--report", str(report), str(wheel), *PROBE_NEEDS)
        items = json.loads(report.read_text())["install"]
    pure: list[str] = []
    binary: dict[str, str] = {}
    for item in items:
        meta = item["metadata"]
        name, version = canonical(meta["name"]), meta["version"]
        if name == "coherence":
            continue
        filename = item["download_info"]["url"].rsplit("/", 1)[-1]
        if filename.endswith("-none-any.whl"):
            pure.append(f"{name}=={version}")
        else:
            binary[name] = version
    pip("install", "-q", "--no-deps", "--only-binary=:all:", "--python-version", OLDEST_PYTHON, "--target", str(BUNDLED / "libs"),
        str(BUNDLED / "wheels" / wheel.name), *pure)
    # Scripts (bin/) are of no use to the server; caches are rebuilt on the user's machine.
    shutil.rmtree(BUNDLED / "libs" / "bin", ignore_errors=True)
    for cache in (BUNDLED / "libs").rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    (BUNDLED / "binary.json").write_text(json.dumps({"wheel": wheel.name, "binary": dict(sorted(binary.items()))}, indent=2) + "\n")
    stamp.write_text(digest)
    size = sum(f.stat().st_size for f in (BUNDLED / "libs").rglob("*") if f.is_file())
    print(f"bundled/libs: coherence + {len(pure)} pure-Python distributions, {size / 1e6:.1f} MB; "
          f"from the environment: {', '.join(binary) or 'nothing'}; wheel: bundled/wheels/{wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
