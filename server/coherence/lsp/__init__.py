"""The coherence language server (pygls 2): ``coherence serve`` runs it over stdio.

Modules: ``server`` (the server, its one handler per LSP method fanning out to the features,
stdio), ``settings``, ``scheduler`` (jobs, cancellation, cache), ``state``, ``progress`` and
``features/`` (diagnostics, hover, code actions, code lens, commands, status).
"""
