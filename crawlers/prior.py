"""The metadata prior: a static per-tool reliability guess from how well the metadata hangs together.

prior = 0.5 * consistency + 0.3 * source weight + 0.2 * documentation quality, where consistency is the
SBERT cosine of the name the source gives the tool and its description (negatives clipped to 0), the
source weight trusts official lists over framework catalogs over workflow nodes over community lists,
and documentation quality is a logistic centred at the catalog's median length, so that short or empty
descriptions and tag strings score low and long ones high.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ecoagent.embeddings import BATCH_SIZE

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ecoagent.embeddings import EmbeddingCache

DEFAULT_SOURCE_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("official", 1.0),
    ("langchain", 0.9),
    ("crewai", 0.9),
    ("llamaindex", 0.9),
    ("n8n", 0.8),
)


@dataclass(frozen=True)
class PriorWeights:
    """Weights of the metadata prior (the paper's values by default).

    Args:
        consistency, source, doc_quality: the three parts' weights; they must sum to 1.
        description, tags: the weights of description length and tag-string length in doc quality.
        source_weights: (platform, weight) pairs; ``other_source`` for platforms not listed (community
            MCP servers); ``official`` is the weight of a tool on an official list.
        doc_centre: the length, in medians, where doc quality is 0.5 (1.0: at the median).
        doc_steepness: the logistic's slope per median of length.
    """

    consistency: float = 0.5
    source: float = 0.3
    doc_quality: float = 0.2
    description: float = 0.6
    tags: float = 0.4
    source_weights: tuple[tuple[str, float], ...] = field(default=DEFAULT_SOURCE_WEIGHTS)
    other_source: float = 0.6
    doc_centre: float = 1.0
    doc_steepness: float = 2.0

    def __post_init__(self) -> None:
        names = (
            "consistency",
            "source",
            "doc_quality",
            "description",
            "tags",
            "other_source",
            "doc_steepness",
        )
        for name in names:
            if getattr(self, name) < 0:
                raise ValueError(f"prior weight {name} must be >= 0, got {getattr(self, name)}")
        if not math.isclose(self.consistency + self.source + self.doc_quality, 1.0):
            raise ValueError("prior weights consistency + source + doc_quality must sum to 1")
        if not math.isclose(self.description + self.tags, 1.0):
            raise ValueError("doc-quality weights description + tags must sum to 1")

    def weight_of(self, platform: str) -> float:
        return dict(self.source_weights).get(platform, self.other_source)


def logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def median_normalized(lengths: np.ndarray) -> np.ndarray:
    """Lengths divided by their median (a median of 0 counts as 1, so empty catalogs stay finite)."""
    median = float(np.median(lengths)) if lengths.size else 1.0
    return lengths / max(median, 1.0)


def doc_quality(descriptions: Sequence[str], tag_strings: Sequence[str], weights: PriorWeights) -> np.ndarray:
    """0.6 * logistic(k (len(desc) / median - c)) + 0.4 * the same for the tag string (k=2, c=1).

    Centred at the median, so a median-length field scores 0.5, an empty one logistic(-2) = 0.12 and one
    twice the median logistic(2) = 0.88: short, empty-ish docs score low, as the paper intends.
    """

    def score(lengths: list[int]) -> np.ndarray:
        x = median_normalized(np.array(lengths, dtype=float))
        return logistic(weights.doc_steepness * (x - weights.doc_centre))

    d = score([len(s) for s in descriptions])
    t = score([len(s) for s in tag_strings])
    return weights.description * d + weights.tags * t


def consistency(
    names: Sequence[str],
    descriptions: Sequence[str],
    encoder: SentenceTransformer,
    batch_size: int | None = None,
    cache: EmbeddingCache | None = None,
) -> np.ndarray:
    """cosine(SBERT(name), SBERT(description)), negatives clipped to 0.

    Each distinct text is encoded once (n8n repeats short operation descriptions across nodes), and
    only texts missing from ``cache`` are encoded at all.
    """
    if len(names) != len(descriptions):
        raise ValueError(f"{len(names)} names but {len(descriptions)} descriptions")
    if not names:
        return np.zeros(0)
    texts = list(dict.fromkeys([*names, *descriptions]))
    if cache is not None:
        emb = cache.encode(texts, encoder, batch_size=batch_size)
    else:
        emb = encoder.encode(
            texts,
            batch_size=batch_size or BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    row = {t: i for i, t in enumerate(texts)}
    a = emb[[row[n] for n in names]]
    b = emb[[row[d] for d in descriptions]]
    return np.clip(np.sum(a * b, axis=1).astype(float), 0.0, 1.0)


def metadata_prior(
    consistency_scores: np.ndarray, platforms: Sequence[str], quality: np.ndarray, weights: PriorWeights
) -> tuple[np.ndarray, np.ndarray]:
    """(source weights, prior) for each tool."""
    source = np.array([weights.weight_of(p) for p in platforms], dtype=float)
    prior = weights.consistency * consistency_scores + weights.source * source + weights.doc_quality * quality
    return source, prior
