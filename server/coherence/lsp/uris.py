"""URIs and file paths."""

from __future__ import annotations

from pygls.uris import from_fs_path, to_fs_path, uri_scheme


def uri_to_path(uri: str) -> str | None:
    """The file system path of a ``file:`` URI; None for other schemes (untitled:, ...)."""
    try:
        if uri_scheme(uri) != "file":
            return None
        return to_fs_path(uri)
    except Exception:  # noqa: BLE001 - a malformed URI is just not a file
        return None


def path_to_uri(path: str) -> str:
    return from_fs_path(path) or path
