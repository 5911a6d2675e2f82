"""The leader's measure of a job's directory (coherence_worker/disk.py), on real files and real
processes: what it counts, whom it blames, and that its walk stays bounded."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from coherence.engine.execution.coherence_worker import disk

MIB = 1 << 20


def write(path, mib: int) -> None:
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(MIB))
        f.flush()
        os.fsync(f.fileno())


@pytest.fixture
def job(tmp_path):
    """A job's directory with two children's directories in it; pids of live processes that
    hold nothing (this test's own: its open files are elsewhere)."""
    a, b = tmp_path / "p0-0", tmp_path / "p1-0"
    a.mkdir()
    b.mkdir()
    return tmp_path, [(str(a), os.getpid()), (str(b), os.getpid())]


def test_within_the_budget_nobody_is_killed_past_it_the_biggest_holder_is(job):
    root, holders = job
    budget = disk.Budget(str(root), 8 * MIB, 100)
    write(os.path.join(holders[0][0], "small"), 2)
    write(os.path.join(holders[1][0], "small"), 2)
    assert budget.over(holders) == []
    for k in range(4):
        write(os.path.join(holders[1][0], f"big-{k}"), 2)
    assert budget.over(holders) == [1]  # 12 MiB in all: only the child with 10 of them goes


def test_hard_links_count_once_and_files_outside_the_childrens_directories_count_too(job):
    root, holders = job
    budget = disk.Budget(str(root), 5 * MIB, 100)
    first = os.path.join(holders[0][0], "data")
    write(first, 4)
    for k in range(5):
        os.link(first, os.path.join(holders[0][0], f"link-{k}"))
    assert budget.over(holders) == []  # 4 MiB, not 24
    write(os.path.join(str(root), "stray"), 2)  # nobody's: over, and the biggest share goes
    assert budget.over(holders) == [0]


def test_a_file_unlinked_but_held_open_is_counted_to_its_holder(job):
    root, holders = job
    budget = disk.Budget(str(root), 3 * MIB, 100)
    hidden = os.path.join(holders[1][0], "hidden")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "f = open(sys.argv[1], 'wb'); f.write(os.urandom(4 << 20)); f.flush(); os.fsync(f.fileno())\n"
            "os.unlink(sys.argv[1]); print('ready', flush=True); time.sleep(60)",
            hidden,
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"ready\n"
        assert os.listdir(holders[1][0]) == []  # no directory names it any more
        holders[1] = (holders[1][0], holder.pid)
        assert budget.over(holders) == [1]
    finally:
        holder.kill()
        holder.wait()


def test_a_flood_of_empty_files_is_over_and_the_walk_stops_at_the_bound(job, monkeypatch):
    root, holders = job
    budget = disk.Budget(str(root), 64 * MIB, 200)
    for k in range(150):
        open(os.path.join(holders[0][0], f"f{k}"), "w").close()
    assert budget.over(holders) == []
    nested = holders[1][0]
    for _ in range(60):  # a deep tree: directories count as entries too
        nested = os.path.join(nested, "d")
        os.mkdir(nested)
    assert budget.over(holders) == [0]  # 211 entries; the 150 files are the most of them
    for k in range(20000):
        open(os.path.join(holders[0][0], f"g{k}"), "w").close()
    read = []
    real_scandir = os.scandir

    class Counting:  # the real scandir, counting the entries the walk takes from it
        def __init__(self, path):
            self.it = real_scandir(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.it.close()

        def __iter__(self):
            for entry in self.it:
                read.append(entry.name)
                yield entry

    monkeypatch.setattr(disk.os, "scandir", Counting)
    assert budget.over(holders) == [0]
    assert len(read) <= 201 + 2  # of 20,211: the bound, and the loops' one past it


def test_a_measure_is_due_once_per_period(job):
    root, _ = job
    budget = disk.Budget(str(root), MIB, 10)
    assert budget.due(100.0)
    assert not budget.due(100.0 + disk.SCAN_EVERY / 2)
    assert budget.due(100.0 + disk.SCAN_EVERY)
