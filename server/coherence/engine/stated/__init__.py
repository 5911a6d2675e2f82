"""What a function's docstring (or a decorator, or the config) states about its arguments: the
preconditions they satisfy and the signs of their numbers.  Input generation and judging both read
these facts; they depend on nothing of either.
"""
