"""Refuse a commit message whose subject is longer than 72 characters (the commit-msg hook).

    python scripts/check_commit_subject.py .git/COMMIT_EDITMSG

The subject is the first line that is not a comment (git strips ``#`` lines). A long subject is
cut in every log view and hides what the commit does: keep it short, in the imperative mood, and
put the detail in the body, after a blank line.
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 72


def subject(message: str) -> str:
    for line in message.splitlines():
        if not line.startswith("#") and line.strip():
            return line.rstrip()
    return ""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_commit_subject.py COMMIT_MSG_FILE", file=sys.stderr)
        return 2
    text = subject(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    if len(text) > LIMIT:
        print(
            f"commit subject is {len(text)} characters, at most {LIMIT}: {text[:LIMIT]}…\n"
            "Say what the commit does in the imperative ('Add …', 'Keep …'), and put the detail in the\n"
            "body, after a blank line.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
