"""``coherence prompt FILE::NAME``: the messages a check of NAME sends, printed, not sent."""

from __future__ import annotations

import sys
from pathlib import Path

from coherence.cli.exits import EXIT_OK, EXIT_USAGE


def add_prompt_parser(sub) -> None:
    prompt = sub.add_parser(
        "prompt",
        help="print the prompt a check sends for one function, without sending it",
        description="Print exactly the messages coherence sends to the LLM for one function (secret-looking values redacted, as sent). Nothing is sent.",
    )
    prompt.add_argument(
        "target", metavar="FILE::NAME", help="a Python file and a function in it (NAME or Class.method)"
    )
    prompt.add_argument("--json", action="store_true", help="the messages as JSON, as the API receives them")


def show_prompt(args) -> int:
    """``coherence prompt FILE::NAME``: the messages a check of NAME sends, printed, not sent."""
    from coherence.engine.sampling.prompt import build_messages

    file, sep, name = args.target.rpartition("::")
    if not sep or not file or not name:
        print(
            "coherence: expected FILE::NAME, e.g. src/util.py::parse_header or src/cart.py::Cart.add", file=sys.stderr
        )
        return EXIT_USAGE
    found = _targets(file, name)
    if found is None:
        return EXIT_USAGE
    if not found:
        print(
            f"coherence: no function {name} in {file} that coherence would check (marked, or with a docstring)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if found[0].skip_reason:
        print(f"coherence: {name} is skipped, so nothing is sent for it: {found[0].skip_reason}", file=sys.stderr)
        return EXIT_USAGE
    _print_messages(build_messages(found[0].spec), as_json=args.json)
    print("coherence: printed only, nothing was sent", file=sys.stderr)
    return EXIT_OK


def _targets(file: str, name: str) -> list | None:
    """The functions named ``name`` in ``file`` in either mode; None (said) when it cannot be read."""
    from coherence.engine.markers import find_targets, read_source

    try:
        source = read_source(Path(file))
        return [
            t
            for mode in ("marked", "docstring")
            for t in find_targets(source, file, mode=mode)
            if name in (t.qualname, t.name)
        ]
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        print(f"coherence: cannot read {file}: {exc}", file=sys.stderr)
        return None


def _print_messages(messages: list, *, as_json: bool) -> None:
    import json

    from coherence.engine.redact import escape

    if as_json:
        print(json.dumps(messages, indent=2))
    else:  # (escaped: a cloned file's bytes must not drive the terminal)
        print("\n\n".join(f"--- {m['role']} ---\n{escape(m['content'], keep=chr(10) + chr(9))}" for m in messages))
