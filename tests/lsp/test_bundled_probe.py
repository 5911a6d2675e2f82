"""The VS Code extension's probe (client-vscode/bundled/tool/probe.py): can an interpreter run the
bundled server with the compiled distributions of its own environment?  Run as the extension runs
it, a separate interpreter on the script, against a bundled/libs made here with real dist-info
metadata, so what decides is importlib.metadata and packaging on this environment."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "client-vscode" / "bundled" / "tool"


def make_bundle(tmp_path: Path, requires: list[str], binary: list[str]) -> Path:
    bundled = tmp_path / "bundled"
    shutil.copytree(TOOL, bundled / "tool", ignore=shutil.ignore_patterns("__pycache__"))
    info = bundled / "libs" / "fakeserver-1.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", "Name: fakeserver", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (bundled / "binary.json").write_text(
        json.dumps({"wheel": "fakeserver-1.0-py3-none-any.whl", "binary": dict.fromkeys(binary, "0")})
    )
    return bundled


def probe(bundled: Path) -> dict:
    out = subprocess.run(
        [sys.executable, str(bundled / "tool" / "probe.py")], capture_output=True, text=True, timeout=60, cwd=bundled
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_environment_with_the_compiled_distributions_passes(tmp_path):
    numpy = metadata.version("numpy")
    result = probe(make_bundle(tmp_path, [f"numpy>={numpy}", 'tomli>=1; python_version < "3"'], ["numpy", "tomli"]))
    assert result["ok"] is True and result["missing"] == []
    assert result["python"] == sys.executable and result["version"][:2] == list(sys.version_info[:2])


def test_a_missing_or_too_old_distribution_fails_and_is_named(tmp_path):
    result = probe(
        make_bundle(tmp_path, ["numpy>=999", "no-such-compiled-dist>=1"], ["numpy", "no-such-compiled-dist"])
    )
    assert result["ok"] is False
    assert result["missing"] == ["no-such-compiled-dist", f"numpy {metadata.version('numpy')} (needs >=999)"]
    assert "no-such-compiled-dist" in result["reason"]


def test_pure_requirements_are_not_asked_of_the_environment(tmp_path):
    # Only the distributions binary.json names must come from the environment.
    result = probe(make_bundle(tmp_path, ["no-such-pure-dist>=1"], ["numpy"]))
    assert result["ok"] is True


def test_without_a_bundle_it_says_so(tmp_path):
    bundled = make_bundle(tmp_path, [], [])
    shutil.rmtree(bundled / "libs")
    result = probe(bundled)
    assert result["ok"] is False and "no bundled server" in result["reason"]


def native_wheel(bundled: Path, name: str, version: str) -> Path:
    """A wheel of ``name`` for this interpreter in ``bundled/native/cp3XX``, as the platform
    .vsix ships numpy's: dist-info metadata and a module that says where it was imported from."""
    import zipfile

    folder = bundled / "native" / f"cp{sys.version_info[0]}{sys.version_info[1]}"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-cp3-cp3-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{name}/__init__.py", "WHERE = __file__\n")
    return wheel


def test_the_platform_vsix_wheels_are_unpacked_once_and_used(tmp_path, monkeypatch):
    bundled = make_bundle(tmp_path, ["fakenative>=2"], ["fakenative"])
    assert probe(bundled)["missing"] == ["fakenative"]  # no wheel: the environment must have it
    native_wheel(bundled, "fakenative", "2.1")
    monkeypatch.setenv("COHERENCE_NATIVE_DIR", str(tmp_path / "storage"))
    result = probe(bundled)
    assert result["ok"] is True and result["missing"] == []
    unpacked = Path(result["native"])
    assert unpacked.parent == tmp_path / "storage" and (unpacked / "fakenative" / "__init__.py").is_file()
    assert probe(bundled)["native"] == str(unpacked)  # once: the same folder, not unpacked again
    # serve.py puts it on sys.path after bundled/libs: the module comes from the unpacked wheel
    (bundled / "libs" / "coherence").mkdir()
    (bundled / "libs" / "coherence" / "cli.py").write_text(
        "def main(argv):\n    import fakenative\n    print(fakenative.WHERE)\n    return 0\n"
    )
    (bundled / "libs" / "coherence" / "__init__.py").write_text("")
    out = subprocess.run(
        [sys.executable, str(bundled / "tool" / "serve.py")], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == unpacked / "fakenative" / "__init__.py"


def test_a_wheel_for_another_python_is_not_used(tmp_path, monkeypatch):
    bundled = make_bundle(tmp_path, ["fakenative>=2"], ["fakenative"])
    other = bundled / "native" / "cp39"
    other.mkdir(parents=True)
    wheel = native_wheel(bundled, "fakenative", "2.1")
    wheel.rename(other / wheel.name)
    monkeypatch.setenv("COHERENCE_NATIVE_DIR", str(tmp_path / "storage"))
    result = probe(bundled)
    assert result["ok"] is False and result["native"] == "" and result["missing"] == ["fakenative"]
