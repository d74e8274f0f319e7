"""What tells an open page that the index changed: the last run's identity."""

from __future__ import annotations

from typing import Any

from cairn.app.parts import Parts


class LiveMixin(Parts):
    """``Cairn.index_version``."""

    def index_version(self) -> dict[str, Any] | None:
        """The last index run as ``{"run", "finished", "added", "changed", "removed"}``
        (``None`` before the first run): it changes whenever a run — ``cairn index``,
        ``POST /v1/index`` or the watcher of ``cairn serve --watch``, in this process or
        another on the same index — has finished. One indexed read."""
        run = self.store.last_run()
        if run is None:
            return None
        return {"run": run.id, "finished": run.finished, "added": run.added,
                "changed": run.changed, "removed": run.removed}
