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

FTS_CONFIG = "cairn_fts"
"""The text search configuration of ``units_fts`` and of every query: ``english``
with stop words kept (see the module doc)."""

_STROKED = ("øØłŁđĐħĦıŧŦ", "oOlLdDhHitT")
"""Latin letters with a stroke, which do not decompose, and their base letters."""

WORDS_FUNCTION = (
    "CREATE OR REPLACE FUNCTION cairn_words(t TEXT) RETURNS TEXT LANGUAGE sql "
    "IMMUTABLE STRICT PARALLEL SAFE RETURN regexp_replace("
    "CASE WHEN octet_length(t) = length(t) THEN t ELSE translate(normalize(regexp_replace("
    "normalize(t, NFD), '[\\u0300-\\u036f]', '', 'g'), NFC), "
    f"'{_STROKED[0]}', '{_STROKED[1]}') END, "
    "'[!-/:-@[-`{-~]', ' ', 'g')"
)
"""``CREATE FUNCTION cairn_words(text) RETURNS text``: every ASCII punctuation mark
becomes a space; text with a non-ASCII character is first decomposed (NFD), its
combining diacritical marks (U+0300–U+036F) deleted, composed again (NFC) and its
letters with a stroke mapped to their base letters. Immutable, so the generated
column may call it. Regular expressions, not ``translate`` with a long table:
``translate`` compares each character with every entry of its table, so a table of
every accented letter would cost a large corpus's index run far more than the
expressions do."""


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
