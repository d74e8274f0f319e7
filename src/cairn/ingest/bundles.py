"""OKF bundles inside a root: which bundle holds a file, and bundle-relative links."""

from __future__ import annotations

import dataclasses

from cairn.model import MARKDOWN_LINK, Document, Link


def bundle_of(relpath: str, bundles: list[str]) -> str | None:
    """The bundle folder holding a Markdown file, or ``None``."""
    if not relpath.lower().endswith(".md"):
        return None
    for b in bundles:
        if not b or relpath.startswith(b + "/"):
            return b
    return None


def rebase_bundle(doc: Document, relpath: str, bundle: str) -> Document:
    """Give a document parsed with its bundle path its root path, and make its bundle
    links root-absolute (``/bundle/tables/x.md``) so they resolve exactly."""
    prefix = f"/{bundle}/" if bundle else "/"

    def fix(link: Link) -> Link:
        t = link.target
        if link.kind != MARKDOWN_LINK or not t or t.startswith(("/", "../")) or "://" in t:
            return link
        return dataclasses.replace(link, target=prefix + t)

    units = tuple(dataclasses.replace(u, links=tuple(fix(ln) for ln in u.links)) for u in doc.units)
    return dataclasses.replace(doc, path=relpath, units=units)
