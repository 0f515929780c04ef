"""Equivalent tools: the same function offered under another platform's name, never a negative.

Rule (documented in docs/syn.md): two tools on different platforms are equivalent when the cosine of
their tool documents (SBERT) is at least ``min_cosine`` and their names are similar (Jaccard of name
words >= ``min_name_jaccard``, or one name's words contain the other's), or when the cosine alone is at
least ``strong_cosine``. Name words split CamelCase, snake_case and drop generic words ("tool", "api").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

GENERIC = frozenset({"tool", "tools", "api", "node", "run", "toolspec", "spec", "query", "the", "a"})


def name_words(name: str) -> frozenset[str]:
    """Lower-cased words of a tool name, CamelCase and separators split, generic words removed."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    words = {w for w in re.split(r"[^a-zA-Z0-9]+", spaced.lower()) if w}
    return frozenset(words - GENERIC) or frozenset(words)


def names_similar(a: str, b: str, min_jaccard: float) -> bool:
    wa, wb = name_words(a), name_words(b)
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= min_jaccard or wa <= wb or wb <= wa


@dataclass(frozen=True)
class EquivalenceRule:
    """Thresholds of the equivalence rule (see the module docstring)."""

    min_cosine: float = 0.8
    min_name_jaccard: float = 0.5
    strong_cosine: float = 0.95

    def __str__(self) -> str:
        return f"equiv-c{self.min_cosine}-n{self.min_name_jaccard}-s{self.strong_cosine}"


def find_equivalents(
    names: list[str],
    platforms: list[str],
    embeddings: np.ndarray,
    rule: EquivalenceRule | None = None,
    chunk: int = 1024,
) -> dict[int, set[int]]:
    """Map tool index -> indices of its equivalents (symmetric; tools without any are absent).

    Args:
        names: tool names, in the order of ``embeddings``.
        platforms: tool platforms, same order.
        embeddings: L2-normalized tool-document embeddings ``[n, d]``.
    """
    rule = rule or EquivalenceRule()
    emb = np.asarray(embeddings, dtype=np.float32)
    plat = np.asarray(platforms)
    found: dict[int, set[int]] = {}
    for start in range(0, len(names), chunk):
        sims = emb[start : start + chunk] @ emb.T
        rows, cols = np.nonzero(sims >= rule.min_cosine)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if c <= i or plat[i] == plat[c]:
                continue
            if sims[r, c] >= rule.strong_cosine or names_similar(names[i], names[c], rule.min_name_jaccard):
                found.setdefault(i, set()).add(c)
                found.setdefault(c, set()).add(i)
    return found
