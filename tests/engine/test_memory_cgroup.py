"""Where a job's memory cgroup can go (issue 28: "a cgroup v2 memory limit where one can be
created, else count memfd and shared memory"), and what the sandbox's name says about it.

The detection reads /proc/self/mounts, /proc/self/cgroup and the cgroup tree; here the tree is a
directory laid out as cgroupfs lays it out (cgroup.subtree_control, cgroup.procs), so every
branch is decided by real files.  A real cgroup v2 memory limit needs a cgroup2 host with the
memory controller delegated: on a cgroup v1 host (this one's CI) the last test checks that the
sandbox's name does not claim it and that the fallback (seccomp's denials) holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.coherence_worker import cgroup, seccomp

USER = "/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope"


def tree(root: Path, delegating: dict[str, str]) -> None:
    """A cgroup tree under ``root``: each path (relative) with its cgroup.subtree_control."""
    parts = USER.strip("/").split("/")
    for k in range(len(parts) + 1):
        d = root.joinpath(*parts[:k])
        d.mkdir(exist_ok=True)
        rel = "/" + "/".join(parts[:k]) if k else ""  # (the root is keyed "")
        (d / "cgroup.subtree_control").write_text(delegating.get(rel, "") + "\n")
        (d / "cgroup.procs").write_text("")


def mounts(root: Path, kind: str = "cgroup2") -> str:
    return f"proc /proc proc rw 0 0\n{kind} {root} {kind} rw,nosuid 0 0\n"


def test_a_cgroup_v1_or_hybrid_host_has_no_place(tmp_path):
    tree(tmp_path, {"/user.slice/user-1000.slice/user@1000.service/app.slice": "memory pids"})
    v1 = f"tmpfs {tmp_path} tmpfs rw 0 0\ncgroup {tmp_path}/memory cgroup rw,memory 0 0\n"
    place, why = cgroup.find(str(tmp_path), v1, "0::" + USER)
    assert place is None and "not cgroup v2" in why
    # a cgroup2 mount elsewhere (hybrid: /sys/fs/cgroup/unified) is not the one looked at
    hybrid = v1 + f"cgroup2 {tmp_path}/unified cgroup2 rw 0 0\n"
    assert cgroup.find(str(tmp_path), hybrid, "0::" + USER)[0] is None


def test_the_nearest_ancestor_that_delegates_memory_is_the_place(tmp_path):
    app = "/user.slice/user-1000.slice/user@1000.service/app.slice"
    tree(tmp_path, {"": "cpu memory", app: "memory pids"})
    place, why = cgroup.find(str(tmp_path), mounts(tmp_path), "12:pids:/x\n0::" + USER + "\n")
    assert place == str(tmp_path) + app and why == ""
    # no delegation on the way up but the root's: the root (root may write it)
    tree(tmp_path, {"": "cpu memory", app: "pids"})
    if os.geteuid() == 0:
        assert cgroup.find(str(tmp_path), mounts(tmp_path), "0::" + USER)[0] == str(tmp_path)


def test_no_memory_controller_delegated_is_said(tmp_path):
    tree(tmp_path, {"": "cpu io", "/user.slice": "pids"})
    place, why = cgroup.find(str(tmp_path), mounts(tmp_path), "0::" + USER)
    assert place is None and "delegates the memory controller" in why


def test_a_process_in_no_cgroup_v2_has_no_place(tmp_path):
    tree(tmp_path, {"": "memory"})
    place, why = cgroup.find(str(tmp_path), mounts(tmp_path), "4:memory:/\n1:name=systemd:/\n")
    assert place is None and "no cgroup v2" in why


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any cgroup directory")
def test_a_delegating_cgroup_this_user_cannot_write_is_passed_over(tmp_path):
    app = "/user.slice/user-1000.slice/user@1000.service/app.slice"
    tree(tmp_path, {app: "memory"})
    target = tmp_path / app.strip("/")
    target.chmod(0o555)
    try:
        place, why = cgroup.find(str(tmp_path), mounts(tmp_path), "0::" + USER)
        assert place is None and "to this user" in why
    finally:
        target.chmod(0o755)


def test_a_job_cgroup_that_cannot_be_limited_is_not_left_behind(tmp_path):
    """A directory where memory.max does not exist (not a cgroupfs): the reason comes back and
    the directory made for the job is removed again."""
    tree(tmp_path, {"": "memory"})
    (tmp_path / "cgroup.procs").write_text("")
    job, why = cgroup.JobCgroup.enter(str(tmp_path), 1 << 30, root=str(tmp_path))
    assert job is None and why.startswith("memory.max:")
    assert not [p for p in os.listdir(tmp_path) if p.startswith(cgroup.PREFIX)]


def test_sweep_removes_only_empty_job_cgroups(tmp_path):
    (tmp_path / (cgroup.PREFIX + "1")).mkdir()  # a leader killed before it removed its cgroup
    busy = tmp_path / (cgroup.PREFIX + "2")
    busy.mkdir()
    (busy / "still-populated").write_text("")  # rmdir fails as on a populated cgroup
    (tmp_path / "other-service").mkdir()
    assert cgroup.sweep(str(tmp_path)) == 1
    assert sorted(os.listdir(tmp_path)) == sorted([cgroup.PREFIX + "2", "other-service"])


def test_this_host_names_what_holds_the_memory():
    """The sandbox's name says ``memcg`` exactly when a cgroup can be made here; where it
    cannot, the seccomp filter denies memfd_create and SysV/POSIX shared memory (the hostile
    corpus's ctypes_memfd_hog and ctypes_sysv_shm_survivor attack them)."""
    place, why = cgroup.find()
    names = sb.planned_layers("guard")
    assert ("memcg" in names) == (place is not None)
    assert "memcg" not in sb.planned_layers("bwrap")
    if place is None:
        assert why
        if Path("/sys/fs/cgroup").exists() and "cgroup2" not in Path("/proc/self/mounts").read_text():
            assert "not cgroup v2" in why
        if seccomp.available():
            denied = seccomp.ARCHES[seccomp.machine_arch() or "x86_64"].deny
            assert {"memfd_create", "shmget", "mq_open"} <= set(denied)
