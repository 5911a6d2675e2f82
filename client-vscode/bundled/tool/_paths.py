"""Where the extension's bundled server lives: ``bundled/libs`` beside this folder."""

import os

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
BINARY_JSON = os.path.join(os.path.dirname(LIBS), "binary.json")
