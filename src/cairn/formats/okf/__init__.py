"""Open Knowledge Format (OKF) bundles: concept files, index and log files, validation.

Follows OKF v0.2 (``okf/SPEC.md`` of GoogleCloudPlatform/knowledge-catalog; digest in
``OKF-SPEC.md``) and the layered agent-memory bundle (``OKF-MEMORY.md``).

Parsing (:func:`parse`) — one :class:`cairn.model.Document` per file, ``format="okf"``:

* A *concept* (every ``.md`` except ``index.md``/``log.md``, §3.1) has
  ``type`` = its required ``type`` key (``None`` plus a warning when missing, §4.1), and
  ``metadata`` = every front matter key as written (unknown keys too, §4.1 "Extensions")
  plus ``metadata["concept_id"]`` = the path within the bundle without ``.md`` (§2).
  ``relpath`` is taken as the path within the bundle (register the bundle folder as the
  source root). The first unit has kind ``concept`` (title = ``title`` or the file stem;
  body = ``description`` then the text before the first heading); heading sections
  follow as in Markdown. Derived signals are in ``units[0].extra["okf"]``:
  ``concept_id``, ``status`` (absent ⇒ ``stable``, §5.4), ``trust_tier``
  (``unverified``/``machine-confirmed``/``human-reviewed``, §5.3, a bare ``verified``
  mapping read as a one-element list), ``verified`` (normalised list), ``generated_by``,
  ``generated_at``, ``stale_after`` (ISO, only when it has an explicit offset),
  ``source_ids``.
* Links are standard Markdown links (§6.1). Their ``target`` is normalised to a path
  within the bundle: ``/tables/x.md`` → ``tables/x.md``; ``./x.md`` or ``../y/x.md``
  are resolved against the file's folder. A relative link that leaves the bundle keeps
  its written form (``../docs/a.md``). URLs stay URLs. Wikilinks, inline tags and
  Obsidian comments in the body are not OKF syntax and are read as plain text; a
  wikilink written as a front matter value (``up: "[[Parent]]"``) is a
  :data:`cairn.model.WIKILINK` of the first unit, as Obsidian and the Markdown parser
  read it (an Obsidian vault exported as OKF keeps its property links).
* Typed relations are recorded in ``units[0].extra["relations"]`` as
  ``{"target": <bundle path>, "type": <relation>, "confidence": <float|None>,
  "field": <key>}``: OKF-MEMORY layer-2 ``relations`` (``{target, type, confidence}``),
  the okf-mesh extension ``okfm_relations`` (``{predicate, target}``), and ``sources``
  entries whose ``resource`` is a path to another concept (type ``derived_from``: §5.1
  lineage; a bare ``x/y.md`` resource also lists its bundle-root reading in
  ``"alternatives"``). They are *not* duplicated as :class:`~cairn.model.Link` values; the graph
  layer turns them into typed edges.
* ``index.md`` → type ``okf-index`` and ``log.md`` → type ``okf-log`` (not concepts;
  first unit kind ``preamble``; in a log each ``## YYYY-MM-DD`` section is a unit).
* ``modified`` = ``generated.at``, falling back to the legacy v0.1 ``timestamp`` (§13.1).

Bundle detection (:func:`is_bundle`): a folder is an OKF bundle when its root
``index.md`` declares ``okf_version`` (§12), or — when it holds no ``.obsidian`` folder —
when it has a root ``index.md`` and at least 90 % of its (first 500) non-reserved
``.md`` files carry a non-empty ``type`` key.

Validation (:func:`validate_bundle`) reports, as :class:`cairn.model.Diagnostic` values
whose message starts with a code: errors (``severity="error"``, the §11 conformance
rules) ``E1`` concept without a parseable YAML front matter mapping, ``E2`` missing,
empty or non-string ``type``, ``E3`` ``index.md`` front matter outside the bundle root,
``E4`` a ``log.md`` date heading that is not ``YYYY-MM-DD``; and warnings/info that
never make a bundle non-conformant (§11: missing optional fields, unknown types or
keys, broken links, missing ``index.md`` are never errors): ``W-link`` broken link,
``W-title``/``W-description`` missing, ``W-root-index-keys`` root index front matter
keys other than ``okf_version``, ``W-index-entry``, ``W-generated``, ``W-verified``,
``W-status``, ``W-relation`` (a memory concept's relation to no file), ``W-offset``
timestamp without offset, ``W-source``, ``W-footnote``, ``W-runtime``, ``W-log-order``,
``W-log-summary``, ``W-ext``; info ``I-no-index``,
``I-timestamp`` (v0.1 ``timestamp``), ``I-citations`` (v0.1 ``# Citations``),
``I-version``, ``I-log-frontmatter``.
"""

from __future__ import annotations

from cairn.formats.okf.bundles import find_bundles, is_bundle
from cairn.formats.okf.concepts import (
    RESERVED,
    TRUST_HUMAN,
    TRUST_MACHINE,
    TRUST_UNVERIFIED,
    concept_id,
    is_stale,
    normalise_link_target,
    normalise_verified,
    parse,
    trust_tier,
)
from cairn.formats.okf.validate import validate_bundle

__all__ = [
    "RESERVED",
    "TRUST_HUMAN",
    "TRUST_MACHINE",
    "TRUST_UNVERIFIED",
    "concept_id",
    "find_bundles",
    "is_bundle",
    "is_stale",
    "normalise_link_target",
    "normalise_verified",
    "parse",
    "trust_tier",
    "validate_bundle",
]
