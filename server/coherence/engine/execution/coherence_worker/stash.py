"""Workspace modules the programs import, stashed for the children: the leader reads them (never
runs them) while it can still read the workspace, and a child imports them from the stash after
its privilege drop, through a finder on ``sys.meta_path``.
"""

from __future__ import annotations

import os
import sys
import types
from importlib.machinery import ModuleSpec, PathFinder


class Stash:
    """Workspace modules the programs import, read but never run by the leader (``keep``), and
    imported from here by a child after its privilege drop (a finder on ``sys.meta_path``): a
    child of a root worker runs as a uid of its own, which may not read the workspace."""

    __slots__ = ("sources", "size")
    MAX_BYTES = 4 * 1024 * 1024

    def __init__(self) -> None:
        # module name -> (file, source bytes, package directory or None)
        self.sources: dict[str, tuple[str, bytes, list[str] | None]] = {}
        self.size = 0

    def keep(self, name: str, dirs: list[str]) -> bool:
        """Whether ``name`` (dotted) is a workspace module: its top-level module is found in
        ``dirs`` (a search that runs none of its code).  Its sources are stashed, as far as
        they are plain ``.py`` files."""
        parts = name.split(".")
        try:
            where = dirs
            for k in range(len(parts)):
                dotted = ".".join(parts[: k + 1])
                spec = PathFinder.find_spec(dotted, where)
                if spec is None:
                    return k > 0
                package = spec.submodule_search_locations
                if (
                    dotted not in self.sources
                    and type(spec.origin) is str
                    and spec.origin.endswith(".py")
                    and os.path.isfile(spec.origin)
                ):
                    with open(spec.origin, "rb") as fh:
                        source = fh.read(self.MAX_BYTES - self.size + 1)
                    if self.size + len(source) > self.MAX_BYTES:
                        return True
                    self.size += len(source)
                    self.sources[dotted] = (spec.origin, source, list(package) if package is not None else None)
                    if len(self.sources) == 1:
                        sys.meta_path.insert(0, self)
                if package is None:
                    return True
                where = list(package)
            return True
        except BaseException:
            return True  # (unreadable, odd): not ours to import either

    # -- the finder and loader of what was stashed (importlib's protocol) --------------------
    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        entry = self.sources.get(name)
        if entry is None:
            return None
        origin, _, package = entry
        # a loader by importlib's protocol (exec_module/create_module), not by inheritance
        spec = ModuleSpec(name, self, origin=origin, is_package=package is not None)  # type: ignore[arg-type]
        spec.has_location = True  # __file__ is the file's path (``loading.draws`` looks at it)
        if package is not None:
            spec.submodule_search_locations = list(package)
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        origin, source, _ = self.sources[module.__name__]
        exec(compile(source, origin, "exec", dont_inherit=True), module.__dict__)
