"""Training against a frozen tool tower: its vectors are computed once, not in every step.

With ``TrainConfig.freeze_tool_tower`` the tool tower is the untrained backbone, so every tool document's
vector is fixed for the whole run. The plain in-batch InfoNCE loss still runs the tower forward over each
batch's positive and negative documents (two long texts per short query: about three quarters of a step's
time on 2 CPU cores); the loss and evaluator here read those vectors from one matrix instead: the
backbone's, through the shared embedding cache, so training ranks queries against exactly the vectors the
held-out comparison and the evaluation rank them against. Only the query column runs through the model.

This module imports sentence-transformers at the top: import it inside the train stage only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

LABEL = "label"  # the trainer's label column: [positive row, negative row] of the frozen matrix per pair


class FrozenToolsLoss(MultipleNegativesRankingLoss):
    """MultipleNegativesRankingLoss whose candidate documents are rows of a fixed matrix.

    The training set keeps its text columns (``anchor``, ``positive``, ``negative``), so the
    no-duplicates batch sampler forms the same batches as for the plain loss, and adds ``label``: the
    rows of each pair's positive (and negative) document in ``tool_vectors``. The softmax, scale and
    in-batch negatives are the parent's (``compute_loss_from_embeddings``); with ``tool_vectors`` equal to
    the tower's own output the loss equals the parent's on the same batch.

    Args:
        model: the dual encoder being trained (its query route is what moves).
        tool_vectors: float32, L2-normalized rows, one per distinct document the dataset names.
        scale: 1 / temperature (20 = tau 0.05).
    """

    def __init__(self, model: Any, tool_vectors: np.ndarray, scale: float) -> None:
        super().__init__(model, scale=scale)
        self.tool_vectors = torch.from_numpy(np.ascontiguousarray(tool_vectors, dtype=np.float32))

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor
    ) -> torch.Tensor:
        anchor = next(iter(sentence_features))
        queries = self.model(anchor)["sentence_embedding"]
        rows = labels.long().reshape(queries.shape[0], -1)
        vectors = self.tool_vectors.to(device=queries.device, dtype=queries.dtype)
        docs = [vectors[rows[:, k]] for k in range(rows.shape[1])]
        return self.compute_loss_from_embeddings([queries, *docs], labels)


class FrozenCorpusEvaluator(InformationRetrievalEvaluator):
    """InformationRetrievalEvaluator whose corpus vectors are given (the frozen tower's), so a validation
    run encodes only its queries.

    Args:
        corpus_vectors: one row per ``corpus`` entry, in the corpus dict's order.
        **kwargs: ``InformationRetrievalEvaluator``'s arguments.
    """

    def __init__(self, corpus_vectors: np.ndarray, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(corpus_vectors) != len(self.corpus):
            raise ValueError(
                f"{len(corpus_vectors)} corpus vectors for a corpus of {len(self.corpus)} documents"
            )
        self.corpus_vectors = torch.from_numpy(np.ascontiguousarray(corpus_vectors, dtype=np.float32))

    def compute_all_metrics(
        self,
        model: Any,
        corpus_model: Any = None,
        corpus_embeddings: torch.Tensor | None = None,
        output_path: str | None = None,
    ) -> dict[str, float]:
        if corpus_embeddings is None:
            corpus_embeddings = self.corpus_vectors
        return super().compute_all_metrics(model, corpus_model, corpus_embeddings, output_path)


def document_rows(columns: Sequence[Sequence[str]]) -> tuple[list[str], list[list[int]]]:
    """The distinct documents of the given text columns (sorted) and, per pair, each column's row in
    that list: the ``label`` column of ``FrozenToolsLoss``."""
    distinct = sorted({doc for column in columns for doc in column})
    row = {doc: k for k, doc in enumerate(distinct)}
    return distinct, [[row[doc] for doc in pair] for pair in zip(*columns, strict=True)]
