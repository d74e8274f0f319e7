"""Serving: the processes around a long-running index (a floor between ``app`` and
``interfaces``).

:mod:`~cairn.serving.child` is the one protocol every server child process speaks
(start, handshake, framed messages, a bounded stop); the children are the index worker
(:mod:`~cairn.serving.index_worker`), the watch child (:mod:`~cairn.serving.watch_child`,
running the watch loop of :mod:`~cairn.serving.watch`) and the other processes of
``serve --workers N`` (:mod:`~cairn.serving.workers`). The CLI's warm-model socket
(:mod:`~cairn.serving.warm`) and the per-user query daemon
(:mod:`~cairn.serving.daemon`) live here too. Nothing is imported here: the CLI's fast
path reads :mod:`~cairn.serving.warm` with the standard library only.
"""
