"""What a job's leader loads once, before it forks a child per program: the standard library
modules children may need, the module context, every program compiled, every input made
loadable.  The children then share all of it copy-on-write.
"""

from __future__ import annotations

import ast
import binascii
import marshal
import os
import sys
import types
from importlib.util import find_spec

from .protocol import describe_exc
from .stash import Stash
from .timer import Timeout

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .protocol import Job
    from .timer import Timer

# Imported in the leader before forking, so children share them.  CORE always; FULL as well when
# the children (dropped to "nobody") could not read the standard library to import it lazily.
PREIMPORT_CORE = (
    "math",
    "itertools",
    "collections",
    "functools",
    "re",
    "string",
    "heapq",
    "bisect",
    "operator",
    "copy",
    "random",
)
PREIMPORT = (
    # imported lazily by the standard library itself (what a program imports explicitly is found
    # by scanning its source and imported anyway)
    "_strptime",
    "encodings.idna",
    "encodings.latin_1",
    "encodings.ascii",
    "encodings.cp1252",
    "encodings.utf_16",
    "encodings.utf_32",
    "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
    "encodings.punycode",
    "unicodedata",
    # common enough in helpers and programs to be worth sharing
    "collections.abc",
    "fractions",
    "decimal",
    "datetime",
    "enum",
    "json",
    "numbers",
    "struct",
    "array",
    "hashlib",
    "base64",
    "binascii",
    "zlib",
    "textwrap",
    "weakref",
    "contextlib",
)


# How marshal (version 2, as the parent packs inputs) begins a pair whose first item is a tuple:
# the (args, kwargs) of a packed input
PACKED_PAIR = b"(\x02\x00\x00\x00("


class Program:
    """One program of the job, as the leader prepared it for its children."""

    __slots__ = ("entry", "source", "owner", "kind", "code", "error")

    def __init__(self, entry: str, source: str, owner: str | None, kind: str | None) -> None:
        self.entry = entry  # the function (or method) to call
        self.source = source  # its text ("" for the user's own function, in the module context)
        self.owner = owner  # the class of a method, or None
        self.kind = kind  # a method's kind: "instance", "static", "class"
        self.code: types.CodeType | None = None  # compiled source, or None: the module context's own function
        self.error: str | None = None  # why it cannot load, found before any fork


class Loader:
    """Imports and loads under the timer, with the limits of the job."""

    __slots__ = ("timer", "load_timeout", "prog_load_timeout", "tried", "workspace", "stash", "trusted")

    def __init__(
        self,
        timer: Timer,
        load_timeout: float,
        prog_load_timeout: float,
        workspace: Iterable[str] = (),
        site_dirs: Iterable[str] = (),
    ) -> None:
        self.timer = timer
        self.load_timeout = load_timeout
        self.prog_load_timeout = prog_load_timeout
        self.tried: set[str] = set()  # names preimport tried (failures included)
        self.workspace = [d for d in workspace if d]  # the module context's own path entries
        self.stash = Stash()
        # where the modules the leader may import for the programs live: the interpreter's
        # own prefixes (the standard library, its site-packages) and site directories
        roots = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site_dirs)
        self.trusted = tuple({os.path.join(os.path.realpath(r), "") for r in roots if r and os.path.isabs(r)})

    def preimport(self, names: Iterable[str]) -> None:
        """Import these modules now (what fails is left to the programs that import them), but
        never one from the workspace: what a program names is the program's to import, in its
        own process after the privilege drop.  An alternative's ``import deploy`` made this
        process (root, before any drop) run the workspace's deploy.py.  Such a module is only
        read here, for the children that may no longer read the workspace (see ``Stash``)."""
        tried = self.tried
        for name in names:
            if name in sys.modules or name in tried:
                continue
            # a name that is not a module ("typing.List") fails after a search of every path
            # entry: once per run, not once per program that imports it
            tried.add(name)
            if self.workspace and self.stash.keep(name, self.workspace):
                continue
            if not self.installed(name):
                continue
            try:
                self.timer.timed(self.load_timeout, __import__, name)
            except BaseException:
                pass

    def installed(self, name: str) -> bool:
        """Whether the top-level package of ``name`` is the interpreter's own (built in, or
        under its prefixes and site directories), found without running any of it.  Any other
        (a sibling project installed editable, a folder on PYTHONPATH) is the program's to
        import, in its own sandboxed process: its top-level code never runs in the leader for a
        program.  Such a module is stashed for the children that may not read it."""
        top = name.partition(".")[0]
        mod = sys.modules.get(top)
        try:
            spec = getattr(mod, "__spec__", None) if mod is not None else find_spec(top)
        except BaseException:
            return False
        if spec is None:
            return mod is not None  # (a module without a spec: __main__, or one made at run time)
        origin = spec.origin
        if spec.has_location is False and origin in ("built-in", "frozen"):
            return True
        places = list(spec.submodule_search_locations or ())
        if isinstance(origin, str) and os.path.isabs(origin):
            places.append(origin)
        if not places:
            return False
        trusted = self.trusted
        if all(os.path.realpath(p).startswith(trusted) for p in places):
            return True
        try:
            where = os.path.dirname(places[0] if spec.submodule_search_locations else origin or "")
            self.stash.keep(name, [where])
        except BaseException:
            pass
        return False

    def load_module(self, mod_spec: dict[str, Any]) -> tuple[types.ModuleType, str | None]:
        """The module context, as a module in ``sys.modules``: ``(module, None)``, or ``(module,
        why it failed)``."""
        name = mod_spec.get("module_name") or "coherence_target"
        filename = mod_spec.get("filename") or "<module>"
        source = mod_spec.get("source")
        module = types.ModuleType(name)
        module.__file__ = filename
        sys.modules[name] = module
        if source is None:
            exec("", module.__dict__)
            return module, None
        try:
            code = compile(source, filename, "exec", dont_inherit=True)
        except BaseException as e:
            return module, describe_exc(e)
        try:
            self.preimport(source_imports(source))
        except BaseException:
            pass
        try:
            self.timer.timed(self.load_timeout, exec, code, module.__dict__)
        except Timeout:
            return module, "Timeout: the module took longer than %gs to import" % self.load_timeout
        except BaseException as e:
            return module, describe_exc(e)
        return module, None

    def prepare_programs(self, specs: list[dict[str, Any]], module: types.ModuleType) -> list[Program]:
        """A ``Program`` per spec of the job: compiled, what it imports imported; its error
        when it cannot load."""
        programs = []
        for spec in specs:
            entry = spec.get("entry_point") or ""
            source = spec.get("source")
            info = Program(entry, source or "", spec.get("owner"), spec.get("kind"))
            if source is not None:
                try:
                    info.code = compile(source, "<%s>" % (spec.get("label") or "program"), "exec", dont_inherit=True)
                    self.preimport(source_imports(source))
                except BaseException as e:
                    info.error = describe_exc(e)
            elif info.owner:
                cls = module.__dict__.get(info.owner)
                if not isinstance(cls, type) or entry not in cls.__dict__:
                    info.error = "the module defines no method %s.%s" % (info.owner, entry)
            else:
                f = module.__dict__.get(entry)
                if f is None:
                    info.error = "the module defines no function named %r" % entry
            programs.append(info)
        return programs

    def bind_method(
        self, info: Program, ns: dict[str, Any], module: types.ModuleType
    ) -> tuple[Any, type | None, str | None]:
        """(function to call, class to build the receiver from or None, load error or None).

        An alternative takes the method's place in the user's class itself: each program runs in
        a process of its own, and the rest of the class (its other methods, the attributes
        ``__init__`` sets up) is the module context every program shares."""
        owner, entry, kind = info.owner, info.entry, info.kind or "instance"
        cls = module.__dict__.get(owner) if owner is not None else None
        if owner is None or not isinstance(cls, type):
            return None, None, "the module defines no class named %r" % owner
        if info.code is not None:
            theirs = ns.get(owner)
            raw = None
            extras = {}
            if isinstance(theirs, type) and theirs is not cls:
                # they wrote the whole class: take the method, and the helpers the user's class lacks
                raw = theirs.__dict__.get(entry)
                extras = {
                    k: v
                    for k, v in theirs.__dict__.items()
                    if k not in cls.__dict__ and not (k.startswith("__") and k.endswith("__"))
                }
                ns[owner] = cls
            if raw is None:
                raw = ns.get(entry)
                if raw is not None and raw is module.__dict__.get(entry):
                    raw = None
            if raw is None:
                return None, None, "the program defines no method named %r" % entry
            if kind == "static" and not isinstance(raw, staticmethod):
                raw = staticmethod(raw)
            elif kind == "class" and not isinstance(raw, classmethod):
                raw = classmethod(raw)
            for k, v in extras.items():
                setattr(cls, k, v)
            setattr(cls, entry, raw)
        # (the user's own method: prepare_programs made sure the class defines it)
        f = getattr(cls, entry)
        if not callable(f):
            return None, None, "%s.%s is not callable" % (owner, entry)
        if kind != "instance":
            return f, None, None
        try:
            self.timer.timed(self.prog_load_timeout, cls)
        except Timeout:
            return None, None, "Timeout: building %s() took longer than %gs" % (owner, self.prog_load_timeout)
        except BaseException as e:
            return None, None, "%s() cannot be built without arguments: %s" % (owner, describe_exc(e))
        return f, cls, None


def prepare_inputs(sources: list[str], packed: list[str | None] | None) -> list[tuple[str, Any] | None]:
    """Make every input loadable afresh per call (that is the per-call deep copy): plain data
    the parent packed with marshal loads from its bytes (kept as they are: each call loads
    them), ten times cheaper than compiling; the rest compiles once, as ``lambda:
    (<source>)``, in one compile when possible."""
    codes: list[tuple[str, object] | None] = [None] * len(sources)
    a2b = binascii.a2b_base64
    loads = marshal.loads
    trusted = False
    for i, b64 in enumerate(packed or ()):
        if b64 is None or i >= len(sources):
            continue
        try:
            data = a2b(b64)
            if not data.startswith(PACKED_PAIR):
                continue  # not an (args, kwargs) pair: its source compiles
            if not trusted:
                # An interpreter that cannot read the parent's marshal data compiles the
                # sources instead.  All of it comes from one marshal version: once one input
                # loads, so do the others, and loading each here would cost every input
                # (docs/results.md#call-costs).
                args, kwargs = loads(data)
                if type(args) is not tuple or type(kwargs) is not dict:
                    continue
                trusted = True
            codes[i] = ("marshal", data)
        except BaseException:
            pass
    # one lambda per two lines; multi-line sources (rare) are compiled one by one
    todo = [i for i in range(len(sources)) if codes[i] is None and "\n" not in sources[i] and "\r" not in sources[i]]
    chunk = 500
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        text = "".join("(lambda: (%s\n))\n" % sources[i] for i in part)
        lines = {}
        try:
            code = compile(text, "<input>", "exec", dont_inherit=True)
            for c in code.co_consts:
                if isinstance(c, types.CodeType):
                    lines[c.co_firstlineno] = c
            if sorted(lines) != list(range(1, 2 * len(part), 2)):
                lines = {}  # an odd source changed the layout: compile one by one
        except BaseException:
            lines = {}
        for k, i in enumerate(part):
            c = lines.get(2 * k + 1)
            if c is not None:
                codes[i] = ("fn", c)
    for i, src in enumerate(sources):
        if codes[i] is None:
            codes[i] = compile_input(src)
    return codes


def compile_input(src: str) -> tuple[str, types.CodeType] | None:
    try:
        outer = compile("lambda: (" + src + "\n)", "<input>", "eval", dont_inherit=True)
        for c in outer.co_consts:
            if isinstance(c, types.CodeType):
                return ("fn", c)
    except BaseException:
        pass
    try:
        return ("eval", compile(src, "<input>", "eval", dont_inherit=True))
    except BaseException:
        return None


def set_path(job: Job) -> None:
    """``sys.path``: the module context's entries first, then the interpreter's own path, and
    what editable installs add."""
    path = list(job.get("module", {}).get("sys_path") or [])
    path += [p for p in (job.get("path") or []) if p]
    seen = set()
    new = []
    for p in path + list(sys.path):
        if p not in seen:
            seen.add(p)
            new.append(p)
    sys.path[:] = new
    editable_pth(job.get("site_dirs") or [])


def editable_pth(site_dirs: Iterable[str]) -> None:
    """-S skipped site.py; run the import lines of editable-install .pth files ourselves
    (their plain path lines already are in ``path``)."""
    for d in site_dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".pth") or "editable" not in name.lower():
                continue
            try:
                with open(os.path.join(d, name)) as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            for line in lines:
                if line.startswith(("import ", "import\t")):
                    try:
                        exec(line, {"sys": sys, "os": os})
                    except BaseException:
                        pass


def children_can_import() -> bool:
    """Whether a child that dropped to "nobody" can still read the standard library (so
    lazy imports inside stdlib functions keep working without pre-importing them)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return True
    try:
        path = os.path.dirname(os.path.realpath(os.__file__))
        st = os.stat(os.path.join(path, "os.py"))
        if not st.st_mode & 0o004:
            return False
        while True:
            if not os.stat(path).st_mode & 0o001:
                return False
            parent = os.path.dirname(path)
            if parent == path:
                return True
            path = parent
    except OSError:
        return False


def module_imports(tree: ast.AST) -> list[str]:
    """Modules a source imports (anywhere), plus the submodules it reaches through attributes
    of imported names (``np.random.rand`` -> ``numpy.random``): packages load those lazily,
    which a child that dropped its privileges may no longer be able to do."""
    names = []
    alias = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.append(a.name)
                if a.asname:
                    alias[a.asname] = a.name
                else:
                    alias[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            for a in node.names:
                names.append(node.module + "." + a.name)
                alias[a.asname or a.name] = node.module + "." + a.name
    if alias:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts = []
                cur: ast.expr = node
                while isinstance(cur, ast.Attribute):
                    parts.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name) and cur.id in alias:
                    dotted = alias[cur.id]
                    for part in reversed(parts[1:]):  # the last attribute is rarely a module
                        dotted += "." + part
                        names.append(dotted)
    seen = set()
    out = []
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out[:300]


def source_imports(source: str) -> list[str]:
    """``module_imports`` of a source; most generated programs import nothing, and one that has
    no "import" in its text cannot, and skips a parse and two walks of its tree
    (docs/results.md#call-costs)."""
    if "import" not in source:
        return []
    return module_imports(ast.parse(source))


def modules_mark() -> tuple[int, str] | None:
    """What changes when a module is imported: cheap, unlike a walk over ``sys.modules``, which
    touches every module object and so copies their pages in a forked child."""
    try:
        return len(sys.modules), next(reversed(sys.modules.keys()))
    except BaseException:  # before 3.8 dict views are not reversible: always look
        return None


def draws(roots: tuple[str, ...], scanned: set[str | None]) -> bool:
    """Whether a module loaded from under ``roots`` (the workspace) may draw random numbers:
    its source mentions random, the same test as for the program's own text.  ``scanned`` holds
    the files already read (none of them does), so a second look reads only new modules.
    Conservative: a virtualenv inside the workspace counts as workspace."""
    for mod in list(sys.modules.values()):
        try:  # anything can sit in sys.modules, with any __getattr__
            f = getattr(mod, "__file__", None)
        except BaseException:
            continue
        if type(f) is not str or f in scanned or not f.startswith(roots):
            continue
        try:
            with open(f, "rb") as fh:
                text = fh.read()
        except BaseException:
            text = b"random"  # unreadable (a compiled extension is read as bytes): assume it draws
        if b"random" in text:
            return True
        scanned.add(f)
    return False
