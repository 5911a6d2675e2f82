"""Write docs/reference.md, the configuration reference, from the code that defines the settings.

    python scripts/gen_reference.py           # rewrite docs/reference.md
    python scripts/gen_reference.py --check   # exit 1 when docs/reference.md is out of date

Every row comes from the source, so the page cannot drift from it: the fields of ``CheckConfig``
(their types, defaults and the comments beside them in ``engine/config.py``), ``USER_ONLY`` (which
settings a repository may set only once trusted), the environment variables of
``engine/resolve.py``, the ``coherence check`` options whose destination is a setting, and the
editor settings that ``client-vscode/package.json`` contributes.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from coherence.cli import build_parser  # noqa: E402
from coherence.engine import config  # noqa: E402
from coherence.engine.resolve import ENV  # noqa: E402

CONFIG_PY = ROOT / "server" / "coherence" / "engine" / "config.py"
PACKAGE_JSON = ROOT / "client-vscode" / "package.json"
PAGE = ROOT / "docs" / "reference.md"


def field_comments() -> dict[str, str]:
    """Each ``CheckConfig`` field's comment: the comment lines right above it and the one after it."""
    source = CONFIG_PY.read_text(encoding="utf-8")
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("class CheckConfig"))
    out: dict[str, str] = {}
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        if line.strip().startswith("def "):
            break
        name = line.strip().split(":", 1)[0]
        if line.startswith("    ") and not line.startswith("     ") and name.isidentifier() and ":" in line:
            above = []
            k = number - 1
            while k > start and lines[k - 1].strip().startswith("#"):
                above.insert(0, comments[k])
                k -= 1
            parts = [*above, comments.get(number, "")]
            out[name] = " ".join(p for p in parts if p)
    return out


def cli_options() -> dict[str, tuple[str, str]]:
    """Setting name -> the ``coherence check`` option that sets it, and its help."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    check = sub.choices["check"]
    return {
        a.dest: (a.option_strings[0], a.help or "")
        for a in check._actions
        if a.option_strings and a.option_strings[0] != "-h"
    }


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(value: object) -> str:
    if value is None:
        return "none"
    if value == ():
        return "`[]`"
    return f"`{json.dumps(value)}`" if isinstance(value, str) else f"`{value}`"


def settings_table() -> str:
    comments = field_comments()
    options = cli_options()
    rows = [
        "| setting | type | default | command line | what it does |",
        "|---|---|---|---|---|",
    ]
    for f in dataclasses.fields(config.CheckConfig):
        type_text = (
            str(f.type).replace("tuple[PanelMember, ...]", "list of models").replace("tuple[str, ...]", "list[str]")
        )
        option, help_text = options.get(f.name, ("", ""))
        if f.name == "models":
            option = "--model (repeated)"
        # the comment beside the field says why; the option's help stands in where there is none
        text = comments.get(f.name) or help_text
        rows.append(
            f"| `{f.name}` | `{_cell(type_text)}` | {_default(f.default)} | "
            f"{'`' + option + '`' if option else ''} | {_cell(text)} |"
        )
    return "\n".join(rows)


def trust_table() -> str:
    rows = ["| setting | environment variable | why a repository may not set it untrusted |", "|---|---|---|"]
    for name, why in config.USER_ONLY.items():
        rows.append(f"| `{name}` | `{ENV[name]}` | {_cell(why)} |")
    return "\n".join(rows)


def editor_table() -> str:
    package = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    conf = package["contributes"]["configuration"]
    sections = conf if isinstance(conf, list) else [conf]
    rows = ["| setting | type | default | what it does |", "|---|---|---|---|"]
    for section in sections:
        for name, spec in section["properties"].items():
            text = spec.get("markdownDescription") or spec.get("description", "")
            if "enum" in spec:
                text += " One of: " + ", ".join(f"`{v}`" for v in spec["enum"]) + "."
            # VS Code's setting links (`#coherence.runOn#`) mean nothing on this page
            text = text.replace("`#coherence.", "`coherence.").replace("#`", "`")
            rows.append(f"| `{name}` | {spec.get('type', '')} | `{json.dumps(spec.get('default'))}` | {_cell(text)} |")
    return "\n".join(rows)


def render() -> str:
    return f"""# Configuration reference

<!-- Generated by scripts/gen_reference.py from engine/config.py, engine/resolve.py, cli/ and
client-vscode/package.json. Do not edit by hand: run `python scripts/gen_reference.py`. -->

Where settings come from, and in which order they stack, is in
[Configuring a model](configuration.md#whose-settings-count).

## `[tool.coherence]` and your config file {{ #settings }}

The keys of `[tool.coherence]` in `pyproject.toml`, and of your own `config.toml` (at its top
level). Keys may be written `kebab-case` too. Relative paths are resolved against the file's
folder.

{settings_table()}

## Settings a repository sets only once trusted {{ #user-only }}

A repository's own `[tool.coherence]` may not set these until you run `coherence trust PATH`
(or pass `--trust-workspace`). Each also has an environment variable.

{trust_table()}

## Editor settings {{ #editor-settings }}

The settings the VS Code extension contributes (`client-vscode/package.json`). Other editors send
the same names as `[tool.coherence]` in `initializationOptions` (see [the editor](editor.md)).

{editor_table()}
"""


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="exit 1 when the page is out of date")
    ns = args.parse_args(argv)
    text = render()
    if ns.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/gen_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
