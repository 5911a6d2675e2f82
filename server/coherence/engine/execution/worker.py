"""The launcher of coherence's sandbox worker: ``python -S -B worker.py [--serve]``.

The worker is the stdlib-only package ``coherence_worker`` beside this file (see its
``__init__``).  Python puts this directory first on ``sys.path``; the package's ``main`` takes
it off again before any user code runs, and modules the package imports later come through
the package itself.
"""

if __name__ == "__main__":
    from coherence_worker.__main__ import main

    main()
