"""Where the extension's bundled server lives: ``bundled/libs`` beside this folder, and the
compiled wheels of a platform-specific .vsix in ``bundled/native/cp3XX``."""

import os

BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = os.path.join(BUNDLED, "libs")
NATIVE = os.path.join(BUNDLED, "native")
BINARY_JSON = os.path.join(BUNDLED, "binary.json")
