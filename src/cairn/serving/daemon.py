"""The query daemon: a per-user process the CLI starts so the next searches find the
model warm.

A new ``cairn search`` process that needs the embedding model (semantic or hybrid)
spends most of a second loading it, and even a keyword search spends most of its CPU
importing. When no ``cairn serve`` / ``mcp`` / ``watch`` answers for the index and
settings (:mod:`cairn.serving.warm`), the CLI searches locally as before and then
starts this daemon (:func:`spawn`), detached, in a session of its own; the daemon opens
the index, loads the model and the vector matrix (started by a keyword search: on the
first search that needs them, ``--no-warm-up``), and answers the next searches over the
warm-model socket (same protocol, same adverts, kind ``daemon``). The first search
never waits for it.

* **One per index and settings**: the daemon holds an exclusive lock
  (``daemon-<settings hash>.lock`` in the per-user socket folder) for as long as it
  runs; a second one started meanwhile finds it taken and exits at once.
* **Quiet period**: it exits after ``[daemon] idle_minutes`` (default
  :data:`IDLE_MINUTES`) without a request, when its index file is deleted or replaced
  (another inode: the next search starts a new daemon on the new file), and on
  ``SIGTERM`` or ``{"op": "stop"}`` (``cairn daemon stop``). A re-index is seen by its
  searches as by a server's: through SQLite (WAL) and the store's change token. A
  daemon that cannot start (the index cannot be opened, no advert can be written
  beside it) leaves ``daemon-<settings hash>.failed``, and the CLI starts none for
  that index and settings within the quiet period.
* **Off**: ``CAIRN_DAEMON=0`` (or ``CAIRN_NO_WARM=1``, or ``idle_minutes = 0``) never
  starts one; nor does an index without a model (provider ``none``) or on PostgreSQL.
* **Never required**: any failure to start or to answer leaves the CLI searching
  locally; the daemon writes its own errors to ``daemon-<settings hash>.log`` in the
  socket folder, nothing to the user's terminal.
* **Thin clients**: the CLI starts it as ``python -m cairn.interfaces.cli._answer``,
  which passes :func:`main` a ``handler`` for whole command lines: a new ``cairn
  search`` process then sends its command line and prints the answer, importing
  almost nothing (:mod:`cairn.interfaces.cli._thin`). This module knows only that a
  handler answers such requests (:class:`cairn.serving.warm.WarmServer`).

The module imports only the standard library (and :mod:`cairn.serving.warm`) at
module level: :func:`spawn` runs in the CLI's fast path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.serving import warm

if TYPE_CHECKING:
    from cairn.config import Config

IDLE_MINUTES = 10.0
"""Minutes without a request after which a daemon exits (``[daemon] idle_minutes``)."""
TICK = 1.0
"""Seconds between a daemon's looks at its quiet period and its index file."""
_OFF = ("0", "false", "no", "off")
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Set to 1 in a daemon unless already set (see :func:`serve`)."""


def idle_minutes(config: Config) -> float:
    """``[daemon] idle_minutes`` (default :data:`IDLE_MINUTES`; ``0``: no daemon)."""
    value = config.daemon.get("idle_minutes", IDLE_MINUTES)
    return max(0.0, float(value))


def enabled(config: Config, env: dict[str, str] | None = None) -> bool:
    """Whether the CLI may start a daemon for ``config`` (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    if env.get("CAIRN_DAEMON", "").strip().lower() in _OFF or env.get("CAIRN_NO_WARM"):
        return False
    if not warm.has_sockets() or config.db_url is not None:
        return False
    if str(config.embed.get("provider", "auto")) == "none":
        return False
    return idle_minutes(config) > 0


def _files(config: Config) -> tuple[Path, Path, Path]:
    """The lock, log and failure-marker files of the daemon of ``config``'s index and
    settings.

    Raises:
        OSError: the per-user socket folder is not private (see :func:`warm.socket_folder`).
    """
    key = warm.settings_hash(config)
    folder = warm.socket_folder()
    return (folder / f"daemon-{key}.lock", folder / f"daemon-{key}.log",
            folder / f"daemon-{key}.failed")


def _failed_lately(marker: Path, config: Config) -> bool:
    """Whether a daemon for these settings failed to start within the quiet period (a
    new one would fail the same way: an index folder where no advert can be written),
    so searches do not start one each."""
    try:
        age = time.time() - marker.stat().st_mtime
    except OSError:
        return False
    return age < idle_minutes(config) * 60.0


def spawn(config: Config, module: str = "cairn.serving.daemon", *,
          warm_up: bool = True) -> int | None:
    """Start a daemon for ``config`` in the background (it exits at once when one runs).

    Args:
        config: the index and settings it answers for.
        module: the module run with ``python -m`` (its ``main`` calls :func:`main`,
            maybe with a handler of thin clients).
        warm_up: load the embedding model at start (``False``: on the first search
            that needs it; a keyword search starts such a daemon).

    Returns:
        The new process's id, or ``None`` when it could not be started (never raises:
        the search it follows has already been answered).
    """
    import subprocess  # only when a daemon is started

    try:
        _lock, log, failed = _files(config)
        if _failed_lately(failed, config):
            return None
        argv = [sys.executable, "-m", module,
                "--db", str(config.db_path.resolve())]
        if config.config_file is not None:
            argv += ["--config", str(config.config_file.resolve())]
        if not warm_up:
            argv.append("--no-warm-up")
        with open(log, "ab") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, cwd="/", start_new_session=True,
                                    close_fds=True)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return proc.pid


def running(config: Config) -> list[dict[str, Any]]:
    """The live daemons advertised for ``config``'s index: their adverts (``pid``,
    ``socket``, ``settings``, ``started`` …), oldest first. The adverts of daemons that
    are gone (no such process, or no socket: see :func:`sweep`) are removed."""
    folder = warm.advert_folder(config.db_path)
    found: list[dict[str, Any]] = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            if uid is not None and path.stat().st_uid != uid:
                continue
            ad = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(ad, dict) or ad.get("kind") != "daemon":
                continue
            if warm.alive(int(ad["pid"])) and os.path.exists(str(ad["socket"])):
                found.append(ad)
            else:
                warm.remove_stale(path, str(ad["socket"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(found, key=lambda a: str(a.get("started", "")))


def sweep() -> list[Path]:
    """Remove the sockets of this user's servers that are gone (nobody listens: a
    server renames its socket into place only once it listens) and the markers of
    servers that did not answer in time whose socket is gone.

    Returns:
        The files removed (none when the per-user folder is missing or not private).
    """
    import socket

    removed: list[Path] = []
    try:
        folder = warm.socket_folder()
        names = sorted(folder.iterdir())
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for path in names:
        try:
            if uid is not None and path.lstat().st_uid != uid:
                continue
            if path.name.endswith(warm.HUNG):
                gone = not Path(str(path)[: -len(warm.HUNG)]).exists()
            elif path.suffix == ".sock" and not path.name.startswith("pending-"):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(warm.CONNECT_TIMEOUT)
                    try:
                        s.connect(str(path))
                        gone = False
                    except ConnectionRefusedError:
                        gone = True
            else:
                continue
            if gone:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


def stop(config: Config | None) -> list[int]:
    """Ask daemons to stop: those of ``config``'s index, or (``None``) every daemon of
    this user (found by their sockets in the per-user folder).

    Returns:
        The process ids that said they are stopping.
    """
    sweep()
    if config is not None:
        sockets = [str(ad["socket"]) for ad in running(config)]
    else:
        try:
            sockets = [str(p) for p in sorted(warm.socket_folder().glob("daemon-*.sock"))]
        except OSError:
            return []
    stopped: list[int] = []
    for sock in sockets:
        answer = warm.ask(sock, b'{"op": "stop"}\n')
        if isinstance(answer, dict) and answer.get("ok") is True:
            stopped.append(int(answer.get("stopping", 0)))
    return stopped


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def serve(db: Path, config_file: Path | None, handler: warm.Handler | None = None, *,
          warm_up: bool = True) -> int:
    """The daemon's life: lock, open the index, load the model, answer until the quiet
    period ends (see the module docstring); ``handler`` answers thin clients;
    ``warm_up=False`` (a daemon a keyword search started) loads the model only when a
    search needs it.

    Returns:
        0 (stopped, idle, or another daemon already runs), 1 when the index cannot be
        opened or no socket can be made (the reason goes to standard error: the log).
    """
    # one BLAS thread per product, before numpy loads, as a server asks for
    # (cairn.search.dense.serve_mode): on a busy machine a product's other threads
    # mostly spin, CPU the user pays for each search (bench/startup.py gives the
    # daemon's CPU per search). Scores must stay a local search's to the last bit:
    # tests/interfaces/test_thin_client.py compares them on a small index, and
    # docs/benchmarks.md records the same check on a 24,000-chunk one
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")
    from cairn.config import load_config
    from cairn.errors import CairnError

    try:
        config = load_config(db=db, config_file=config_file)
        lock_path, _log, failed = _files(config)
        lock = open(lock_path, "a+b")  # noqa: SIM115 - held for the daemon's whole life
    except (CairnError, OSError) as exc:
        print(f"cairn daemon: {exc}", file=sys.stderr)
        return 1
    import fcntl

    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return 0  # another daemon answers for this index and these settings
    try:
        code = _answer_until_quiet(config, handler, warm_up)
        if code:
            failed.touch()  # the next searches start none for a while
        else:
            failed.unlink(missing_ok=True)
        return code
    finally:
        lock.close()


def _answer_until_quiet(config: Config, handler: warm.Handler | None, warm_up: bool) -> int:
    from cairn.app import Cairn
    from cairn.errors import CairnError

    idle = idle_minutes(config) * 60.0
    try:
        cairn = Cairn(config, create=False)
    except CairnError as exc:
        print(f"cairn daemon: {exc}", file=sys.stderr)
        return 1
    inode = _inode(config.db_path)
    with cairn, warm.advertise(cairn, "daemon", handler=handler, warm_up=warm_up) as server:
        if server is None:
            return 1
        while not server.stop_asked.wait(TICK):
            if time.monotonic() - server.last_used > idle:
                break
            if _inode(config.db_path) != inode:
                break  # deleted or replaced: the next search starts a daemon on the new file
    if _inode(config.db_path) is None:
        # SQLite leaves the log of a deleted file beside its name: nothing can read it now
        # (the index is derived data; a new index at the path must not meet it)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                Path(f"{config.db_path}{suffix}").unlink()
    return 0


def main(argv: list[str] | None = None, handler: warm.Handler | None = None) -> int:
    """``python -m cairn.serving.daemon --db FILE [--config FILE] [--no-warm-up]``; ``handler``
    answers thin clients (see :func:`serve`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    db: Path | None = None
    config_file: Path | None = None
    warm_up = True
    while args:
        name = args.pop(0)
        if name == "--no-warm-up":
            warm_up = False
        elif name in ("--db", "--config") and args:
            value = Path(args.pop(0))
            db, config_file = (value, config_file) if name == "--db" else (db, value)
        else:
            print(f"cairn daemon: unknown argument {name!r}", file=sys.stderr)
            return 2
    if db is None:
        print("cairn daemon: --db is required", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        return serve(db, config_file, handler, warm_up=warm_up)
    return 0


if __name__ == "__main__":
    sys.exit(main())
