"""Live updates: ``/ui/events``, a Server-Sent Events stream that says ``changed`` (with
the run as JSON) whenever the index changes — a re-index, or the watcher of ``cairn
serve --watch`` — so open pages refresh their hits or their note (``static/live.js``).

The stream polls :func:`index_version` (one indexed read of the last run) every
:data:`POLL_SECONDS`, so it also sees runs of another process on the same index, and
ends after :data:`STREAM_SECONDS` (the browser reconnects by itself after ``retry``),
so no connection outlives a server shutdown for long.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from cairn.app import Cairn
from cairn.errors import CairnError
from cairn.interfaces.web.routes.common import cairn_of

POLL_SECONDS = 0.5
STREAM_SECONDS = 25.0
RETRY_MS = 1000

router = APIRouter(include_in_schema=False)


def index_version(cairn: Cairn) -> dict[str, Any] | None:
    """The last index run as the event's data, ``{"run", "finished", "added", "changed",
    "removed"}`` (``None`` before the first run): it changes whenever a run — ``cairn
    index``, ``POST /v1/index`` or the watcher of ``cairn serve --watch``, in this process
    or another on the same index — has finished. One indexed read.

    Raises:
        cairn.errors.StoreError: the index cannot be read.
    """
    run = cairn.store.last_run()
    if run is None:
        return None
    return {"run": run.id, "finished": run.finished, "added": run.added,
            "changed": run.changed, "removed": run.removed}


@router.get("/ui/events")
async def events(request: Request, since: str = "") -> StreamingResponse:
    """The stream of index changes. Query ``since`` (a run id the page saw, from its
    ``data-run``) makes the first event come at once when the index moved on."""
    cairn = cairn_of(request)

    async def stream() -> AsyncIterator[str]:
        yield f"retry: {RETRY_MS}\n\n"
        last: str | None = since[:200] or None
        first = True
        stop = time.monotonic() + STREAM_SECONDS
        while time.monotonic() < stop:
            if await request.is_disconnected():
                return
            try:
                version = await run_in_threadpool(index_version, cairn)
            except CairnError:
                version = None
            run = version["run"] if version else None
            if first and last is None:
                last = run  # what the page saw is what is there now
                yield f"event: hello\ndata: {json.dumps(version)}\n\n"
            elif run != last and version is not None and version.get("finished"):
                last = run
                yield f"event: changed\ndata: {json.dumps(version)}\n\n"
            first = False
            await asyncio.sleep(POLL_SECONDS)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store",
                                      "X-Content-Type-Options": "nosniff",
                                      "X-Accel-Buffering": "no"})
