"""Big and hostile files: parse time of the native parsers, and whether it grows linearly.

Usage::

    python bench/bigfiles.py [--scale 1.0] [--only NAME ...] [--ratios] [--write DIR]

Each case is generated in memory (nothing is committed): a 50 MB Markdown note, an Org
file of 100,000 headings, a 6 MB YAML front matter block, Org nesting 10,000 levels
deep, unclosed Org blocks and drawers over a big file, one Markdown paragraph of 12,000
link-laden lines, one Markdown line of 32,000 link-like pieces, Org heading lines of
300,000 characters, Org fragments repeated 400,000 characters long, a paragraph of
80,000 plain lines, a YAML alias bomb.
``--scale`` multiplies every size (0.1 for a quick look). For each case the script
prints size (MB), wall and CPU seconds and MB/s; ``--ratios`` also parses each case at
1×, 2× and 4× of a quarter of its size and prints the time ratios (≈2 and ≈4 when the
parser is linear; 16 would be quadratic). ``--write DIR`` writes the generated files
instead of timing them (for profiling or indexing by hand).

The tests (``tests/formats/test_bigfiles.py``, ``test_org_roundtrip.py``,
``test_md_paragraph_rules.py``) parse the same inputs and check what
comes out; how fast it comes is measured here.

The generators are importable (``cases()``) so tests build the same inputs smaller.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_WORDS = ["river", "stone", "lamp", "field", "cloud", "maple", "harbor", "signal",
          "copper", "meadow", "orbit", "lantern", "thistle", "canyon", "pebble", "ember"]


def _line(i: int) -> str:
    return " ".join(_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(12))


def markdown_note(mb: float) -> str:
    """A Markdown note of about ``mb`` MB: sections of 50 lines with links, tags, lists."""
    out = ["---\ntitle: Big journal\ntags: [bulk]\n---\n"]
    size, i = 0, 0
    target = int(mb * 1e6)
    while size < target:
        if i % 50 == 0:
            piece = f"\n## Section {i // 50}\n\n"
        elif i % 17 == 0:
            piece = f"- item {i} with [[Note {i % 97}]] and #tag{i % 13}\n"
        elif i % 23 == 0:
            piece = f"See [a link](other%20{i % 31}.md#Part) and `code {i}`.\n\n"
        else:
            piece = f"Line {i}: {_line(i)}.\n"
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)


def org_headings(n: int) -> str:
    """An Org file of ``n`` headings (levels 1-4, tags, TODOs, a property drawer now and
    then, a short body each)."""
    out = ["#+TITLE: Many headings\n#+FILETAGS: :bulk:\n\n"]
    for i in range(n):
        level = 1 + (i % 4)
        todo = "TODO " if i % 5 == 0 else ""
        tags = f" :t{i % 7}:" if i % 3 == 0 else ""
        out.append(f"{'*' * level} {todo}Heading {i}{tags}\n")
        if i % 10 == 0:
            out.append(f":PROPERTIES:\n:ID: id-{i}\n:END:\n")
        out.append(f"Body {i}: {_line(i)} [[id:id-{i // 2}][back]].\n")
    return "".join(out)


def org_deep(depth: int) -> str:
    """Org headings nested ``depth`` levels deep (level k is ``k`` stars)."""
    return "".join(f"{'*' * k} Level {k}\ntext {k}\n" for k in range(1, depth + 1))


def frontmatter_block(mb: float) -> str:
    """A note whose YAML front matter is about ``mb`` MB (a long list and many keys)."""
    out = ["---\ntitle: Huge front matter\ntags:\n"]
    size, i = 0, 0
    target = int(mb * 1e6)
    while size < target // 2:
        piece = f"  - tag{i}\n"
        out.append(piece)
        size += len(piece)
        i += 1
    while size < target:
        piece = f"key{i}: \"{_line(i)}\"\n"
        out.append(piece)
        size += len(piece)
        i += 1
    out.append("---\n\n# Body\n\nThe body [[Link]].\n")
    return "".join(out)


def org_unclosed(mb: float) -> str:
    """A big Org file whose blocks and drawers never close."""
    out = ["* Start\n#+BEGIN_SRC python\n:LOGBOOK:\n#+begin_quote\n"]
    size, i = 0, 0
    target = int(mb * 1e6)
    while size < target:
        piece = (f"** Heading {i}\n#+begin_example\n:PROPERTIES:\n{_line(i)}\n"
                 if i % 40 == 0 else f"{_line(i)} #+begin_src\n")
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)


def markdown_paragraph(n: int) -> str:
    """One Markdown paragraph of ``n`` lines, each with a wikilink, a tag, a bare URL, a
    ``www.`` link, an e-mail address, a ``==mark`` and an unclosed ``[[`` (the GFM
    autolink rules once copied the rest of the paragraph at every ``:``, ``w``, ``@``)."""
    return "".join(
        f"line {i} [[n{i}]] #t{i} at 10:3{i % 10} www.x{i}.org a{i}@b.org "
        f"http://u.rl/{i} ==mark {i} [[open\n"
        for i in range(n)
    )


def org_long_headings(n: int) -> str:
    """Three kinds of long Org heading line, three times each: ``n`` spaces before a
    ``x:``, ``n / 2`` tags, ``n / 5`` tag-like words (heading rules that backtrack)."""
    spaces = "* a" + " " * n + "x:\n"
    tags = "* a " + ":t" * (n // 2) + " x\n"
    many = "* " + "w :t: " * (n // 5) + "\n"
    return (spaces + tags + many) * 3


ORG_REPEATED = (
    "#+begin_src x\n", ":DRAWER:\n", "[[", "[[a][", "<2024-01-01 ", "[2024-01-01 Mon 10:00-",
    "https://a(b(c(", ":PROPERTIES:\n:A: b\n", "#+TODO: A B | C\n", "<<", "%%(", "| a | b\n",
    "- [ ] \n", "a-", "<https://a.b> https://c.d ", "<2024-01-01 Mon> <%%(x)> ", "[[a\\]",
)
"""Org fragments that once made a rule backtrack when repeated (the same list as
``tests/formats/test_org_roundtrip.py``)."""


def org_repeated(chars: int) -> str:
    """One heading per :data:`ORG_REPEATED` fragment, its body the fragment repeated to
    about ``chars`` characters."""
    return "".join("* H\n" + unit * (chars // len(unit)) + "\n" for unit in ORG_REPEATED)


def markdown_plain_paragraph(n: int) -> str:
    """A heading and one paragraph of ``n`` plain lines (the block rules' line scan)."""
    return "# Big\n\n" + "lorem ipsum dolor sit amet\n" * n


LONG_LINE_PIECE = "word [[x]] #tag http: a@b www. ==y [[z "
"""One piece of :func:`markdown_line`: a wikilink to ``x`` and near-misses of the rest."""


def markdown_line(n: int) -> str:
    """One Markdown line of ``n`` :data:`LONG_LINE_PIECE` pieces."""
    return LONG_LINE_PIECE * n


def yaml_alias_bomb(levels: int = 12) -> str:
    """A note whose front matter is a YAML alias bomb (10 ** ``levels`` items when
    expanded)."""
    out = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for k in range(1, levels):
        prev, name = chr(ord("a") + k - 1), chr(ord("a") + k)
        out.append(f"{name}: &{name} [{', '.join('*' + prev for _ in range(10))}]")
    return "---\n" + "\n".join(out) + "\n---\nbody\n"


@dataclass(frozen=True)
class Case:
    """One generated input: ``make(scale)`` gives the text, ``parser`` its format."""

    name: str
    suffix: str
    parser: str
    make: Callable[[float], str]


def cases() -> list[Case]:
    """Every case at ``scale`` 1.0 = the sizes of the issue."""
    return [
        Case("markdown-50MB", ".md", "markdown", lambda s: markdown_note(50 * s)),
        Case("org-100k-headings", ".org", "org", lambda s: org_headings(int(100_000 * s))),
        Case("frontmatter-6MB", ".md", "markdown", lambda s: frontmatter_block(6 * s)),
        Case("org-deep-10k", ".org", "org", lambda s: org_deep(int(10_000 * s**0.5))),
        Case("org-unclosed-20MB", ".org", "org", lambda s: org_unclosed(20 * s)),
        Case("md-paragraph-12k", ".md", "markdown",
             lambda s: markdown_paragraph(int(12_000 * s))),
        Case("md-line-32k", ".md", "markdown", lambda s: markdown_line(int(32_000 * s))),
        Case("org-long-headings", ".org", "org",
             lambda s: org_long_headings(int(300_000 * s))),
        Case("org-repeated", ".org", "org", lambda s: org_repeated(int(400_000 * s))),
        Case("md-plain-paragraph", ".md", "markdown",
             lambda s: markdown_plain_paragraph(int(80_000 * s))),
        Case("yaml-alias-bomb", ".md", "markdown", lambda s: yaml_alias_bomb()),
    ]


def parse(case: Case, text: str) -> int:
    """Parse ``text`` with the case's parser; returns the number of units."""
    if case.parser == "org":
        from cairn.formats.org import parse as org_parse

        return len(org_parse(text, "big" + case.suffix).units)
    from cairn.formats.markdown import parse as md_parse

    return len(md_parse(text, "big" + case.suffix).units)


def timed(case: Case, scale: float) -> tuple[float, float, float, int]:
    """``(MB, wall seconds, CPU seconds, units)`` of one parse of the case at ``scale``."""
    text = case.make(scale)
    mb = len(text.encode("utf-8")) / 1e6
    start, cpu = time.perf_counter(), time.process_time()
    units = parse(case, text)
    return mb, time.perf_counter() - start, time.process_time() - cpu, units


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns a process exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--ratios", action="store_true")
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args(argv)
    chosen = [c for c in cases() if not args.only or c.name in args.only]
    if args.write is not None:
        args.write.mkdir(parents=True, exist_ok=True)
        for case in chosen:
            path = args.write / (case.name + case.suffix)
            path.write_text(case.make(args.scale), encoding="utf-8")
            print(path)
        return 0
    print(f"{'case':<20} {'MB':>8} {'seconds':>8} {'CPU s':>8} {'MB/s':>7} {'units':>8}")
    for case in chosen:
        mb, sec, cpu, units = timed(case, args.scale)
        print(
            f"{case.name:<20} {mb:8.2f} {sec:8.2f} {cpu:8.2f} {mb / sec:7.2f} {units:8d}",
            flush=True,
        )
        if args.ratios:  # CPU time: the machine may be shared
            base = args.scale / 4
            t = [timed(case, base * k)[2] for k in (1, 2, 4)]
            print(
                f"{'':<20} CPU 1x {t[0]:.2f} s, 2x/1x {t[1] / t[0]:.2f}, 4x/1x {t[2] / t[0]:.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
