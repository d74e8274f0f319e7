"""Words as SQLite's FTS5 tokenizer sees them, on the PostgreSQL server.

SQLite indexes every column with ``porter unicode61 remove_diacritics 2``: a token is a
run of letters, numbers and marks, anything else separates tokens, diacritics are
folded away and no word is dropped. PostgreSQL's ``english`` configuration differs on
exactly the text users search for: its parser keeps hyphenated words, file paths, URLs,
e-mail addresses, version numbers and signed numbers as tokens of their own
(``BENCH-100821`` → ``bench``, ``-100821``; ``path/to/file.toml`` → one lexeme), and
its dictionary drops English stop words (``don't`` → nothing). A query of the same
words then matched nothing on PostgreSQL (shared cases 035 and 037).

So both the indexed text and the query text go through :data:`WORDS` first — the SQL
function ``cairn_words(text)``, which turns ASCII punctuation into spaces (what is left
is plain words and numbers, which the parser does not join), maps Latin letters with
diacritics to their base letters and deletes combining marks — and are then
normalised by :data:`FTS_CONFIG`: ``english`` with its Snowball stemmer, minus the stop
word list. Case is folded by the configuration. Stemming stays Snowball's English
(Porter2), where SQLite uses the original Porter: the two agree on most words.
"""

from __future__ import annotations

import unicodedata
from itertools import chain

FTS_CONFIG = "cairn_fts"
"""The text search configuration of ``units_fts`` and of every query: ``english``
with stop words kept (see the module doc)."""

_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_UNDECOMPOSED = {"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ħ": "h",
                 "Ħ": "H", "ı": "i", "ŧ": "t", "Ŧ": "T"}


def fold_table() -> tuple[str, str, str]:
    """``(from, to, deleted)`` for SQL ``translate``: every ASCII punctuation mark to a
    space, every Latin letter of U+00C0–U+024F and U+1E00–U+1EFF that decomposes into
    an ASCII letter and combining marks (or is in the short list of letters with a
    stroke) to that letter, and the combining diacritical marks U+0300–U+036F deleted.
    """
    src = list(_PUNCTUATION)
    dst = [" "] * len(_PUNCTUATION)
    for cp in chain(range(0xC0, 0x250), range(0x1E00, 0x1F00)):
        ch = chr(cp)
        parts = unicodedata.normalize("NFD", ch)
        base = parts[0]
        if (len(parts) > 1 and base.isascii() and base.isalpha()
                and all(unicodedata.combining(x) for x in parts[1:])):
            src.append(ch)
            dst.append(base)
        elif ch in _UNDECOMPOSED:
            src.append(ch)
            dst.append(_UNDECOMPOSED[ch])
    deleted = "".join(chr(cp) for cp in range(0x300, 0x370))
    return "".join(src), "".join(dst), deleted


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def words_function() -> str:
    """``CREATE FUNCTION cairn_words(text) RETURNS text``: :func:`fold_table` applied by
    ``translate`` (immutable and inlinable, so a generated column may call it)."""
    src, dst, deleted = fold_table()
    return (
        "CREATE OR REPLACE FUNCTION cairn_words(t TEXT) RETURNS TEXT LANGUAGE sql "
        f"IMMUTABLE STRICT PARALLEL SAFE RETURN translate(t, {_literal(src + deleted)}, "
        f"{_literal(dst)})"
    )


CONFIG_STATEMENTS: tuple[str, ...] = (
    "CREATE TEXT SEARCH DICTIONARY cairn_stem (TEMPLATE = snowball, Language = english)",
    f"CREATE TEXT SEARCH CONFIGURATION {FTS_CONFIG} (COPY = pg_catalog.english)",
    f"ALTER TEXT SEARCH CONFIGURATION {FTS_CONFIG} ALTER MAPPING REPLACE english_stem "
    "WITH cairn_stem",
)
"""The dictionary (Snowball English without a stop word list) and :data:`FTS_CONFIG`."""


def vector(column: str, weight: str) -> str:
    """The SQL of one column's weighted ``tsvector``."""
    return f"setweight(to_tsvector('{FTS_CONFIG}', cairn_words({column})), '{weight}')"


DOC_VECTOR = " || ".join((
    vector("title", "A"), vector("outline_path", "B"), vector("tags", "C"),
    vector("meta", "C"), vector("body", "D"),
    "setweight(to_tsvector('simple', cjk), 'D')"))
"""The generated ``units_fts.doc``: title A, outline path B, tags and metadata C, body
and CJK bigrams D."""
