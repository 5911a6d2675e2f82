"""Issue 28 section 2: which sandbox ran, the kernel layers behind its name, and "strict".

The attacks themselves are in ``tests/hostile/corpus_kernel.py`` (run by the hostile suite in
both modes); here: the name every report carries, the locale allow-list, the hidden workspace
paths, a worker that refuses a layer it cannot apply, and the command line's "strict".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from coherence import formats
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical
from coherence.engine.result import CheckResult
from tests.hostile.harness import bwrap_ok
from tests.support.sarif import valid_sarif

REPO = Path(__file__).resolve().parents[2]
LIMITS = ExecutionLimits(call_timeout=2.0, program_budget=5.0)


# The default run keeps the guard (it works on every machine, and bwrap adds its layers on top of
# the same guards); the bubblewrap runs are marked slow, and CI runs them.
@pytest.fixture(params=["guard", pytest.param("bwrap", marks=pytest.mark.slow)])
def mode(request) -> str:
    if request.param == "bwrap" and not bwrap_ok():
        pytest.skip("bubblewrap does not work here")
    return request.param


def hidden_below(root: Path) -> list[str]:
    """What ``hidden_paths`` hides of the workspace folder ``root``, relative to it, sorted."""
    return sorted(str(Path(p).relative_to(root)) for p in sb.hidden_paths(sb.probe_interpreter(), (str(root),)))


def test_only_named_locale_variables_reach_the_worker(monkeypatch):
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("LC_OPENAI_API_KEY", "sk-locale-looking")
    monkeypatch.setenv("LC_TERMINAL", "iTerm2")
    env = sb.base_env("/tmp/x")
    assert env["LC_ALL"] == "C.UTF-8"
    assert "LC_OPENAI_API_KEY" not in env and "LC_TERMINAL" not in env
    assert "sk-locale-looking" not in json.dumps(env)


def test_hidden_paths_are_the_workspace_dotfiles_but_not_the_interpreter(tmp_path):
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / ".git").mkdir()
    (tmp_path / "CVS").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "mod.py").write_text("")
    interp = sb.probe_interpreter()
    hidden = sb.hidden_paths(interp, (str(tmp_path),))
    assert sorted(Path(p).name for p in hidden) == [".env", ".git", "CVS"]
    # a workspace whose .venv holds the interpreter keeps it
    venv_ws = Path(interp.prefixes[0]).parent
    assert all(not interp.prefixes[0].startswith(p) for p in sb.hidden_paths(interp, (str(venv_ws),)))


def test_hidden_paths_reach_nested_dotfiles_and_follow_changes(tmp_path):
    """A monorepo keeps backend/.env: dotfiles at any depth are hidden, not only the workspace's
    top level (they were readable before).  Packages are not looked into, a symbolic link to a
    folder is not followed, and a dotfile written later, folders down, is found on the next ask."""
    (tmp_path / "backend" / "sub").mkdir(parents=True)
    (tmp_path / "backend" / ".env").write_text("KEY=1")
    (tmp_path / "backend" / "sub" / ".netrc").write_text("machine x password y")
    (tmp_path / "backend" / "app.py").write_text("")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / ".npmignore").write_text("")
    (tmp_path / "loop").symlink_to(tmp_path)
    # installed packages beside the user's files (pip --target, an extension's bundled libs)
    (tmp_path / "libs" / "dep-1.0.dist-info").mkdir(parents=True)
    (tmp_path / "libs" / "dep" / "data").mkdir(parents=True)
    (tmp_path / "libs" / "dep" / "data" / ".fixture").write_text("")
    interp = sb.probe_interpreter()

    def hidden() -> list[str]:
        return hidden_below(tmp_path)

    assert hidden() == ["backend/.env", "backend/sub/.netrc"]
    (tmp_path / "backend" / "sub" / "deeper").mkdir()
    (tmp_path / "backend" / "sub" / "deeper" / ".env.local").write_text("KEY=2")
    assert hidden() == ["backend/.env", "backend/sub/.netrc", "backend/sub/deeper/.env.local"]
    # the file's own folder and the workspace folder (what a check passes): one walk, no repeats
    both = sb.hidden_paths(interp, (str(tmp_path / "backend"), str(tmp_path)))
    assert len(both) == len(set(both)) == 3


def test_below_the_top_tool_settings_stay_visible_and_secrets_do_not(tmp_path):
    """At the top of a workspace folder every dotfile is hidden.  Deeper, the tool settings and
    caches a monorepo keeps in every package (.gitignore, .eslintrc.json, .pytest_cache) are
    not, so they cost no mount and no Landlock rules; .env, .git, .npmrc, .vscode (a launch
    configuration's environment) and any dotfile not known to be harmless are."""
    (tmp_path / ".gitignore").write_text("")
    pkg = tmp_path / "packages" / "a"
    pkg.mkdir(parents=True)
    for name in (".gitignore", ".eslintrc.json", ".env.production", ".npmrc", ".my-tokens"):
        (pkg / name).write_text("")
    for name in (".vscode", ".pytest_cache", ".git"):
        (pkg / name).mkdir()
    interp = sb.probe_interpreter()
    hidden = hidden_below(tmp_path)
    assert hidden == [
        ".gitignore",
        "packages/a/.env.production",
        "packages/a/.git",
        "packages/a/.my-tokens",
        "packages/a/.npmrc",
        "packages/a/.vscode",
    ]
    # the checked file's folder is a top too: all of its dotfiles
    hidden = sb.hidden_paths(interp, (str(pkg), str(tmp_path)))
    assert str(pkg / ".gitignore") in hidden and str(pkg / ".pytest_cache") in hidden


def test_files_that_hold_keys_by_name_are_hidden_at_any_depth(tmp_path):
    """A private key, a service account, Terraform state: no dot in the name, and readable by
    generated code before.  Their public halves and ordinary files stay visible."""
    deploy = tmp_path / "deploy" / "keys"
    deploy.mkdir(parents=True)
    for name in ("id_ed25519", "id_ed25519.pub", "server.PEM", "server.crt", "notes.md"):
        (deploy / name).write_text("")
    (tmp_path / "infra").mkdir()
    for name in ("terraform.tfstate", "prod.tfvars", "main.tf", "service-account-prod.json", "data.json"):
        (tmp_path / "infra" / name).write_text("")
    (tmp_path / "credentials.json").write_text("")
    hidden = hidden_below(tmp_path)
    assert hidden == [
        "credentials.json",
        "deploy/keys/id_ed25519",
        "deploy/keys/server.PEM",
        "infra/prod.tfvars",
        "infra/service-account-prod.json",
        "infra/terraform.tfstate",
    ]


def test_many_projects_in_one_workspace_are_hidden_whole_but_the_checked_one(tmp_path):
    """Past visibility.HIDDEN_MAX entries, folders that hold two or more are hidden in their
    place, deepest first, never one on the way to the checked file, the workspace or the
    interpreter.  The Landlock plan of what is left needs a handful of rules."""
    from coherence.engine.execution import visibility
    from coherence.engine.execution.coherence_worker import landlock

    ws = tmp_path / "projects"
    for i in range(2 * visibility.HIDDEN_MAX):
        p = ws / f"p{i}"
        (p / ".git").mkdir(parents=True)
        (p / "backend").mkdir()
        (p / ".env").write_text("")
        (p / "backend" / ".env").write_text("")
        (p / "README").write_text("")
    checked = ws / "p7" / "src"
    checked.mkdir()
    interp = sb.probe_interpreter()
    hidden = sb.hidden_paths(interp, (str(checked), str(ws)))
    others = {str(ws / f"p{i}") for i in range(2 * visibility.HIDDEN_MAX) if i != 7}
    assert set(hidden) == others | {str(ws / "p7" / rel) for rel in (".env", ".git", "backend/.env")}
    rules = landlock.plan([str(ws), str(checked)], hidden)
    granted = dict(rules)
    assert granted[str(checked)] is True and granted[str(ws)] is False  # listed only
    assert granted[str(ws / "p7" / "README")] is True and str(ws / "p7" / ".env") not in granted
    assert not any(p in granted for p in others) and rules.left_out == []
    assert len(rules) < 10


def test_a_landlock_plan_past_its_rules_leaves_folders_out_and_never_grants_a_hidden_path(tmp_path):
    """Each rule is a descriptor the job's leader holds and a system call in every child: past
    ``max_rules`` the folders not granted yet are left out (unreadable), never granted whole."""
    from coherence.engine.execution.coherence_worker import landlock

    hidden = []
    for i in range(6):
        p = tmp_path / f"p{i}"
        p.mkdir()
        for name in ("a.py", "b.py", "data"):
            (p / name).write_text("")
        (p / ".env").write_text("")
        hidden.append(str(p / ".env"))
    (tmp_path / "top.py").write_text("")
    rules = landlock.plan([str(tmp_path)], hidden, max_rules=12)
    granted = dict(rules)
    assert len(rules) == 12
    assert granted[str(tmp_path)] is False  # the root first, listed only
    assert rules.left_out  # the rest: neither granted whole nor listed
    assert not set(rules.left_out) & set(granted)
    for path, whole in rules:
        assert not any(path == h or path.startswith(h + "/") for h in hidden)
        if whole:
            assert not any(h.startswith(path + "/") for h in hidden)
    # with room, every entry but the hidden ones
    full = dict(landlock.plan([str(tmp_path)], hidden))
    assert len(full) == 1 + 1 + 6 * (1 + 3) and not set(hidden) & set(full)


def test_the_report_names_the_layers_that_ran(mode, tmp_path):
    """The name comes from the worker (what its children apply), and a program sees the layers:
    no_new_privs set, a seccomp filter installed (mode 2), asked of the kernel with prctl (in
    guard mode a child reads no /proc entry, not even its own)."""
    probe = (
        "def f(x):\n"
        "    import ctypes\n"
        "    prctl = ctypes.CDLL(None, use_errno=True).prctl\n"
        "    return (str(prctl(39, 0, 0, 0, 0)), str(prctl(21, 0, 0, 0, 0)))  # PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP\n"
    )
    module = ModuleContext(
        source="def f(x):\n    return x\n", filename=str(tmp_path / "m.py"), module_name="m", sys_path=(str(tmp_path),)
    )
    report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f"), Program("f", probe)], ["((1,), {})"])
    layers = sb.planned_layers(mode)
    assert report.sandbox == sb.sandbox_name(mode, layers)
    assert report.sandbox.startswith(mode)
    if mode == "guard" and sys.platform.startswith("linux"):
        assert "landlock" in layers  # this kernel has it (5.13+); the table in docs/sandbox.md says where not
    assert report.outcomes[1] == [Outcome.returned(canonical(("1", "2" if "seccomp" in layers else "0")))]


def test_the_leader_applies_the_layers_before_it_loads_the_module(mode, tmp_path):
    """Issue 50: the job's leader, which imports the module context, is confined too: the
    module's top-level code sees no_new_privs and a seccomp filter, and Landlock refuses it a
    file outside what the programs may read (a folder beside the workspace)."""
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "notes.txt").write_text("private")
    (tmp_path / "ws").mkdir()
    source = (
        "import ctypes\n"
        "_libc = ctypes.CDLL(None, use_errno=True)\n"
        "fields = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines() if ':' in l)\n"
        "AT_LOAD = (fields['NoNewPrivs'].strip(), fields['Seccomp'].strip(),\n"
        f"           _libc.open({str(beside / 'notes.txt').encode()!r}, 0) >= 0)\n"
        "def f(x):\n    return AT_LOAD\n"
    )
    module = ModuleContext(
        source=source, filename=str(tmp_path / "ws" / "m.py"), module_name="m", sys_path=(str(tmp_path / "ws"),)
    )
    report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f")], ["((1,), {})"])
    layers = sb.planned_layers(mode)
    assert report.module_error is None
    expected = ("1" if layers else "0", "2" if "seccomp" in layers else "0", "landlock" not in layers)
    assert report.outcomes[0] == [Outcome.returned(canonical(expected))]


class _Demanding(Executor):
    """An executor whose jobs ask for a layer no kernel has: the worker must refuse, not run."""

    def _job(self, *args, **kwargs):
        job = super()._job(*args, **kwargs)
        job["require"] = ["seccomp", "a-layer-no-kernel-has"]
        return job


def test_a_worker_refuses_a_layer_it_cannot_apply(mode, tmp_path):
    canary = tmp_path / "ran"
    program = f"def f(x):\n    open({str(canary)!r}, 'w').close()\n    return x\n"
    report = _Demanding(limits=LIMITS, sandbox=mode).run(ModuleContext(), [Program("f", program)], ["((1,), {})"])
    assert report.module_error is not None and "a-layer-no-kernel-has" in report.module_error
    assert report.outcomes[0][0].error == "LoadError"
    assert not canary.exists()


def test_strict_runs_on_a_kernel_that_holds_it():
    if not sb.kernel_layers() and not bwrap_ok():
        pytest.skip("this kernel offers neither")
    mode = sb.choose_mode("strict", sb.probe_interpreter())
    assert mode in ("bwrap", "guard")
    assert sb.required_layers("strict", mode) == (["seccomp"] if mode == "bwrap" else ["landlock", "seccomp"])


def test_strict_refuses_with_a_message_and_exit_2(tmp_path, monkeypatch, capsys):
    """A machine with no working bubblewrap and a kernel without Landlock (an old kernel, macOS):
    the two probes are told so (this kernel has both, and a test cannot take them away); the
    refusal itself, the message and the exit status are the real ones."""
    from coherence.cli import main

    monkeypatch.setattr(sb, "bwrap_works", lambda *a, **k: False)
    monkeypatch.setattr(sb, "kernel_layers", lambda: ["seccomp"])
    with pytest.raises(Exception) as info:
        sb.choose_mode("strict", sb.probe_interpreter())
    assert 'sandbox = "strict" refuses to run here' in str(info.value) and "no landlock" in str(info.value)
    (tmp_path / "m.py").write_text('# coherence\ndef f(x: int) -> int:\n    """Return x."""\n    return x\n')
    code = main(
        [
            "check",
            str(tmp_path / "m.py"),
            "--sandbox",
            "strict",
            "--replay",
            str(REPO / "examples" / "recorded_samples.jsonl"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert 'sandbox = "strict" refuses to run here' in err


def test_every_rendering_names_the_sandbox():
    r = CheckResult(
        name="f",
        path="m.py",
        line=1,
        status="coherent",
        trust=0.9,
        incoherence=0.0,
        dsde=0.0,
        sde=0.0,
        samples=3,
        inputs=10,
        sandbox="guard+landlock+seccomp",
    )
    assert "sandbox guard+landlock+seccomp" in formats.to_text([r])
    assert json.loads(formats.to_json([r]))["functions"][0]["sandbox"] == "guard+landlock+seccomp"
    sarif = valid_sarif(
        formats.to_sarif(
            [r, CheckResult(name="g", path="m.py", line=2, status="error", reason="x", sandbox="bwrap+seccomp")]
        )
    )
    assert sarif["runs"][0]["properties"]["sandbox"] == "bwrap+seccomp, guard+landlock+seccomp"
    assert sarif["runs"][0]["results"][0]["properties"]["sandbox"] == "bwrap+seccomp"


def test_a_weak_sandbox_is_only_guard_without_landlock_for_a_user():
    user = os.geteuid() != 0
    assert sb.is_weak("guard") is user
    assert sb.is_weak("guard+seccomp") is user
    assert not sb.is_weak("guard+landlock+seccomp")
    assert not sb.is_weak("bwrap") and not sb.is_weak("bwrap+seccomp")
    assert "weak" in sb.WEAK_NOTICE.format(name="guard") and 'sandbox = "strict"' in sb.WEAK_NOTICE
