"""Training against a frozen tool tower's vectors: the same loss as running the tower, at a fraction."""

from __future__ import annotations

import numpy as np
import pytest

from ecoagent.config import MINILM
from ecoagent.schemas import tool_documents


@pytest.fixture(scope="module")
def encoder():
    from rated.encoder import DualEncoder

    return DualEncoder.from_backbones(MINILM, max_seq_length=64)


def _features(model, texts: list[str], task: str) -> dict:
    features = model.tokenize(texts, task=task)
    features["task"] = task
    return features


def test_the_loss_equals_the_plain_loss_when_the_vectors_are_the_towers_own(small_tools, encoder) -> None:
    """On one real batch (4 queries, their tools, 4 negatives) both losses agree to float precision, and
    a wrong matrix (the rows shuffled) gives another loss: the vectors are what it scores."""
    import torch
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from rated.frozen_tower import FrozenToolsLoss, document_rows

    model = encoder.model
    docs = tool_documents(small_tools.head(8))
    anchors = [f"I need {d.split(':')[0]} for my project" for d in docs[:4]]
    positives, negatives = docs[:4], docs[4:8]
    batch = [
        _features(model, anchors, "query"),
        _features(model, positives, "document"),
        _features(model, negatives, "document"),
    ]
    distinct, rows = document_rows([positives, negatives])
    assert len(distinct) == 8 and rows[0] == [distinct.index(positives[0]), distinct.index(negatives[0])]
    vectors = encoder._encode_documents(distinct, 8)
    labels = torch.tensor(rows)
    model.eval()  # no dropout: the two forwards of the query tower must see the same network
    with torch.no_grad():
        plain = MultipleNegativesRankingLoss(model, scale=20.0)(batch, labels)
        frozen = FrozenToolsLoss(model, vectors, scale=20.0)(batch, labels)
        shuffled = FrozenToolsLoss(model, vectors[::-1].copy(), scale=20.0)(batch, labels)
    assert float(plain) > 0
    assert abs(float(frozen) - float(plain)) < 1e-4
    assert abs(float(shuffled) - float(plain)) > 0.1


def test_only_the_query_column_runs_through_the_model(small_tools, encoder) -> None:
    """The loss's gradient reaches the query route and no document is encoded (the tower is never run)."""
    import torch

    from rated.frozen_tower import FrozenToolsLoss, document_rows

    model = encoder.model
    docs = tool_documents(small_tools.head(6))
    anchors = ["send an email", "read a pdf", "search the web"]
    distinct, rows = document_rows([docs[:3], docs[3:6]])
    calls: list[str] = []
    hook = model[0].sub_modules["document"][0].register_forward_hook(lambda *a: calls.append("document"))
    try:
        batch = [_features(model, anchors, "query"), {}, {}]
        loss = FrozenToolsLoss(model, encoder._encode_documents(distinct, 8), scale=20.0)
        calls.clear()
        value = loss(batch, torch.tensor(rows))
        value.backward()
    finally:
        hook.remove()
    assert calls == []
    grads = [p.grad for p in model[0].sub_modules["query"].parameters() if p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)
    model.zero_grad()


def test_the_evaluator_scores_with_the_given_corpus_vectors(small_tools, encoder) -> None:
    """The same MRR as the plain evaluator when the vectors are the tower's; a mismatched length is named."""
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    from rated.frozen_tower import FrozenCorpusEvaluator

    tools = small_tools.head(12)
    docs = dict(zip(tools["tool_id"].to_list(), tool_documents(tools), strict=True))
    ids = list(docs)
    queries = {f"q{k}": docs[t].split(":")[0] for k, t in enumerate(ids[:5])}
    relevant = {f"q{k}": {t} for k, t in enumerate(ids[:5])}
    kwargs = dict(queries=queries, corpus=docs, relevant_docs=relevant, mrr_at_k=[10], write_csv=False)
    encoder.model.eval()
    plain = InformationRetrievalEvaluator(name="p", **kwargs)(encoder.model)
    vectors = encoder._encode_documents([docs[t] for t in ids], 8)
    frozen = FrozenCorpusEvaluator(vectors, name="p", **kwargs)(encoder.model)
    assert np.isclose(frozen["p_cosine_mrr@10"], plain["p_cosine_mrr@10"], atol=1e-6)
    with pytest.raises(ValueError, match="11 corpus vectors for a corpus of 12"):
        FrozenCorpusEvaluator(vectors[:11], name="p", **kwargs)
