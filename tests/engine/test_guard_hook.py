"""The audit hook alone (``coherence_worker/guard.py``), as a child runs under it where no kernel
layer backs it (macOS, a kernel without Landlock): paths relative to a directory descriptor,
hard links, and standard-library C modules that write files without an "open" event.

Each attack here got through before:
- ``os.open(".env", dir_fd=<workspace>)`` was judged as a path in the child's own directory
  (the "open" audit event does not carry ``dir_fd``);
- a rename's destination was judged against the source's ``dir_fd``;
- a hard link to a hidden file, in the child's directory, read as that file;
- sqlite3 wrote a database anywhere, and readline and the dbm backends in C (where the
  interpreter has them), once imported, can write their files anywhere.

SQL's ATTACH still names any file (docs/sandbox.md says so).  The hook is installed for good, so it
runs in a process of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKER_DIR = Path(__file__).resolve().parents[2] / "server" / "coherence" / "engine" / "execution"

SCRIPT = r"""
import importlib.util, json, os, sys
from coherence_worker import guard
have_ndbm = importlib.util.find_spec("_dbm") is not None
ws, root = sys.argv[1], sys.argv[2]
state = {"mode": guard.LOAD, "root": root}
guard.arm(state, {"hidden": [os.path.join(ws, ".env")], "private": [], "allow": []})
state["mode"] = guard.CHILD
os.chdir(root)
import dbm, sqlite3  # (as a program would: after the hook; dbm imports its C backends on import)
from pathlib import Path
fd = None  # a descriptor of the workspace folder, opened after the ordinary calls ran
with open(os.path.join(root, "mine.txt"), "w") as f:
    f.write("mine")
attacks = {
    "os.open reads .env by dir_fd": lambda: os.read(os.open(".env", os.O_RDONLY, dir_fd=fd), 100),
    "os.open writes into the workspace by dir_fd":
        lambda: os.open("planted.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd),
    "open() with an opener that uses dir_fd":
        lambda: open("planted2.txt", "w", opener=lambda p, fl: os.open(p, fl, 0o644, dir_fd=fd)),
    "rename into the workspace by dst_dir_fd":
        lambda: os.rename(os.path.join(root, "mine.txt"), "moved.txt", dst_dir_fd=fd),
    "hard link to .env": lambda: os.link(os.path.join(ws, ".env"), os.path.join(root, "l1")),
    "hard link to .env by src_dir_fd": lambda: os.link(".env", os.path.join(root, "l2"), src_dir_fd=fd),
    "import readline (writes its history file without an open event)": lambda: __import__("readline"),
    "a dbm database in the workspace": lambda: dbm.open(os.path.join(ws, "planted"), "c"),
}
if sys.version_info >= (3, 10):  # the "sqlite3.connect" audit event
    attacks["sqlite3 database in the workspace"] = lambda: sqlite3.connect(os.path.join(ws, "p1.db")).execute(
        "create table t(x)"
    )
    attacks["sqlite3 database by file: URI"] = lambda: sqlite3.connect("file:" + os.path.join(ws, "p2.db") + "?mode=rwc", uri=True)
if have_ndbm:  # the C backend, where this interpreter has it
    attacks["a dbm.ndbm database in the workspace"] = lambda: __import__("dbm.ndbm").ndbm.open(os.path.join(ws, "p3"), "c")
allowed = {
    "open() of a file in its own directory": lambda: open("own.txt", "w").write("ok"),
    "os.open of its own file by absolute path":
        lambda: os.open(os.path.join(root, "own2.txt"), os.O_WRONLY | os.O_CREAT, 0o644),
    "hard link of its own file": lambda: os.link(os.path.join(root, "mine.txt"), os.path.join(root, "l3")),
    "reading a workspace file": lambda: open(os.path.join(ws, "data.txt")).read(),
    "Path.touch of a relative path (os.open, no directory descriptor open)": lambda: Path("touched").touch(),
    "sqlite3 in memory": lambda: sqlite3.connect(":memory:").execute("create table t(x)"),
    "sqlite3 database in its own directory": lambda: sqlite3.connect("own.db").execute("create table t(x)"),
}


def outcome(call):
    try:
        call()
        return "allowed"
    except (PermissionError, ImportError) as e:
        return "denied" if "coherence sandbox" in str(e) else "os: " + str(e)
    except OSError as e:
        return "os: " + str(e)


got = {"allowed": {name: outcome(call) for name, call in allowed.items()}}
fd = os.open(ws, os.O_RDONLY)
got["attacks"] = {name: outcome(call) for name, call in attacks.items()}
print(json.dumps(got))
"""


# the interpreter running the tests, and Debian's, which has the ndbm backend in C
INTERPRETERS = [sys.executable] + [p for p in ("/usr/bin/python3",) if Path(p).exists()]


@pytest.mark.parametrize("python", INTERPRETERS)
def test_paths_relative_to_a_directory_descriptor_and_hard_links(tmp_path, python):
    ws = tmp_path / "ws"
    root = tmp_path / "root"
    ws.mkdir()
    root.mkdir()
    (ws / ".env").write_text("OPENAI_API_KEY=sk-hook-0123456789\n")
    (ws / "data.txt").write_text("data\n")
    proc = subprocess.run(
        [python, "-c", SCRIPT, str(ws), str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(WORKER_DIR), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["attacks"] == dict.fromkeys(got["attacks"], "denied") and len(got["attacks"]) >= 8
    assert got["allowed"] == dict.fromkeys(got["allowed"], "allowed") and len(got["allowed"]) == 7
    assert sorted(p.name for p in ws.iterdir()) == [".env", "data.txt"]  # nothing landed there
    assert not any(b"sk-hook" in p.read_bytes() for p in root.iterdir() if p.is_file())
