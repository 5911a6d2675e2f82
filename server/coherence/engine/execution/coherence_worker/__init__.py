"""coherence's sandbox worker: runs programs on inputs and reports canonical outcomes.

STDLIB ONLY, relative imports only.  This package runs under the *user's* interpreter (any
CPython >= 3.8), started as ``python -S -B worker.py`` by the launcher beside it, where its
top-level name is ``coherence_worker``; coherence itself imports only ``protocol`` (the wire
format) and ``canon`` (the canonical form) from it, as
``coherence.engine.execution.coherence_worker``.  Nothing here imports coherence, and this file
imports nothing: the launcher imports the package before it cleans ``sys.path``.

Process layout (one run):

    coherence  --job JSON on stdin-->  leader (one-shot worker, or a fork of a warm one)
               <--records on a fd--      |  imports the module context once,
                                         |  pre-imports what the programs import,
                                         |  readies every input once (marshal
                                         |  data, or one compile of the rest),
                                         |  then forks one child per program
                                         +--> child (program 0)  -- records --> leader
                                         +--> child (program 1)  ...
                                         +--> spare (program 2, loaded, waiting
                                              on a pipe for a free slot)

Glossary:

leader   the process that runs one job (``job.py``) and schedules its children (``leader.py``).
         In serve mode (``serve.py``) the warm worker forks a fresh leader per job and never
         runs user code itself.
child    a process forked by the leader to run one program over the inputs: ``child.py``.  It
         writes records in coherence's format to its own pipe; the leader forwards only its
         own, well-formed ones (``watch.py``).  It publishes in a shared slot the position of
         the call in progress, so that when it dies the leader records a ``Crash(...)`` or
         ``Timeout`` for that input and forks a fresh child for the inputs left.
task     one program to run; a task has one child at a time, and more than one in all when
         its children die.
spare    a child forked ahead and parked with its program loaded until a slot frees up; its
         time budget starts when it is released.
anchor   the task of the user's own function: inputs it leaves out (its budget ran out) are
         left out by every program, and a program that hangs where it hangs skips its other
         hangs.  What it tells the others is the told map the leader shares with every child.
cuts     the first positions in the input order the anchor left out, among the likely inputs
         and among the late ones: the head of the told map.
tail     a task's inputs past its first ``tail_head`` (the smallest): their calls share the
         task's ``tail_budget`` CPU seconds, and the inputs it has no time for are left out
         (``BudgetExceeded``), for every program by the timeout rule, and at once by the
         others where the anchor leaves them out.

Modules, bottom up (each imports only modules above it in this list; tests/engine/
test_worker_tower.py holds the layers): ``protocol`` the wire format, ``timer`` the per-call
timer, ``sealed`` the told map children only read, ``disk`` the job directory's budget where no
tmpfs bounds it, ``canon`` the canonical form and ``flat`` its fast paths, ``guard`` the guards,
``kernel`` the kernel's layers of a child (``seccomp`` its filter, ``landlock`` its file access),
``loading`` what the leader loads before it forks (``stash`` the workspace modules it reads for
the children), ``output`` the records to coherence, ``task`` a task, ``context`` the job's
context (what a child sees), ``handover`` the inputs of children forked ahead, ``anchor`` the
anchor task's told map, ``spawn`` forking a batch of children, ``child`` a child (``call_setup``
what it makes ready before its call loop), ``watch`` reading children and checking what they
claim, ``leader`` the children and the schedule loop, ``ahead`` jobs sent ahead of their inputs,
``job`` a job's phases, ``serve`` warm mode, ``__main__`` the process.
"""
