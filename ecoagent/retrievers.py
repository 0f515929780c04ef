"""Baseline retrievers: TF-IDF, BM25 and pretrained (not fine-tuned) dense encoders (Table 1; Real's recall).

Each scores every tool for every query at once ([n_queries, n_tools]); the same matrix gives the offline
rankings and, through ``CandidateLists.from_scores``, the static policies of the simulation. Tools are
embedded as ``ecoagent.schemas.tool_document`` like everywhere else in the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Retriever(Protocol):
    """Fit on tool documents once; score query batches against all of them."""

    name: str

    def fit(self, documents: Sequence[str]) -> Retriever: ...

    def scores(self, queries: Sequence[str]) -> np.ndarray: ...


class TfidfRetriever:
    """scikit-learn TF-IDF (word unigrams + bigrams, sublinear tf) with cosine similarity."""

    name = "TF-IDF"

    def fit(self, documents: Sequence[str]) -> TfidfRetriever:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, stop_words="english")
        self.matrix = self.vectorizer.fit_transform(list(documents))
        return self

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        q = self.vectorizer.transform(list(queries))
        return np.asarray((q @ self.matrix.T).todense(), dtype=np.float64)  # rows are L2-normalized


class BM25Retriever:
    """bm25s's Okapi BM25 (k1 = 1.5, b = 0.75, English stopwords)."""

    name = "BM25"

    def fit(self, documents: Sequence[str]) -> BM25Retriever:
        import bm25s

        self.n_docs = len(documents)
        self.model = bm25s.BM25()
        self.model.index(
            bm25s.tokenize(list(documents), stopwords="en", show_progress=False), show_progress=False
        )
        return self

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        import bm25s

        tokens = bm25s.tokenize(list(queries), stopwords="en", return_ids=False, show_progress=False)
        out = np.zeros((len(queries), self.n_docs), dtype=np.float64)
        for i, toks in enumerate(tokens):
            if toks:
                out[i] = self.model.get_scores(toks)
        return out


class DenseRetriever:
    """A pretrained sentence-transformers encoder, cosine similarity (loaded through ``load_encoder``).

    Documents and queries both go through the shared embedding cache (``ecoagent.embeddings``), so they
    are encoded in the same precision as everywhere else, and whatever an earlier stage embedded with the
    same encoder is read back: the Real stage's recall has embedded the catalog, Syn's second yield encoder
    its queries. all-mpnet-base-v2 over the catalog takes minutes on 2 cores; scoring the test queries
    took 27.0 s of the evaluate stage when they bypassed the cache (in float32) and 9.4 s through it (Intel
    Xeon VM, bench/RESULTS.md, "Table 1's mpnet queries through the embedding cache").

    Args:
        model_name: hub name or packaged alias.
        batch_size: texts per encoder call (default: the embedding cache's own).
    """

    def __init__(self, model_name: str, batch_size: int | None = None) -> None:
        self.model_name = model_name
        self.name = model_name.split("/")[-1]
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from ecoagent.embeddings import embed

        if not texts:
            return np.zeros((0, self.tool_emb.shape[1]), dtype=np.float32)
        return embed(self.model_name, list(texts), batch_size=self.batch_size)

    def fit(self, documents: Sequence[str]) -> DenseRetriever:
        from ecoagent.embeddings import embed

        self.tool_emb = embed(self.model_name, documents, batch_size=self.batch_size)
        return self

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        return (self.encode(queries) @ self.tool_emb.T).astype(np.float64)
