"""The options of ``coherence check``: building them imports nothing heavy (``--help`` stays
fast)."""

from __future__ import annotations

import argparse

from coherence.cli.exits import EXIT_STATUS_HELP
from coherence.cli.option_types import number
from coherence.engine.baseline import DEFAULT_NAME
from coherence.engine.bounds import BOUNDS


def add_check_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="check marked functions in files or folders",
        description="Sample alternative implementations of each marked function, run them all on the same generated inputs in a sandbox, and report how far to trust yours.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders")
    _sampling_options(p)
    _run_options(p)
    _report_options(p)
    _budget_options(p)


def _sampling_options(p) -> None:
    p.add_argument(
        "--model",
        action="append",
        help="litellm model, e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-20250514, ollama/qwen2.5-coder; repeat it for a panel of models, each optionally 'MODEL share=N api_base=URL'",
    )
    p.add_argument(
        "--api-base", help="base URL of the model's API (Ollama, vLLM, llama.cpp server, any OpenAI-compatible server)"
    )
    p.add_argument(
        "--replay", metavar="FILE", help="recorded samples (JSONL or JSONL.gz in the corpus schema) instead of an LLM"
    )
    p.add_argument(
        "--samples",
        "-m",
        type=number("samples"),
        help="programs to compare, yours included (default 10)",
    )
    p.add_argument("--inputs", "-n", type=number("inputs"), help="inputs to run every program on (default 1000)")
    p.add_argument(
        "--temperature",
        type=number("temperature"),
        help=f"sampling temperature, {BOUNDS['temperature'].minimum:g} to {BOUNDS['temperature'].maximum:g} (default 0.6)",
    )


def _run_options(p) -> None:
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--python", metavar="INTERPRETER", help="interpreter that runs the code (default: this one)")
    p.add_argument(
        "--mode",
        choices=("marked", "docstring"),
        help="marked: '# coherence' or @...generated; docstring: every function with a docstring",
    )
    p.add_argument(
        "--timeout",
        type=number("call_timeout"),
        dest="call_timeout",
        help="seconds per call (default 0.5)",
    )
    p.add_argument("--seed", type=int, help="seed for input generation (default 0)")
    p.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "guard", "strict"),
        help="auto uses bubblewrap when it works; strict refuses to run without a kernel-enforced sandbox",
    )
    p.add_argument(
        "--llm-timeout",
        type=number("llm_timeout"),
        metavar="SECONDS",
        help="seconds the LLM may take for one function's samples, retries included; one that does not answer in time is not asked again in this run (default 120)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="FOLDER",
        help="the sample cache's folder: a new or empty one, which coherence marks with a CACHEDIR.TAG (default ~/.cache/coherence)",
    )


def _report_options(p) -> None:
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report here instead of stdout (its folder is created)"
    )
    p.add_argument(
        "--fail-on",
        choices=("warning", "information", "hint", "never"),
        default="warning",
        help="exit 1 when a function's verdict is this severe or more (default warning: evidence that yours is wrong)",
    )
    base = p.add_mutually_exclusive_group()
    base.add_argument(
        "--baseline",
        metavar="FILE",
        help=f"accept the disagreements recorded in this baseline (default: {DEFAULT_NAME} in the current folder, when it exists)",
    )
    base.add_argument(
        "--no-baseline", action="store_true", help=f"report every finding, even those {DEFAULT_NAME} accepts"
    )
    p.add_argument(
        "--write-baseline",
        nargs="?",
        const=DEFAULT_NAME,
        metavar="FILE",
        help=f"record every current finding as accepted, in FILE (default {DEFAULT_NAME}), and exit 0",
    )


def _budget_options(p) -> None:
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the functions, the samples each would request after the sample cache, and an estimate of their price from litellm's price map; nothing is sent, nothing runs",
    )
    p.add_argument(
        "--max-cost-usd",
        type=number("max_cost_usd"),
        metavar="USD",
        help="stop sampling once the run has spent this much (a function whose samples would go past it is skipped, and says so)",
    )
    p.add_argument(
        "--show-alternatives",
        action="store_true",
        help="print each cluster's representative alternative, its output on the counterexample, and a diff against yours (text report)",
    )
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument(
        "--trust-workspace",
        action="store_true",
        help="use all of the repository's own [tool.coherence], model, api_base and python included (CI on your own repository); see 'coherence trust'",
    )
