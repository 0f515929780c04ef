"""Profiles resolve to model names; the packaged models load offline and embed."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from ecoagent import models
from ecoagent.config import MINILM, PROFILES, get_profile
from ecoagent.models import canonical, encoder_provenance, load_encoder, remembered_sha256, resolve_encoder


def test_profiles_and_overrides() -> None:
    assert get_profile("paper").models.recall_encoder == "thenlper/gte-large"
    prof = get_profile("embedded").replace(llm="google/gemma-3-1b-it", seed=7)
    assert prof.models.llm == "google/gemma-3-1b-it" and prof.seed == 7
    assert PROFILES["embedded"].models.llm != prof.models.llm  # the registry is not mutated
    with pytest.raises(ValueError, match="unknown profile 'gpu'"):
        get_profile("gpu")


def test_packaged_minilm_resolves_to_a_local_folder_and_embeds() -> None:
    assert canonical("all-MiniLM-L6-v2") == MINILM
    path = resolve_encoder("all-MiniLM-L6-v2")
    assert path != MINILM and path.endswith("model")
    assert encoder_provenance(MINILM)["weights"] == "packaged"
    model = load_encoder(MINILM)
    emb = model.encode(["send a slack message", "post a note to a slack channel", "weather in Paris"])
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    assert emb.shape == (3, 384)
    # a real model puts the two Slack requests closer to each other than to the weather one
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.2


def test_unknown_names_pass_through_for_the_hub() -> None:
    assert resolve_encoder("thenlper/gte-large") == "thenlper/gte-large"
    assert encoder_provenance("thenlper/gte-large")["weights"] == "hub"


def _hash_in_a_fresh_process(cache: str, path: str) -> str:
    import os

    os.environ["ECOAGENT_CACHE"] = cache
    return remembered_sha256([Path(path)])[0]


def test_hashes_are_remembered_across_processes_and_by_file_state(tmp_path: Path, monkeypatch) -> None:
    """A second process reads the digest back instead of hashing again; a rewritten file is hashed
    again; several processes writing the sidecar at once leave valid JSON and no temp files behind."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ECOAGENT_CACHE", str(cache))
    monkeypatch.setattr(models, "_known_sha256", {})
    files = []
    for i in range(6):
        f = tmp_path / f"w{i}.bin"
        f.write_bytes(bytes([i]) * (1000 + i))
        files.append(f)
    truth = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        got = pool.starmap(_hash_in_a_fresh_process, [(str(cache), str(f)) for f in files])
    assert got == truth
    assert isinstance(json.loads((cache / "sha256.json").read_text()), dict)
    assert [p.name for p in cache.iterdir()] == ["sha256.json"]

    assert remembered_sha256(files[:1]) == truth[:1]
    remembered = json.loads((cache / "sha256.json").read_text())
    key = next(k for k in remembered if k.startswith(str(files[0].resolve()) + ":"))
    remembered[key] = "0" * 64  # a remembered digest is used, not recomputed, while the file is unchanged
    (cache / "sha256.json").write_text(json.dumps(remembered))
    monkeypatch.setattr(models, "_known_sha256", {})
    assert remembered_sha256(files[:1]) == ["0" * 64]
    files[0].write_bytes(b"new weights")
    assert remembered_sha256(files[:1]) == [hashlib.sha256(b"new weights").hexdigest()]
    # the next write drops what no longer holds: the old state of files[0] and a removed file
    files[1].unlink()
    remembered_sha256(files[2:])
    remembered_sha256([tmp_path / "w0.bin"])
    extra = tmp_path / "extra.bin"
    extra.write_bytes(b"x")
    remembered_sha256([extra])
    paths = [k.rsplit(":", 2)[0] for k in json.loads((cache / "sha256.json").read_text())]
    assert str(files[1].resolve()) not in paths and paths.count(str(files[0].resolve())) == 1
