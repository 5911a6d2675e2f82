"""The Ray backend (``coherence eval --ray auto|ADDRESS|local``; ``pip install 'coherence[cluster]'``).

Each task is a Ray task that runs ``evaluate_task`` (the engine's ``Checker`` with its sandboxed
worker) on whichever node Ray gives it, under that node's interpreter and sandbox; the record names
the node (``host``) and the sandbox that ran it (``sandbox``).  The samples and the benchmark task
of each job travel through Ray's object store (``ray.put``), so the nodes need no shared disk and no
copy of the corpus.  Records come back to the driver, which alone writes ``tasks.jsonl``: an
interrupted run (or a cluster that went down) resumes from there like a local one.

A task reserves ``task_cpus`` CPUs and its sandbox runs that many programs at once: with 1 (the
default) it runs exactly as a local ``--jobs J`` task does on a machine of J cores, so both give the
same records.
"""

from __future__ import annotations

import os
import platform
import socket
from typing import Any

from coherence.engine.errors import CheckCancelled, CoherenceError
from coherence.eval.backends import Finished, Job
from coherence.eval.corpus import BenchmarkTask, SampleTask
from coherence.eval.task import EvalOptions

# A private cluster for ``--ray local``: its object store holds a few hundred small task objects.
_LOCAL_OBJECT_STORE = 200 * 1024 * 1024


def evaluate_on_node(
    st: SampleTask, bt: BenchmarkTask, opts: EvalOptions, paper: dict | None, workers: int, engine: str
) -> dict:
    """The body of a Ray task (on any node).  A node whose coherence has another engine than the
    driver's would mix engines in one run: its tasks fail, saying so.  litellm is never imported by
    a task (the samples are given), but the settings that keep it offline hold for any import."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from coherence.eval.runner import engine_fingerprint
    from coherence.eval.task import evaluate_task

    here = _node_engine(engine_fingerprint)
    if here != engine:
        raise CoherenceError(
            f"node {platform.node()} has coherence engine {here}, the driver {engine}: install the same coherence on every node"
        )
    return evaluate_task(st, bt, opts, paper=paper, workers=workers)


_ENGINE: list[str] = []  # a Ray worker process runs many tasks: hash the engine's files once


def _node_engine(fingerprint) -> str:
    if not _ENGINE:
        _ENGINE.append(fingerprint())
    return _ENGINE[0]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise CoherenceError(
            f"--ray needs Ray ({exc.name or exc}); install it with: pip install 'coherence[cluster]'"
        ) from exc
    return ray


def _reachable(address: str) -> None:
    """Ray retries a head node that does not answer for minutes: a port nobody listens on is said
    at once instead.  ("auto" finds the local cluster's address itself, and fails fast.)"""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return
    with socket.create_connection((host or "127.0.0.1", int(port)), timeout=5):
        pass


class RayBackend:
    def __init__(self, address: str, task_cpus: int = 1):
        ray = self.ray = _import_ray()
        self.task_cpus = max(1, task_cpus)
        self.refs: dict[Any, SampleTask] = {}
        try:
            if address == "local":  # a private cluster of this machine, gone when the run ends
                ray.init(
                    address="local",  # a new cluster even when one runs here (ray.init() would join it)
                    include_dashboard=False,
                    log_to_driver=False,
                    object_store_memory=_LOCAL_OBJECT_STORE,
                    configure_logging=False,
                )
            else:  # "auto" (the cluster this machine is part of) or a head node's ADDRESS
                _reachable(address)
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (OSError, RuntimeError, ValueError) as exc:  # ConnectionError is an OSError
            raise CoherenceError(
                f"--ray {address}: no Ray cluster to join ({exc}). Start one with `ray start --head` "
                "(or `ray up CLUSTER.yaml`), or use --ray local for a private one on this machine"
            ) from exc
        self.remote = ray.remote(num_cpus=self.task_cpus, max_retries=2)(evaluate_on_node)
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < self.task_cpus:
            ray.shutdown()
            raise CoherenceError(f"--ray {address}: the cluster has {cpus} CPU(s), a task needs {self.task_cpus}")
        self.label = f"ray: {nodes} node(s), {cpus} CPUs"

    def start(self, jobs: list[Job], opts: EvalOptions) -> None:
        ray = self.ray
        from coherence.eval.runner import engine_fingerprint

        opts_ref, engine = ray.put(opts), engine_fingerprint()
        for st, bt, paper in jobs:
            ref = self.remote.remote(ray.put(st), ray.put(bt), opts_ref, paper, self.task_cpus, engine)
            self.refs[ref] = st

    def pending(self) -> int:
        return len(self.refs)

    def poll(self, timeout: float) -> list[Finished]:
        if not self.refs:
            return []
        ready, _ = self.ray.wait(list(self.refs), num_returns=len(self.refs), timeout=timeout)
        return [self._take(r) for r in ready]

    def _take(self, ref: Any) -> Finished:
        st = self.refs.pop(ref)
        exceptions = self.ray.exceptions
        try:
            return st, self.ray.get(ref)
        except exceptions.TaskCancelledError:
            return st, CheckCancelled("cancelled")
        except exceptions.RayTaskError as exc:  # the task raised: hand the runner its own error
            cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
            return st, cause
        except exceptions.RayError as exc:  # a node or worker lost past its retries
            return st, exc

    def stop(self) -> list[Finished]:
        """Cancel every task still queued or running; return those that finished meanwhile."""
        ray = self.ray
        if not self.refs:
            return []
        ready, rest = ray.wait(list(self.refs), num_returns=len(self.refs), timeout=0)
        for ref in rest:
            ray.cancel(ref)  # a KeyboardInterrupt in the task: its sandbox is torn down as on ^C
            self.refs.pop(ref)
        return [self._take(r) for r in ready]

    def close(self) -> None:
        self.ray.shutdown()
