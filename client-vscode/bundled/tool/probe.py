"""Can this interpreter run the bundled server?  Prints one line of JSON:
``{"ok": bool, "python": sys.executable, "version": [3, 12, 1], "missing": [...], "reason": str,
"native": str, "llm": bool}``.

``ok`` when it is Python 3.10 or later and every compiled distribution (``bundled/binary.json``)
that the bundled ones require is there at a version they accept: from the platform-specific .vsix's
wheels for this interpreter (``native``: where ``_native`` unpacked them), else from its
environment.  ``llm``: litellm (the ``llm`` extra, which the bundle leaves out) is importable too.
Otherwise the extension makes a private environment from the coherence wheel it ships.  Installs
nothing into the interpreter's environment.
"""

import json
import os
import sys

from _paths import BINARY_JSON, LIBS


def probe() -> dict:
    out = {"ok": False, "python": sys.executable, "version": list(sys.version_info[:3]), "missing": [], "reason": "", "native": "", "llm": False}
    if sys.version_info < (3, 10):
        out["reason"] = "coherence needs Python 3.10 or later"
        return out
    if not os.path.isdir(LIBS) or not os.path.isfile(BINARY_JSON):
        out["reason"] = f"the extension has no bundled server ({LIBS})"
        return out
    sys.path.insert(0, LIBS)
    from _native import site

    native = site()
    if native:
        sys.path.insert(1, native)
        out["native"] = native
    import importlib.util
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with open(BINARY_JSON, encoding="utf-8") as fh:
        binary = set(json.load(fh)["binary"])
    # The requirements of the bundled distributions, then of the compiled ones they lead to.
    wanted: dict[str, list] = {}
    todo = list(metadata.distributions(path=[LIBS]))
    seen: set[str] = set()
    while todo:
        for text in todo.pop().requires or []:
            req = Requirement(text)
            name = canonicalize_name(req.name)
            if name in binary and (req.marker is None or req.marker.evaluate({"extra": ""})):
                wanted.setdefault(name, []).append(req)
                if name not in seen:
                    seen.add(name)
                    try:
                        todo.append(metadata.distribution(name))
                    except metadata.PackageNotFoundError:
                        pass
    for name, reqs in sorted(wanted.items()):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            out["missing"].append(name)
            continue
        refused = [str(r.specifier) for r in reqs if not r.specifier.contains(version, prereleases=True)]
        if refused:
            out["missing"].append(f"{name} {version} (needs {', '.join(refused)})")
    out["ok"] = not out["missing"]
    out["llm"] = importlib.util.find_spec("litellm") is not None
    if out["missing"]:
        out["reason"] = "its environment lacks " + ", ".join(out["missing"])
    return out


if __name__ == "__main__":
    try:
        result = probe()
    except Exception as exc:  # noqa: BLE001 - a broken environment is an answer, not a crash
        result = {"ok": False, "python": sys.executable, "version": list(sys.version_info[:3]), "missing": [], "reason": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))
