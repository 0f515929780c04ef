"""DualEncoder: two separate towers behind a Router, normalized output, save/load round trip."""

from __future__ import annotations

import numpy as np
import pytest

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
