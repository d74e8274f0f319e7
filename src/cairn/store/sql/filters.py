"""SQL of the filters added to the query language after the first ones (those are in
:mod:`cairn.store.sql.search`): dates, ``file:``, ``heading:``, ``section:``,
``level:`` and ``lang:``. Each gives a condition over ``u`` (units) and ``d`` (documents)."""

from __future__ import annotations

from typing import Any

from cairn.model import Filter
from cairn.store.sql.datefn import TS_FIELDS

_FILE_STAMP = "strftime('%Y-%m-%d', d.mtime, 'unixepoch', 'localtime')"
_BASENAME = "replace(d.path, rtrim(d.path, replace(d.path, '/', '')), '')"


def _like(s: str) -> str:
    return "%" + s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _range(expr: str, rng: str) -> tuple[str, list[Any]]:
    lo, _, hi = rng.partition("..")
    parts: list[str] = []
    args: list[Any] = []
    if lo:
        parts.append(f"{expr} >= ?")
        args.append(lo)
    if hi:
        parts.append(f"{expr} < ?")
        args.append(hi)
    return ("(" + " AND ".join(parts) + ")" if parts else "1", args)


def extra_filter(f: Filter) -> tuple[str, list[Any]] | None:
    """The condition of ``f`` when it is one of this module's fields, else ``None``.

    Date ranges compare ISO days; ``created:`` is the document's declared creation
    date, else its file's modification day (local time); ``modified:`` its declared
    modification date, else the file's. ``level:`` takes ``lo..hi`` (inclusive).
    """
    v = f.value
    if f.field in TS_FIELDS:
        # cheap SQL first: most units have no timestamp, or none of that role
        role = f'"{f.field}"' if f.field in ("scheduled", "deadline", "closed") else "["
        return (
            "(u.timestamps != '[]' AND instr(u.timestamps, ?) > 0"
            " AND cairn_ts_match(u.timestamps, ?, ?, ?))",
            [role, f.field, v, f.key],
        )
    if f.field in ("created", "modified"):
        first = "d.created" if f.field == "created" else "d.modified"
        expr = f"substr(COALESCE({first}, {_FILE_STAMP}), 1, 10)"
        if v == "soon":
            return ("0", [])
        return _range(expr, v)
    if f.field == "file":
        return (f"{_BASENAME} LIKE ? ESCAPE '\\'", [_like(v)])
    if f.field == "heading":
        return ("(u.kind = 'heading' AND u.title LIKE ? ESCAPE '\\')", [_like(v)])
    if f.field == "section":
        return ("u.outline_path LIKE ? ESCAPE '\\'", [_like(v)])
    if f.field == "lang":
        return _lang(v)
    if f.field == "level":
        lo, _, hi = v.partition("..")
        return (
            "(u.kind = 'heading' AND u.level BETWEEN ? AND ?)",
            [int(lo or 0), int(hi or 99)],
        )
    return None


def _lang(value: str) -> tuple[str, list[Any]]:
    """``lang:python``: a code unit in that language (an Org source block, a chat's code
    block or code message), a Markdown section whose fenced blocks include it
    (``extra["code_languages"]``; the body keeps only the code), or a unit whose text
    still opens a fenced block (```` ```python````, ``~~~python``: a chat message) or an
    Org ``#+begin_src python`` in it; case-insensitive, and the language must end at the
    end of the line or a space (``python`` is not ``pythonic``)."""
    lang = value.casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    opens = [f"{fence}{lang}" for fence in ("```", "~~~", "#+begin_src ")]
    patterns = [f"%{o}{end}%" for o in opens for end in ("\n", " ", "\r")]
    patterns += [f"%{o}" for o in opens]  # at the very end of the text
    likes = " OR ".join(["lower(u.body) LIKE ? ESCAPE '\\'"] * len(patterns))
    fenced = (
        "EXISTS (SELECT 1 FROM json_each(u.extra, '$.code_languages') c WHERE c.value = ?)"
    )
    return (
        f"(lower(u.language) = ? OR {fenced} OR {likes})",
        [value.casefold(), value.casefold(), *patterns],
    )
