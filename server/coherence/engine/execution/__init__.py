"""Sandboxed execution of programs on inputs.

``Executor.run(module, programs, inputs)`` returns an ``ExecutionReport`` whose ``outcomes`` is the
m x n outcome matrix.  Generated code only ever runs in killable worker processes started under the
user's interpreter (the stdlib-only package ``coherence_worker``, launched by ``worker.py``), never
in this process or its threads.
"""

from __future__ import annotations

from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program

__all__ = ["ExecutionLimits", "ModuleContext", "Program"]
