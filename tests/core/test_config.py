"""``cairn.toml`` read once into frozen values; ``types.yaml`` loaded once and handed to
ingest (chunk profiles), search (retriever weights) and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import KEYS, Config, load_config
from cairn.errors import ConfigError


def _toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cairn.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_unknown_section_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    p = _toml(tmp_path, "[serch]\nlimit = 3\n")
    with pytest.raises(ConfigError) as exc:
        load_config(config_file=p, env={})
    msg = str(exc.value)
    assert str(p) in msg and "[serch]" in msg and "'search'" in msg


def test_unknown_key_is_refused_with_the_nearest_key(tmp_path: Path) -> None:
    p = _toml(tmp_path, "[search]\nlimt = 3\n")
    with pytest.raises(ConfigError) as exc:
        load_config(config_file=p, env={})
    assert "'limt'" in str(exc.value) and "'limit'" in str(exc.value)


def test_a_store_path_that_is_not_a_name_and_a_folder_as_config_are_refused(
    tmp_path: Path,
) -> None:
    for bad in ("5", '""', "true"):
        with pytest.raises(ConfigError) as exc:
            load_config(config_file=_toml(tmp_path, f"[store]\npath = {bad}\n"), env={})
        assert "[store] path must be a file name" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file=tmp_path, env={})
    assert str(tmp_path) in str(exc.value) and "a folder, not a config file" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[search]\nlimit = "abc"\n', "[search] limit must be a whole number, not 'abc'"),
        ('[graph]\nhops = "abc"\n', "[graph] hops must be a whole number, not 'abc'"),
        ('[embed]\nbatch_size = "64"\n', "[embed] batch_size must be a whole number, not '64'"),
        ("[dream]\nold_days = 1.5\n", "[dream] old_days must be a whole number, not 1.5"),
        ('[fusion]\nrrf_k = "abc"\n', "[fusion] rrf_k must be a number, not 'abc'"),
        ("[watch]\nrecheck_seconds = true\n", "[watch] recheck_seconds must be a number, not True"),
        ('[search]\nweights = { title = "x" }\n', "[search] weights.title must be a number"),
        ('[graph]\nweights = { related = "x" }\n', "[graph] weights.related must be a number"),
    ],
)
def test_a_value_of_the_wrong_type_names_file_key_type_and_value(
    tmp_path: Path, text: str, says: str
) -> None:
    p = _toml(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file=p, env={})
    assert str(exc.value).startswith(f"{p}: ") and says in str(exc.value)
    assert "invalid literal" not in str(exc.value)


def test_every_known_key_is_accepted(tmp_path: Path) -> None:
    values = {
        "path": '"x.db"', "limit": "5", "weights": "{}", "provider": '"none"',
        "method": '"rrf"', "expand": "false", "hops": "1", "default_profile": '"medium"',
        "profiles": "{}", "origins": "[]",
        "tags_exclude_from_inheritance": "[]", "inherited_property_keys": "[]",
    }
    lines = []
    for section, keys in KEYS.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {values.get(k, '1')}" for k in sorted(keys) if k in values]
    cfg = load_config(config_file=_toml(tmp_path, "\n".join(lines) + "\n"), env={})
    assert cfg.search.limit == 5 and cfg.embed["provider"] == "none"


def test_sections_are_frozen_and_cairn_embed_overrides_the_provider(tmp_path: Path) -> None:
    p = _toml(tmp_path, '[embed]\nprovider = "static"\n[fusion]\nweights = { keyword = 1.0 }\n')
    cfg = load_config(config_file=p, env={"CAIRN_EMBED": "none"})
    assert cfg.embed["provider"] == "none"
    assert load_config(config_file=p, env={}).embed["provider"] == "static"
    with pytest.raises(TypeError):
        cfg.fusion["weights"]["keyword"] = 2.0  # type: ignore[index]


def _vault(root: Path, types_yaml: str | None) -> Path:
    root.mkdir(parents=True)
    body = " ".join(f"Sentence {i} about sourdough starters and rye flour." for i in range(60))
    (root / "long.md").write_text(f"---\ntype: essay\n---\n# Long essay\n\n{body}\n")
    for name, kind in (("a.md", "memo"), ("b.md", "key")):
        (root / name).write_text(
            f"---\ntype: {kind}\n---\n# Compost notes\n\nCompost greens and browns.\n"
        )
    if types_yaml is not None:
        (root / "types.yaml").write_text(types_yaml)
    return root


TYPES = """types:
  essay:
    chunk_profile: {max_tokens: 40, overlap: 4}
  key:
    retriever_weight: 5.0
  memo:
    retriever_weight: 0.2
"""


def test_chunk_profile_from_types_yaml_changes_the_chunks(tmp_path: Path) -> None:
    counts = []
    for name, types in (("plain", None), ("typed", TYPES)):
        root = _vault(tmp_path / name, types)
        with Cairn(Config(db_path=tmp_path / f"{name}.db")) as cairn:
            cairn.index([root])  # no model in tests (CAIRN_EMBED=none): chunks only
            counts.append(cairn.semantic.status()["chunks"])
    plain, typed = counts
    assert typed > plain + 5  # the essay is cut into 40-token chunks, not 160-token ones


@pytest.mark.embed
def test_retriever_weight_from_types_yaml_changes_the_ranking(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    toml = _toml(tmp_path, '[fusion]\nmethod = "linear"\n')
    order = {}
    for name, types in (("plain", None), ("typed", TYPES)):
        root = _vault(tmp_path / name, types)
        cfg = load_config(db=tmp_path / f"{name}.db", config_file=toml, env={})
        with Cairn(cfg, embedder=StaticEmbedder()) as cairn:
            cairn.index([root])
            hits = cairn.search("compost greens", mode="hybrid", limit=2, explain=True).hits
            order[name] = [h.path for h in hits]
            if name == "typed":
                by_path = {h.path: h.explain["summands"]["type_weight"] for h in hits}
                assert by_path["b.md"] > by_path["a.md"]
    assert order["typed"] == ["b.md", "a.md"]


def test_the_index_location_is_read_against_the_known_backends(tmp_path: Path) -> None:
    """``--db``, ``CAIRN_DB_URL`` and ``[store]`` name a backend by its URL scheme or its
    name; nothing here connects to a server."""
    url = "postgresql://ann:hunter2@db.example/notes"
    assert load_config(db=url, env={}).db_url == url
    assert load_config(db="POSTGRES://db.example/notes", env={}).db_url is not None
    assert load_config(db=str(tmp_path / "x.db"), env={"CAIRN_DB_URL": url}).db_url is None
    assert load_config(env={"CAIRN_DB_URL": url}).db_url == url
    with pytest.raises(ConfigError, match="lost a slash"):
        load_config(db="postgresql:/db.example/notes", env={})
    with pytest.raises(ConfigError, match="needs url"):
        load_config(env={"CAIRN_DB_URL": "notes.db"})
    for store, message in (
        ('backend = "mysql"', 'backend must be "sqlite" or "postgres", not \'mysql\''),
        ('backend = "postgres"', 'needs url = "postgresql://user@host/dbname"'),
        ('backend = "postgres"\nurl = "sqlite:///x.db"', "needs url"),
    ):
        p = _toml(tmp_path, f"[store]\n{store}\n")
        with pytest.raises(ConfigError) as exc:
            load_config(config_file=p, env={})
        assert str(p) in str(exc.value) and message in str(exc.value)
    p = _toml(tmp_path, f'[store]\nbackend = "sqlite"\nurl = "{url}"\n')
    assert load_config(config_file=p, env={"CAIRN_DB_URL": url}).db_url is None
