"""What generated code sends back is data: credential-looking strings are redacted, and control
and bidi characters are escaped, before anything is shown to a person or leaves the machine.

An alternative can read whatever its sandbox lets it (a ``.env``, ``.git/config``) and return it,
and its return value, exception type name and repr reach the text, JSON and SARIF reports (SARIF
is uploaded to GitHub) and the editor.  ``redact`` replaces the usual key formats wherever they
occur; it cannot catch a secret the program encoded first, which only the sandbox prevents.
``escape`` writes every non-printable character (C0 and C1 controls, DEL, bidi overrides and
isolates, zero-width and other format characters, line and paragraph separators, lone
surrogates) as a Python escape, so a value can neither drive a terminal (OSC 52 clipboard
writes, cursor moves, line erase), nor start a line of its own (a forged summary), nor reorder
what a reader sees (Trojan Source).  ``display`` does both, for one line of text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MARK", "display", "escape", "redact", "redact_tree"]

MARK = "[redacted]"

# Where a token with a short prefix may start: not inside a word, but right after an escape in
# a repr ("\\nsk-...").  Longer prefixes need no such check (nor its cost: a lookbehind on every
# position).
_AT = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrtabfv0])|(?<=\\x[0-9a-fA-F]{2})|(?<=\\u[0-9a-fA-F]{4}))"
# Repetitions before a literal are bounded, so that no text makes a search quadratic.
# Each pattern's first group, if any, is kept (the name of what was hidden); the rest is replaced.
_PATTERNS = [
    # PEM private keys, up to their END line (or the end of the text, when a value was cut short)
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    _AT + r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic
    _AT + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",  # GitLab
    r"xox[abposre]-[A-Za-z0-9\-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"npm_[A-Za-z0-9]{36}",
    r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
    "(?i)" + _AT + r"(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*",
    "(?i)" + _AT + r"(basic\s+)[A-Za-z0-9+/]{12,}=*",
    # a password in a URL's userinfo: scheme://user:password@host
    "(?i)" + _AT + r"([a-z][a-z0-9+.\-]{0,30}://[^\s/:@'\"\\]{0,256}:)[^\s/@'\"\\]{1,256}(?=@)",
    # NAME = value where the name says secret (a .env line, an assignment, a config entry)
    # (matched from the word that says so: what comes before it stays as it is); the value ends
    # at a bracket, so a sentence's "(e.g. OPENAI_API_KEY=none)." keeps its bracket and stop
    r"(?i)((?:api[_\-]?key|secret|token|passw(?:or)?d|credentials?|private[_\-]?key|access[_\-]?key)"
    r"[A-Z0-9_\-]{0,40}['\"]?\s{0,8}[:=]\s{0,8}['\"]?)[^\s'\"\\,;(){}]{6,}",
]
# ("(?i)" applies to its own pattern only)
_SECRET = re.compile("|".join(f"(?i:{p[4:]})" if p.startswith("(?i)") else f"(?:{p})" for p in _PATTERNS))


def _mark(m: re.Match[str]) -> str:
    kept = next((g for g in m.groups() if g), "")
    return kept + MARK


# Every pattern above contains one of these (lower case): a text with none of them skips the
# patterns, whose lookbehinds are slow on every character (docs/results.md#call-costs).
_ANCHORS = (
    "sk-",
    "sk_",
    "rk_",
    "pk_",
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "aiza",
    "hf_",
    "npm_",
    "eyj",
    "bearer",
    "basic",
    "://",
    "private",
    "api",
    "secret",
    "token",
    "passw",
    "credential",
    "access",
)


def redact(text: str) -> str:
    """``text`` with every credential-looking substring replaced by ``[redacted]``."""
    if not text:
        return text
    low = text.lower()
    if not any(a in low for a in _ANCHORS):
        return text
    return _SECRET.sub(_mark, text)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\x{code:02x}")
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: str, keep: str = "") -> str:
    """``text`` with every character Python does not call printable written as an escape
    (``\\x1b``, ``\\u202e``), but for those in ``keep`` (e.g. ``"\\n\\t"`` for a block of code).
    A plain space stays; so does a backslash (the text is shown, never parsed back)."""
    if text.isprintable() or (keep and text.translate(_dropping(keep)).isprintable()):
        return text
    return "".join(ch if ch.isprintable() or ch in keep else _escape_char(ch) for ch in text)


@functools.lru_cache(maxsize=8)
def _dropping(chars: str) -> dict[int, None]:
    return dict.fromkeys(map(ord, chars))


def display(text: Any) -> str:
    """One line of a report, safe to show: redacted, then escaped (newlines included)."""
    return escape(redact(str(text)))


def redact_tree(obj: Any, clean: Callable[[str], str] = redact) -> Any:
    """A copy of a JSON-like value with ``clean`` applied to every string in it, keys included."""
    if isinstance(obj, str):
        return clean(obj)
    if isinstance(obj, dict):
        return {redact_tree(k, clean): redact_tree(v, clean) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_tree(v, clean) for v in obj]
    return obj
