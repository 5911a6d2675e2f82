"""What a function's docstring (or a decorator, or the config) and its examples state about its
arguments: the preconditions they satisfy, the signs of their numbers, the worked examples, what
each parameter's values show (``evidence``), the domain those facts make, and which calls are
degenerate.  Input generation and judging both read these facts; they depend on nothing of
either (tests/engine/test_stated_package.py): the parameters' types are handed in.
"""
