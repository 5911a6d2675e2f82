"""``coherence serve``: the language server over stdio."""

from __future__ import annotations


def add_serve_parser(sub) -> None:
    serve = sub.add_parser("serve", help="run the language server over stdio")
    serve.add_argument("--verbose", "-v", action="store_true")


def run_serve(args) -> int:
    from coherence.lsp.server import serve

    return serve()
