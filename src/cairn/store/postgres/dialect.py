"""The store's SQL, spoken to PostgreSQL.

The role modules of the store (``writes``, ``reads``, ``vectors``, ``edges``,
``graph_reads``) are written once, in a small portable subset of SQL with SQLite's
spelling; this module renders each statement for PostgreSQL, once per distinct text
(an LRU cache), so the two backends share every query and cannot drift apart:

- ``?`` placeholders become ``%s`` (and a literal ``%`` becomes ``%%``);
- ``INSERT OR IGNORE`` becomes ``ON CONFLICT DO NOTHING``; ``INSERT OR REPLACE`` an
  upsert on the table's primary key (the keys are read from the catalogue at start);
- ``x = ? COLLATE NOCASE`` becomes ``lower(x) = lower(?)``; ``LIKE`` (case-insensitive
  for ASCII in SQLite) becomes ``ILIKE``; ``x GLOB ?`` becomes ``cairn_glob(x, ?)``;
- ``x IS ?`` (null-safe equality) becomes ``x IS NOT DISTINCT FROM ?``;
- the column named ``end`` (a reserved word in PostgreSQL) is quoted;
- DDL types: ``INTEGER`` → ``BIGINT``, ``REAL`` → ``DOUBLE PRECISION``, ``BLOB`` →
  ``BYTEA``, ``INTEGER PRIMARY KEY [AUTOINCREMENT]`` (a rowid alias) → ``BIGSERIAL PRIMARY KEY``,
  ``WITHOUT ROWID`` dropped, ``TEXT`` columns byte-ordered (``COLLATE "C"``, SQLite's
  ``BINARY``) so that paths sort the same in both; ``CREATE TRIGGER … BEGIN …; END``
  becomes a PL/pgSQL trigger function and a row-level trigger.

SQLite functions the shared SQL uses (``json_extract``, ``json_each`` with its
``type`` column, ``strftime(…, 'unixepoch')``, ``char`` as ``cairn_char``,
``cairn_glob``) are created as SQL functions by :data:`COMPAT_FUNCTIONS`. Full-text
search is not translated: it has its own PostgreSQL implementation
(:mod:`cairn.store.postgres.search`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

STRFTIME_DAY = """
    CREATE OR REPLACE FUNCTION strftime(fmt text, secs double precision, modifier text,
                                        zone text)
    RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT to_char(to_timestamp(secs), 'YYYY-MM-DD')
    $$
"""
"""``strftime('%Y-%m-%d', secs, 'unixepoch', 'localtime')``, the one four-argument form
the shared SQL uses (a file's day, ``created:`` and ``modified:`` without a declared
date): the day in the session's time zone. Created by a step of
:data:`cairn.store.postgres.steps.PG_STEPS`, so indexes made before it get it too."""

COMPAT_FUNCTIONS: tuple[str, ...] = (
    # json_extract(text, '$.a.b') → the value as text (NULL when missing); numbers and
    # booleans as their JSON text, objects/arrays as JSON, like SQLite
    """
    CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE jsonb_typeof(v) WHEN 'string' THEN v #>> '{}' WHEN 'null' THEN NULL
               ELSE v::text END
        FROM (SELECT (doc::jsonb) #> string_to_array(substr(path, 3), '.') AS v) s
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION json_each(doc text)
    RETURNS TABLE(key text, value text, type text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT e.key,
               CASE jsonb_typeof(e.value) WHEN 'string' THEN e.value #>> '{}'
                    WHEN 'null' THEN NULL ELSE e.value::text END,
               CASE jsonb_typeof(e.value) WHEN 'number' THEN
                    CASE WHEN e.value::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
                    WHEN 'boolean' THEN e.value::text ELSE jsonb_typeof(e.value) END
        FROM jsonb_each(CASE WHEN jsonb_typeof(doc::jsonb) = 'object' THEN doc::jsonb
                             ELSE '{}'::jsonb END) e
        UNION ALL
        SELECT (a.n - 1)::text,
               CASE jsonb_typeof(a.v) WHEN 'string' THEN a.v #>> '{}'
                    WHEN 'null' THEN NULL ELSE a.v::text END,
               jsonb_typeof(a.v)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc::jsonb) = 'array'
                                       THEN doc::jsonb ELSE '[]'::jsonb END)
             WITH ORDINALITY a(v, n)
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION json_each(doc text, path text)
    RETURNS TABLE(key text, value text, type text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT * FROM json_each(((doc::jsonb) #> string_to_array(substr(path, 3), '.'))::text)
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION strftime(fmt text, secs double precision, modifier text)
    RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT to_char(to_timestamp(secs) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION cairn_char(VARIADIC codes int[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT string_agg(chr(c), '') FROM unnest(codes) c
    $$
    """,
    # SQLite's GLOB: * ? [...] on the whole string, case-sensitive
    """
    CREATE OR REPLACE FUNCTION cairn_glob(s text, pattern text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT s ~ ('^' || replace(replace(
                   regexp_replace(pattern, '([.+^$(){}|\\\\])', '\\\\\\1', 'g'),
                   '*', '.*'), '?', '.') || '$')
    $$
    """,
)


def _outside_quotes(sql: str) -> list[tuple[bool, str]]:
    """Split ``sql`` into (is_code, text) pieces; quoted strings and identifiers are not
    code."""
    pieces: list[tuple[bool, str]] = []
    i = start = 0
    while i < len(sql):
        c = sql[i]
        if c in ("'", '"'):
            if i > start:
                pieces.append((True, sql[start:i]))
            j = i + 1
            while j < len(sql):
                if sql[j] == c:
                    if j + 1 < len(sql) and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            pieces.append((False, sql[i : j + 1]))
            i = start = j + 1
            continue
        i += 1
    if start < len(sql):
        pieces.append((True, sql[start:]))
    return pieces


_OPERAND = r"(CAST\([^()]*\)|[\w.]+|\?)"
_NOCASE = re.compile(_OPERAND + r"\s*=\s*" + _OPERAND + r"\s+COLLATE\s+NOCASE", re.I)
_IN_NOCASE = re.compile(_OPERAND + r"\s+IN\s+\(((?:\s*\?\s+COLLATE\s+NOCASE\s*,?)+)\)", re.I)
_GLOB = re.compile(r"([\w.]+)\s+GLOB\s+(\?|[\w.]+)", re.I)
_END = re.compile(r"(?<![\w\"])((?:\w+\.)?)end\b(?!\s*\()")
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)",
                        re.I | re.S)
_TRIGGER = re.compile(
    r"CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s+(AFTER|BEFORE)\s+"
    r"(INSERT|DELETE|UPDATE(?:\s+OF\s+[\w, ]+)?)\s+ON\s+(\w+)\s+(?:FOR\s+EACH\s+ROW\s+)?"
    r"(?:WHEN\s+(.*?)\s+)?BEGIN\s+(.*)\s+END\s*$",
    re.I | re.S,
)


def _code(text: str) -> str:
    text = _NOCASE.sub(lambda m: f"lower({m.group(1)}) = lower({m.group(2)})", text)
    text = _IN_NOCASE.sub(
        lambda m: f"lower({m.group(1)}) IN ("
        + ", ".join("lower(?)" for _ in range(m.group(2).count("?"))) + ")", text)
    text = _GLOB.sub(lambda m: f"cairn_glob({m.group(1)}, {m.group(2)})", text)
    text = re.sub(r"\bLIKE\b", "ILIKE", text)
    text = re.sub(r"\bchar\(", "cairn_char(", text)
    text = re.sub(r"\bIS\s+NOT\s+\?", "IS DISTINCT FROM ?", text, flags=re.I)
    text = re.sub(r"\bIS\s+\?", "IS NOT DISTINCT FROM ?", text, flags=re.I)
    text = _END.sub(lambda m: f'{m.group(1)}"end"', text)
    text = text.replace("%", "%%").replace("?", "%s")
    return text


def _ddl(text: str) -> str:
    text = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", "BIGSERIAL PRIMARY KEY",
                  text, flags=re.I)
    text = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY\b", "BIGSERIAL PRIMARY KEY", text, flags=re.I)
    text = re.sub(r"\bWITHOUT\s+ROWID\b", "", text, flags=re.I)
    text = re.sub(r"\bINTEGER\b", "BIGINT", text)
    text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
    text = re.sub(r"\bBLOB\b", "BYTEA", text)
    text = re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', text)
    return text


def translate_trigger(sql: str) -> list[str]:
    """A SQLite ``CREATE TRIGGER`` as PostgreSQL statements (function, then trigger).

    Raises:
        ValueError: not a trigger this translator understands.
    """
    m = _TRIGGER.match(sql.strip())
    if m is None:
        raise ValueError(f"cannot translate trigger: {sql[:80]}")
    name, when, event, table, cond, body = m.groups()
    body = body.strip().rstrip(";")
    stmts = [s.strip() for s in body.split(";") if s.strip()]
    pl = " ".join(translate(s, {}) + ";" for s in stmts)
    ret = "NEW" if when.upper() == "BEFORE" and event.upper() != "DELETE" else "NULL"
    if cond:
        pl = f"IF {cond} THEN {pl} END IF;"
    func = (f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {pl} RETURN {ret}; END $$")
    trig = (f"CREATE OR REPLACE TRIGGER {name} {when} {event} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {name}_fn()")
    return [func, trig]


@functools.lru_cache(maxsize=4096)
def _translate_cached(sql: str, keys: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    head = sql.lstrip()[:12].upper()
    is_ddl = head.startswith(("CREATE", "ALTER", "DROP"))
    out = "".join((_ddl(_code(t)) if is_ddl else _code(t)) if code else t.replace("%", "%%")
                  for code, t in _outside_quotes(sql))
    m = _INSERT_OR.match(out)
    if m is not None:
        mode, table, cols = m.group(1).upper(), m.group(2), m.group(3)
        out = out[: m.start()] + f"INSERT INTO {table}({cols})" + out[m.end():]
        if mode == "IGNORE":
            out += " ON CONFLICT DO NOTHING"
        else:
            pk = dict(keys).get(table)
            if not pk:
                raise ValueError(f"INSERT OR REPLACE into {table}: no primary key known")
            names = [c.strip() for c in cols.split(",")]
            sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in names if c.strip('"') not in pk)
            action = f"DO UPDATE SET {sets}" if sets else "DO NOTHING"
            out += f" ON CONFLICT ({', '.join(pk)}) {action}"
    return out


def translate(sql: str, primary_keys: Mapping[str, tuple[str, ...]]) -> str:
    """``sql`` (the store's portable SQLite spelling) for PostgreSQL, to be executed
    with a parameter sequence (possibly empty: ``%`` is always escaped).

    Args:
        sql: one statement.
        primary_keys: table → primary-key columns, for ``INSERT OR REPLACE``.

    Raises:
        ValueError: an ``INSERT OR REPLACE`` into a table without a known primary key.
    """
    return _translate_cached(sql, tuple(sorted(primary_keys.items())))
