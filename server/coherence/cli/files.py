"""The file walk: the Python files a command's paths name, folders walked as ``check`` walks
them."""

from __future__ import annotations

from pathlib import Path


def python_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            from coherence.engine.selection import walk_python_files

            files.extend(walk_python_files(p))
        else:
            raise FileNotFoundError(raw)
    return files
