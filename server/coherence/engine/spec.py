"""What the LLM is allowed to see of a function (its Spec), and what it is not (the body).

A ``Spec`` is the signature, docstring and module context of a function.  It never carries the
body: samples are keyed by ``Spec.spec_hash`` so editing only the body costs no LLM call.  The
body lives in ``Target``, whose ``body_hash`` keys results instead.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

PARAM_KINDS = (
    "positional_only",
    "positional_or_keyword",
    "var_positional",
    "keyword_only",
    "var_keyword",
)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # one of PARAM_KINDS
    annotation: str | None = None  # annotation source text, e.g. "List[int]"
    default: str | None = None  # default value source text, e.g. "None" or "'x'"


@dataclass(frozen=True)
class ClassInfo:
    """A class defined in the user's module, as far as input generation needs it (AST only)."""

    name: str
    bases: tuple[str, ...] = ()
    is_dataclass: bool = False
    is_enum: bool = False
    # dataclass fields / __init__ params, in order
    fields: tuple[Param, ...] = ()
    # enum member names
    members: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spec:
    name: str
    signature: str  # "(a: int, b: str = 'x') -> bool"
    params: tuple[Param, ...]
    returns: str | None
    docstring: str | None
    # Module context shown to the LLM: imports, constants, sibling signatures and docstrings.
    context: str = ""
    # Classes of the module (for building inputs from annotations); not part of the hash
    # beyond what ``context`` already shows.
    classes: tuple[ClassInfo, ...] = field(default=(), compare=False)
    is_async: bool = False
    # A method: the class it belongs to, and how it is called.  ``params`` then leave out the
    # receiver (``self``/``cls``), which the executor supplies; ``signature`` keeps it, as written.
    owner: str | None = None
    method_kind: str | None = None  # "instance" | "static" | "class" when ``owner`` is set

    @property
    def receiver(self) -> bool:
        """An instance method: each call goes to a fresh ``Owner()``, which comes first among
        the arguments of its outcome."""
        return self.method_kind == "instance"

    @property
    def callee(self) -> str:
        """How a call is written: ``name``, ``Owner().name`` or ``Owner.name``."""
        if self.owner is None:
            return self.name
        if self.receiver:
            return f"{self.owner}().{self.name}"
        return f"{self.owner}.{self.name}"

    @functools.cached_property  # the language server keys every function on every parse
    def spec_hash(self) -> str:
        payload = json.dumps(
            {
                "name": self.name,
                "signature": self.signature,
                "docstring": self.docstring or "",
                "context": self.context,
                # only for methods, so that the hashes of functions (and their cached samples) stay
                **({"owner": self.owner, "method_kind": self.method_kind} if self.owner else {}),
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def header(self) -> str:
        """``def name(sig):`` plus the docstring: the stub the LLM is asked to complete (inside
        ``class Owner:`` for a method)."""
        prefix = "async def" if self.is_async else "def"
        lines = []
        if self.method_kind in ("static", "class"):
            lines.append(f"@{self.method_kind}method")
        lines.append(f"{prefix} {self.name}{self.signature}:")
        if self.docstring:
            doc = self.docstring.replace('"""', '\\"\\"\\"').splitlines()
            if len(doc) == 1:
                lines.append(f'    """{doc[0]}"""')
            else:
                body = "\n".join(("    " + ln) if ln.strip() else "" for ln in doc)
                lines.append(f'    """{body.lstrip()}\n    """')
        text = "\n".join(lines)
        if self.owner is None:
            return text
        return f"class {self.owner}:\n    ...\n\n" + "\n".join(
            ("    " + ln) if ln.strip() else "" for ln in text.splitlines()
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Target:
    """A function marked for checking: its Spec plus what only the executor may see."""

    spec: Spec
    path: str  # file path as given (may be "<untitled>")
    line: int  # 1-based line of the ``def`` keyword
    column: int  # 0-based column of the function name
    end_line: int
    name_line: int  # 1-based line holding the function name (== line unless decorators)
    module_source: str  # the whole module text the function lives in
    function_source: str  # def ... end, with decorators
    body_hash: str
    qualname: str = ""
    # When set, the function is reported as skipped with this reason instead of checked.
    skip_reason: str | None = None
    # Preconditions the user states outside the docstring (``@generated(assume="lo <= hi")``, a
    # ``# coherence: assume lo <= hi`` comment, the config's ``assume``): expressions over the
    # parameters.  Not part of the spec hash: they never reach the LLM.
    assume: tuple[str, ...] = ()
    # Disagreements the user accepted as intended (``# coherence: accept clamp(0, 1, 0)``).
    accept: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name
