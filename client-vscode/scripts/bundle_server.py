"""Puts the coherence language server into the extension (``bundled/``), as Microsoft's
vscode-python-tools-extension-template and ruff-vscode do:

- ``bundled/libs/``: coherence itself and every pure-Python (``py3-none-any``) distribution it
  needs, resolved for the oldest supported Python (3.10) so its backports are there too;
- ``bundled/binary.json``: the distributions with compiled code (numpy, ...) that the selected
  interpreter's environment must provide for the bundled server to run there (``tool/probe.py``);
- ``bundled/native/cp3XX/`` (``--target``, a platform-specific .vsix as ruff-vscode ships): those
  compiled distributions as wheels, for each supported CPython on that platform, which the server
  unpacks and uses (``tool/_native.py``): it then starts with no install and no network;
- ``bundled/wheels/``: the coherence wheel, installed with its ``llm`` extra into a private
  environment in the extension's global storage when neither provides them, or for a model.

Run from client-vscode/ (``npm run bundle-server``, part of ``npm run package``; ``npm run
package:linux-x64`` for a platform) with the Python that builds the wheel:
``python3 scripts/bundle_server.py [--force] [--target linux-x64]``.  It needs the package index
(pip); it does nothing when pyproject.toml, server/ and the target did not change.
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
SUPPORTED_PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
# vsce's --target -> pip's --platform tags, each listed (pip does not add the older ones of a
# family by itself).  glibc 2.28 is what VS Code itself needs on Linux, macOS 11 on a Mac; the
# sandbox needs Linux or macOS, so no Windows.
_GLIBC = ("2_28", "2_27", "2_26", "2_24", "2_17")
PLATFORMS = {
    "linux-x64": [f"manylinux_{v}_x86_64" for v in _GLIBC] + ["manylinux2014_x86_64"],
    "linux-arm64": [f"manylinux_{v}_aarch64" for v in _GLIBC] + ["manylinux2014_aarch64"],
    "darwin-x64": [f"macosx_{v}_x86_64" for v in ("11_0", "10_15", "10_14", "10_13", "10_12", "10_9")],
    "darwin-arm64": ["macosx_11_0_arm64"],
}
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


def resolve(wheel: Path, tmp: Path, *platform: str, python: str = OLDEST_PYTHON) -> list[dict]:
    """What installing ``wheel`` would install on ``python`` (and ``platform``), as wheels only."""
    report = tmp / f"report-{python}.json"
    pip("install", "-q", "--dry-run", "--ignore-installed", "--only-binary=:all:", "--python-version", python,
        *platform, "--target", str(tmp / "unused"), "--report", str(report), str(wheel), *PROBE_NEEDS)
    return json.loads(report.read_text())["install"]


def is_pure(item: dict) -> bool:
    return item["download_info"]["url"].rsplit("/", 1)[-1].endswith("-none-any.whl")


def native_wheels(wheel: Path, tmp: Path, target: str) -> dict[str, list[str]]:
    """The compiled distributions' wheels for ``target``, one folder per supported CPython."""
    platform = [arg for tag in PLATFORMS[target] for arg in ("--platform", tag)] + ["--implementation", "cp"]
    out: dict[str, list[str]] = {}
    for python in SUPPORTED_PYTHONS:
        tag = "cp" + python.replace(".", "")
        binary = [
            f"{canonical(i['metadata']['name'])}=={i['metadata']['version']}"
            for i in resolve(wheel, tmp, *platform, python=python)
            if not is_pure(i) and canonical(i["metadata"]["name"]) != "coherence"
        ]
        folder = BUNDLED / "native" / tag
        pip("download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", python, *platform,
            "-d", str(folder), *binary)
        out[tag] = sorted(f.name for f in folder.glob("*.whl"))
    return out


def main() -> int:
    target = sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else ""
    if target and target not in PLATFORMS:
        print(f"bundle_server: --target is one of {', '.join(PLATFORMS)} (got {target!r})", file=sys.stderr)
        return 2
    stamp = BUNDLED / ".source.sha256"
    digest = source_digest() + f" {target or 'universal'}"
    if "--force" not in sys.argv and (BUNDLED / "binary.json").is_file() and stamp.is_file() and stamp.read_text() == digest:
        print(f"bundled/: up to date with pyproject.toml, server/ and the target ({target or 'universal'}; --force rebuilds)")
        return 0
    for sub in ("libs", "wheels", "native"):
        shutil.rmtree(BUNDLED / sub, ignore_errors=True)
    (BUNDLED / "wheels").mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        pip("wheel", "--no-deps", "-q", "-w", tmp, str(REPO))
        (wheel,) = Path(tmp).glob("coherence-*.whl")
        shutil.copy2(wheel, BUNDLED / "wheels" / wheel.name)
        # What installing the wheel would install on the oldest supported Python, as wheels only.
        items = resolve(wheel, Path(tmp))
        native = native_wheels(wheel, Path(tmp), target) if target else {}
    pure: list[str] = []
    binary: dict[str, str] = {}
    for item in items:
        meta = item["metadata"]
        name, version = canonical(meta["name"]), meta["version"]
        if name == "coherence":
            continue
        if is_pure(item):
            pure.append(f"{name}=={version}")
        else:
            binary[name] = version
    pip("install", "-q", "--no-deps", "--only-binary=:all:", "--python-version", OLDEST_PYTHON, "--target", str(BUNDLED / "libs"),
        str(BUNDLED / "wheels" / wheel.name), *pure)
    # Scripts (bin/) are of no use to the server; caches are rebuilt on the user's machine.
    shutil.rmtree(BUNDLED / "libs" / "bin", ignore_errors=True)
    for cache in (BUNDLED / "libs").rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    info = {"wheel": wheel.name, "binary": dict(sorted(binary.items())), "target": target, "native": native}
    (BUNDLED / "binary.json").write_text(json.dumps(info, indent=2) + "\n")
    stamp.write_text(digest)
    size = sum(f.stat().st_size for f in (BUNDLED / "libs").rglob("*") if f.is_file())
    native_size = sum(f.stat().st_size for f in (BUNDLED / "native").rglob("*.whl"))
    print(f"bundled/libs: coherence + {len(pure)} pure-Python distributions, {size / 1e6:.1f} MB; "
          f"compiled: {', '.join(binary) or 'nothing'}, "
          + (f"as {target} wheels in bundled/native/ ({native_size / 1e6:.1f} MB: {', '.join(native)})" if target else "from the environment")
          + f"; wheel: bundled/wheels/{wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
