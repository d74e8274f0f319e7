"""The fast profile's own model: ``cairn embed --train-static`` on a real index, with
the real teacher (the int8 MiniLM shipped in package data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.embed.profile import fast_embed, fast_model_folder
from cairn.embed.static import StaticEmbedder
from cairn.ingest.static_training import DEFAULT_SAMPLE
from cairn.interfaces.cli import app as cli

TOPICS = [
    ("compost", "Turn the compost heap weekly; greens and browns keep it warm and sweet."),
    ("sourdough", "Feed the sourdough starter flour and water; bake when it doubles."),
    ("bicycle", "Oil the bicycle chain and check the brake pads before a long ride."),
    ("tomatoes", "Tomatoes want full sun, deep watering and a stake for support."),
    ("backups", "Keep three copies of your data on two media, one of them offsite."),
    ("python", "A Python virtual environment isolates the packages of one project."),
]


def make_vault(root: Path, n: int = 36) -> Path:
    """``n`` Markdown notes, one heading each, on six topics."""
    vault = root / "vault"
    vault.mkdir()
    for i in range(n):
        title, body = TOPICS[i % len(TOPICS)]
        (vault / f"{title}-{i}.md").write_text(
            f"# {title.title()} note {i}\n\n{body} Entry {i} of the {title} log.\n",
            encoding="utf-8",
        )
    return vault


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout


def setup(tmp_path: Path, provider: str) -> tuple[Path, Path]:
    vault = make_vault(tmp_path)
    conf = tmp_path / "cairn.toml"
    conf.write_text(f'[embed]\nprovider = "{provider}"\n', encoding="utf-8")
    db = tmp_path / "i.db"
    code, _ = run("--db", str(db), "--config", str(conf), "index", str(vault), "--json")
    assert code == 0
    return db, conf


@pytest.mark.slow
@pytest.mark.embed
def test_train_static_makes_the_index_use_its_own_model(tmp_path: Path) -> None:
    db, conf = setup(tmp_path, "fast")
    with Cairn(load_config(db=str(db), config_file=conf)) as before:
        shipped = before.semantic.embedder
        assert isinstance(shipped, StaticEmbedder) and shipped.origin != "folder"
    code, text = run(
        "--db", str(db), "--config", str(conf), "embed", "--train-static", "--sample", "30",
        "--json",
    )
    assert code == 0, text
    res = json.loads(text)
    folder = fast_model_folder(load_config(db=str(db), config_file=conf))
    assert res["folder"] == str(folder) and folder == tmp_path / "i.db.models" / "fast"
    assert {p.name for p in folder.iterdir()} == {
        "model.safetensors", "tokenizer.json", "config.json", "fusion.json"
    }
    assert res["chunks"] == 36 and res["sample"] == 30 and res["teacher_embedded"] == 30
    assert res["active"] is True and res["notices"] == []
    trained = StaticEmbedder(folder=folder)
    assert res["embedding"]["space"] == trained.fingerprint != shipped.fingerprint
    assert res["embedding"]["embedded"] == 36 and res["embedding"]["pending"] == 0
    assert json.loads((folder / "config.json").read_text())["cairn_training"]["sample"] == 30

    # a new process loads the trained model, and its vectors answer a hybrid search
    with Cairn(load_config(db=str(db), config_file=conf)) as after:
        emb = after.semantic.embedder
        assert isinstance(emb, StaticEmbedder) and emb.path == folder
        hits = after.search("sourdough starter", mode="semantic", limit=3).hits
        assert hits and all("sourdough" in h.path for h in hits)
        assert after.embedding.waiting_units() == 0

    # training again reuses the stored teacher vectors and replaces the folder
    code, text = run(
        "--db", str(db), "--config", str(conf), "embed", "--train-static", "--sample", "30",
        "--json",
    )
    assert code == 0 and json.loads(text)["teacher_embedded"] == 0
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
@pytest.mark.embed
def test_train_static_with_another_provider_only_writes_the_model(tmp_path: Path) -> None:
    db, conf = setup(tmp_path, "static")
    code, text = run("--db", str(db), "--config", str(conf), "embed", "--train-static",
                     "--sample", "25")
    assert code == 0, text
    assert "trained" in text and 'provider = "fast"' in text
    with Cairn(load_config(db=str(db), config_file=conf)) as c:
        emb = c.semantic.embedder
        assert isinstance(emb, StaticEmbedder) and emb.origin != "folder"  # unchanged
    assert (fast_model_folder(load_config(db=str(db), config_file=conf))
            / "model.safetensors").is_file()


@pytest.mark.embed
def test_train_static_errors_are_clear(tmp_path: Path) -> None:
    db, conf = setup(tmp_path, "fast")
    code, text = run("--db", str(db), "--config", str(conf), "embed", "--train-static",
                     "--sample", "5", "--json")
    assert code == 2 and "at least 20" in json.loads(text)["error"]
    small = tmp_path / "small"
    small.mkdir()
    (small / "one.md").write_text("# One\n\nA single short note.\n", encoding="utf-8")
    db2 = tmp_path / "s.db"
    assert run("--db", str(db2), "--config", str(conf), "index", str(small))[0] == 0
    code, text = run("--db", str(db2), "--config", str(conf), "embed", "--train-static",
                     "--json")
    assert code == 2 and "needs at least 20" in json.loads(text)["error"]
    assert not (tmp_path / "s.db.models").exists()


def test_cli_default_sample_is_the_app_default() -> None:
    import inspect

    from cairn.interfaces.cli.index import embed

    assert inspect.signature(embed).parameters["sample"].default == DEFAULT_SAMPLE


def test_batch_pooling_equals_the_mean_of_each_text() -> None:
    from cairn.embed.train import _mixing, _pool

    rng = np.random.default_rng(5)
    e = rng.standard_normal((50, 6)).astype(np.float32)
    w = rng.random(50).astype(np.float32)
    parts = [rng.integers(0, 50, rng.integers(1, 12)) for _ in range(40)]
    want = np.stack([(w[p][:, None] * e[p]).mean(axis=0) for p in parts])
    assert np.allclose(_pool(parts, e, w), want, atol=1e-5)
    mix, uniq = _mixing(parts)
    assert mix.shape == (40, len(uniq)) and np.allclose(mix.sum(axis=1), 1.0)


def test_pca_keeps_the_principal_subspace() -> None:
    from cairn.embed.train import pca_reduce

    rng = np.random.default_rng(6)
    x = (rng.standard_normal((500, 10)) @ rng.standard_normal((10, 10))).astype(np.float32)
    got = pca_reduce(x, 4).astype(np.float64)
    c = x.astype(np.float64) - x.mean(axis=0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    want = c @ vt[:4].T
    assert np.allclose(np.abs(got), np.abs(want), atol=1e-3)  # axes up to their sign


@pytest.mark.embed
@pytest.mark.parametrize("dims", [4, 500])
def test_bad_dims_are_refused(tmp_path: Path, dims: int) -> None:
    from cairn.ingest.static_training import TrainingError

    db, conf = setup(tmp_path, "fast")
    with Cairn(load_config(db=str(db), config_file=conf)) as c, pytest.raises(
        TrainingError, match="dims"
    ):
        c.training.train(30, dims=dims)


# --- one model folder per PostgreSQL database ------------------------------------------
def _pg(tmp_path: Path, url: str) -> Config:
    conf = tmp_path / "cairn.toml"
    backups = tmp_path / "data" / "backups"
    conf.write_text(
        f'[embed]\nprovider = "fast"\n[writeback]\nbackup_dir = "{backups}"\n', encoding="utf-8"
    )
    return load_config(db=url, config_file=conf, env={})


def test_each_postgresql_database_has_its_own_model_folder(tmp_path: Path) -> None:
    a = fast_model_folder(_pg(tmp_path, "postgresql://cairn:s3cret@db.example:5432/notes"))
    b = fast_model_folder(_pg(tmp_path, "postgresql://cairn:s3cret@db.example:5432/work"))
    c = fast_model_folder(_pg(tmp_path, "postgresql://cairn@other.example/notes"))
    assert len({a, b, c}) == 3
    assert a.parent.parent == tmp_path / "data" / "models" and a.name == "fast"
    assert a.parent.name.startswith("pg-notes-") and b.parent.name.startswith("pg-work-")
    # the password is no part of the key, and never in the path
    same = fast_model_folder(_pg(tmp_path, "postgres://cairn:other@DB.example:5432/notes"))
    assert same == a and "s3cret" not in str(a)
    # a SQLite index keeps its folder beside the file
    db = tmp_path / "i.db"
    assert fast_model_folder(load_config(db=db, env={})) == tmp_path / "i.db.models" / "fast"


def test_a_model_trained_in_the_old_shared_folder_is_still_used(tmp_path: Path) -> None:
    config = _pg(tmp_path, "postgresql://cairn@db.example/notes")
    legacy = tmp_path / "data" / "models" / "fast"
    legacy.mkdir(parents=True)
    (legacy / "model.safetensors").write_bytes(b"")
    assert fast_embed(config)["model"] == str(legacy)
    own = fast_model_folder(config)
    own.mkdir(parents=True)
    (own / "model.safetensors").write_bytes(b"")
    assert fast_embed(config)["model"] == str(own)  # this database's own model wins
