"""The one copy of text normalisation shared by indexing and querying.

The SQLite store writes :func:`fts_text` of every column and :func:`cjk_bigrams` into
its ``cjk`` column; the query parser rewrites user words with the same functions, so a
query token and an indexed token always agree (NFKC, CJK boundaries, ``C++``-style
names). :func:`fts_tokens` splits text as FTS5's ``unicode61`` tokenizer does.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache


@cache
def cjk_run() -> re.Pattern[str]:
    """Runs of Han, Hiragana, Katakana, Hangul syllables and compatibility ideographs.

    Compiled on first use: a class of wide BMP ranges takes a new process about 1 ms,
    and ASCII text never needs it (see :func:`has_cjk`). ``cairn.text.CJK_RUN``
    is the same pattern.
    """
    return re.compile(
        r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
        r"\U00020000-\U0002fa1f]+"
    )


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (of :func:`cjk_run`)."""
    return not text.isascii() and cjk_run().search(text) is not None


def __getattr__(name: str) -> re.Pattern[str]:
    """``CJK_RUN``: :func:`cjk_run`, compiled when first asked for."""
    if name == "CJK_RUN":
        return cjk_run()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _cjk_edge() -> re.Pattern[str]:
    """The boundaries between CJK and other characters (compiled on first use: its
    negated classes take a new process about 10 ms, and most text has no CJK)."""
    return re.compile(
        r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
        r"(?=[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
        r"|(?<=[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
        r"(?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
    )


_LANG_NAME = re.compile(r"(?<![\w+#])([A-Za-z])(\+\+|#)(?![\w+#])")


def fts_text(text: str) -> str:
    """Text as the FTS index holds it (and as query terms are rewritten before quoting).

    NFKC (so NFD text from macOS, full-width letters and ligatures match their plain
    forms); a space at each boundary between CJK and other characters (``CSSはHTML`` →
    ``CSS は HTML``: unicode61 would glue them into one token); ``C++``, ``C#``, ``F#``
    → ``Cplusplus``, ``Csharp``, ``Fsharp`` (unicode61 would drop the symbols and leave
    a one-letter word).
    """
    text = unicodedata.normalize("NFKC", text)
    if has_cjk(text):
        text = _cjk_edge().sub(" ", text)
    if "+" in text or "#" in text:
        text = _LANG_NAME.sub(
            lambda m: m.group(1) + ("plusplus" if m.group(2) == "++" else "sharp"), text
        )
    return text


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of every CJK run in ``text``.

    A run of one character gives that character. ``"東京都"`` → ``["東京", "京都"]``.
    """
    out: list[str] = []
    if not has_cjk(text):
        return out
    for m in cjk_run().finditer(text):
        run = m.group()
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def is_token_char(ch: str) -> bool:
    """Whether unicode61 keeps ``ch`` inside a token (letters, numbers, marks)."""
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or cat in ("Mn", "Mc", "Co")


def fts_tokens(text: str) -> list[str]:
    """Split text as FTS5's ``unicode61`` tokenizer does (minus case folding)."""
    out: list[str] = []
    cur: list[str] = []
    for ch in text:
        if is_token_char(ch):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def fold_word(word: str) -> str:
    """A word as query understanding compares it: case-folded, a plural ``s`` dropped
    (``movies`` → ``movie``, ``books`` → ``book``; not ``ss``, not short words)."""
    w = word.casefold()
    if len(w) > 3 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def fold_key(text: str) -> str:
    """Text as a vocabulary key: its words folded (:func:`fold_word`) and joined without
    spaces (``In Progress``, ``INPROGRESS`` and ``in-progress`` all ``inprogress``); the
    index files what units carry under it and a query phrase is looked up by it."""
    return "".join(fold_word(w) for w in re.findall(r"\w+", text))
