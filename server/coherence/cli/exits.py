"""The exit statuses of ``coherence``, and the help text that explains them: the run exits with
the highest that applies."""

from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INCOHERENT = EXIT_FINDINGS
EXIT_STATUS_HELP = """\
exit status (the highest that applies):
  0  no verdict as severe as --fail-on (default: warning), and every marked function was
     checked (or skipped, with the reason)
  1  findings: a function's verdict is at least as severe as --fail-on, or a file or function
     could not be checked (a syntax error, an unreadable file, an LLM or replay failure for
     it): CI must not pass code that was not checked, and the other results are still reported
  2  usage or configuration error (a bad option or setting, no model, no API key or a rejected
     one, an unknown model, a malformed replay file): fix it and run again
  3  internal error in coherence: a bug, reported with its message (-v shows the traceback)
  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM: the report holds the functions finished
     before it, and says it was interrupted"""
