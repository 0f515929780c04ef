"""DualEncoder: two separate towers behind a Router, normalized output, save/load round trip."""

from __future__ import annotations

import numpy as np
import pytest

from ecoagent.config import MINILM
from rated.encoder import DualEncoder, pooling_for


def test_towers_are_separate_copies(dual_encoder: DualEncoder) -> None:
    router = dual_encoder.model[0]
    query, document = router.sub_modules["query"], router.sub_modules["document"]
    q_params = {id(p) for p in query.parameters()}
    assert q_params and q_params.isdisjoint(id(p) for p in document.parameters())


def test_embeddings_are_unit_float32_and_routed(dual_encoder: DualEncoder) -> None:
    texts = ["convert a pdf file to plain text", "Gmail: Send and read email messages"]
    q = dual_encoder.encode_queries(texts)
    t = dual_encoder.encode_tools(texts)
    assert q.dtype == np.float32 and q.shape == (2, dual_encoder.dim) == t.shape
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=1e-5)
    # both towers start as the same backbone, so before fine-tuning they agree
    np.testing.assert_allclose(q, t, atol=1e-5)
    # and the dot product ranks the matching tool first
    tools = dual_encoder.encode_tools(
        ["Gmail: Send and read email messages", "PDF reader: extract text from PDFs"]
    )
    assert int(np.argmax(tools @ dual_encoder.encode_queries(["read text out of a pdf"])[0])) == 1


def test_save_load_round_trip(tmp_path, dual_encoder: DualEncoder) -> None:
    dual_encoder.save(tmp_path / "m")
    loaded = DualEncoder.load(tmp_path / "m").freeze()
    texts = ["search the web for news"]
    np.testing.assert_allclose(loaded.encode_queries(texts), dual_encoder.encode_queries(texts), atol=1e-6)
    assert loaded.dim == dual_encoder.dim == 384
    assert not any(p.requires_grad for p in loaded.model.parameters())


def test_load_refuses_a_folder_without_a_model(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="modules.json"):
        DualEncoder.load(tmp_path)


def test_pooling_follows_the_backbone() -> None:
    assert pooling_for("facebook/dragon-plus-query-encoder") == "cls"
    assert pooling_for("facebook/dragon-plus-context-encoder") == "cls"
    assert pooling_for("all-MiniLM-L6-v2") is None  # keep the folder's own (mean)
    assert pooling_for("all-MiniLM-L6-v2", "cls") == "cls"


def test_an_untrained_tower_reads_the_crawl_encoder_vectors(tmp_path, monkeypatch) -> None:
    """The packaged MiniLM as a tool tower computes what ``embed`` computes, so it shares its cache key."""
    from ecoagent.embeddings import embed, static_encoder_key

    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    docs = ["Gmail: Send and read email messages", "PDF reader: extract text from PDFs (tags: pdf)"]
    backbone = DualEncoder.from_backbones(MINILM).freeze()
    assert backbone.tools_key == static_encoder_key(MINILM)
    np.testing.assert_allclose(backbone._encode_documents(docs, 16), embed(MINILM, docs), atol=1e-6)
    # now served from the cache the crawl filled: the model is never called
    monkeypatch.setattr(backbone, "_encode_documents", _refuse)
    np.testing.assert_allclose(backbone.encode_tools(docs), embed(MINILM, docs), atol=0)


def test_a_saved_tower_is_cached_by_its_weights(tmp_path, monkeypatch, dual_encoder: DualEncoder) -> None:
    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path / "cache"))
    dual_encoder.save(tmp_path / "m")
    loaded = DualEncoder.load(tmp_path / "m").freeze()
    docs = ["search the web for news", "Slack: post a message to a channel"]
    first = loaded.encode_tools(docs)
    np.testing.assert_allclose(first, dual_encoder._encode_documents(docs, 16), atol=1e-6)
    # files the train stage writes beside the model do not change the tower's identity
    (tmp_path / "m" / "metrics.json").write_text("{}")
    again = DualEncoder.load(tmp_path / "m").freeze()
    assert again.tools_key == loaded.tools_key
    monkeypatch.setattr(again, "_encode_documents", _refuse)
    np.testing.assert_array_equal(again.encode_tools(docs), first)
    # other tool-tower weights are another key
    weights = next((tmp_path / "m").glob("document_0_*/model.safetensors"))
    weights.write_bytes(weights.read_bytes()[:-1] + b"\0")
    from rated.encoder import saved_key

    assert saved_key(tmp_path / "m") != loaded.tools_key


def test_a_tool_tower_recorded_as_its_backbone_reads_the_crawls_vectors(tmp_path, monkeypatch) -> None:
    """The train stage's frozen tool tower: saved, reloaded, it keeps the backbone's key while its files
    are the recorded ones, so the catalog is never encoded again; changed files fall back to their own."""
    from ecoagent.embeddings import embed, static_encoder_key
    from rated.encoder import BACKBONE_TOWER_FILE, record_backbone_tower, saved_key

    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path / "cache"))
    docs = ["Gmail: Send and read email messages", "PDF reader: extract text from PDFs (tags: pdf)"]
    crawl = embed(MINILM, docs)  # fills the shared cache under the packaged encoder's key
    backbone = DualEncoder.from_backbones(MINILM).freeze()
    backbone.save(tmp_path / "m")
    untagged = saved_key(tmp_path / "m")
    assert untagged.startswith("dual-encoder-tools|")
    record_backbone_tower(tmp_path / "m", backbone.tools_key)
    loaded = DualEncoder.load(tmp_path / "m").freeze()
    assert loaded.tools_key == static_encoder_key(MINILM)
    monkeypatch.setattr(loaded, "_encode_documents", _refuse)
    np.testing.assert_array_equal(loaded.encode_tools(docs), crawl)
    # the saved tower computes those vectors itself too
    np.testing.assert_allclose(DualEncoder.load(tmp_path / "m")._encode_documents(docs, 16), crawl, atol=1e-5)
    # a tower whose files changed after the record is not the backbone any more
    weights = next((tmp_path / "m").glob("document_0_*/model.safetensors"))
    weights.write_bytes(weights.read_bytes()[:-1] + b"\0")
    assert saved_key(tmp_path / "m").startswith("dual-encoder-tools|")
    assert saved_key(tmp_path / "m") != untagged
    (tmp_path / "m" / BACKBONE_TOWER_FILE).write_text("[1, 2")
    with pytest.raises(ValueError, match=BACKBONE_TOWER_FILE):
        saved_key(tmp_path / "m")


def test_a_tower_that_takes_gradients_is_never_served_from_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    training = DualEncoder.from_backbones(MINILM)  # not frozen
    assert training.tools_key is not None and not training.frozen
    calls = []
    real = training._encode_documents
    monkeypatch.setattr(training, "_encode_documents", lambda d, b: calls.append(d) or real(d, b))
    training.encode_tools(["a tool"])
    training.encode_tools(["a tool"])
    assert len(calls) == 2


def _refuse(*_: object) -> np.ndarray:
    raise AssertionError("encoded again instead of reading the cache")
