"""Observability of the HTTP API: one JSON log line per request and Prometheus metrics.

Each request is logged on the ``cairn.http`` logger as one JSON object (``ts``, ``id``,
``method``, ``route``, ``status``, ``ms``, ``pid``: the process that answered); server
errors also log their traceback there, under the same ``id`` the client receives; every
line is masked by the redaction detectors first.
Metrics live in a registry of their own per application (``/metrics``): request counts
by route, method and status, latencies by route, and, read when scraped, the index
size and the last run's time. The processes of ``cairn serve --workers N`` keep them in
shared files (``PROMETHEUS_MULTIPROC_DIR``), so any process's ``/metrics`` answers for
all.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

if TYPE_CHECKING:
    from cairn.app import Cairn

log = logging.getLogger("cairn.http")


def _masked(record: logging.LogRecord) -> bool:
    """Every line of the log with its secrets and personal data masked: a traceback
    may quote what a note or a request held."""
    from cairn.app.results import mask_text

    text = record.getMessage()
    masked = mask_text(text)
    if masked != text:
        record.msg, record.args = masked, ()
    return True


log.addFilter(_masked)


def setup_logging(level: int = logging.INFO) -> None:
    """Send ``cairn.http`` lines to standard error, unformatted (each is JSON already)."""
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False


def log_request(request_id: str, method: str, route: str, status: int, ms: float) -> None:
    """One JSON line for one request."""
    log.info(json.dumps({
        "ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "id": request_id,
        "method": method, "route": route, "status": status, "ms": round(ms, 3),
        "pid": os.getpid(),
    }))


class Metrics:
    """The Prometheus metrics of one application.

    Args:
        index_facts: called at each scrape; returns ``(documents, units,
            last_run_finished_posix_seconds or None)``.
    """

    def __init__(self, index_facts: Callable[[], tuple[int, int, float | None]]) -> None:
        self.shared = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
        """The folder the processes of ``serve --workers N`` share their counts in
        (``None``: one process, counts in memory)."""
        if self.shared:  # read when each metric is made: prometheus_client's own switch
            from prometheus_client import values

            if values.ValueClass is values.MutexValue:
                values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        self.requests = Counter("cairn_http_requests", "HTTP requests served",
                                ["route", "method", "status"], registry=self.registry)
        self.latency = Histogram(
            "cairn_http_request_seconds", "HTTP request latency in seconds", ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
            registry=self.registry)
        self.documents = Gauge("cairn_index_documents", "Documents in the index",
                               registry=self.registry, multiprocess_mode="mostrecent")
        self.units = Gauge("cairn_index_units", "Units in the index", registry=self.registry,
                           multiprocess_mode="mostrecent")
        self.last_run = Gauge("cairn_index_last_run_timestamp_seconds",
                              "When the last index run finished (POSIX seconds)",
                              registry=self.registry, multiprocess_mode="mostrecent")
        self._facts = index_facts

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one request and its latency."""
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def render(self) -> bytes:
        """The metrics in Prometheus' text format (index figures read now)."""
        docs, units, last = self._facts()
        self.documents.set(docs)
        self.units.set(units)
        if last is not None:
            self.last_run.set(last)
        if self.shared:  # every process's counts, summed (gauges: the latest set)
            from prometheus_client import multiprocess

            merged = CollectorRegistry()
            multiprocess.MultiProcessCollector(  # type: ignore[no-untyped-call]
                merged, path=self.shared)
            return bytes(generate_latest(merged))
        return bytes(generate_latest(self.registry))


def now() -> float:
    """A monotonic clock in seconds."""
    return time.perf_counter()


def index_facts(cairn: Cairn) -> tuple[int, int, float | None]:
    """What :class:`Metrics` reads from the index at a scrape: ``(documents, units,
    the last run's finish in POSIX seconds or None)``."""
    st = cairn.stats()
    last = st.last_run
    when = None
    if last is not None and last.finished:
        when = datetime.fromisoformat(last.finished.replace("Z", "+00:00")).timestamp()
    return st.documents, st.units, when
