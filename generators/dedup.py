"""Near-duplicate removal of generated queries: MinHash LSH candidates, verified by exact Jaccard.

Shingles: the query's word unigrams plus word bigrams (lower-cased, punctuation dropped). A 5-word
shingle would turn a 5-word query into a single shingle, so any change makes Jaccard 0; unigrams and
bigrams give a 5-word query 9 shingles and a 120-word query about 240, so Jaccard moves smoothly with
the share of changed words at every length the generator keeps. Every LSH candidate is checked by exact
Jaccard on the same shingle sets, so precision is 1.0 by construction; the banding (32 bands x 4 rows)
finds a pair at Jaccard 0.7 with probability 1 - (1 - 0.7^4)^32 > 0.9998.

A text is removed when it duplicates an earlier kept text, within a tool or across tools; the caller
orders texts so that the one kept is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def shingles(text: str) -> frozenset[str]:
    """Word unigrams and bigrams of ``text`` (lower-cased, punctuation dropped)."""
    words = _WORD.findall(text.lower())
    grams = set(words)
    grams.update(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))
    return frozenset(grams)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class MinHashConfig:
    """MinHash LSH settings; ``str()`` names them, so outputs made with other settings are not reused.

    Args:
        threshold: pairs with Jaccard strictly above it are duplicates.
        bands: LSH bands.
        rows: rows per band (``bands * rows`` permutations).
        seed: seed of the permutations.
    """

    threshold: float = 0.7
    bands: int = 32
    rows: int = 4
    seed: int = 1

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError("threshold must be in (0, 1)")
        if self.bands <= 0 or self.rows <= 0:
            raise ValueError("bands and rows must be > 0")

    @property
    def num_perm(self) -> int:
        return self.bands * self.rows

    def __str__(self) -> str:
        return f"minhash-w12-j{self.threshold}-b{self.bands}r{self.rows}-s{self.seed}"


class MinHashDeduper:
    """Find and remove near-duplicate texts (Jaccard > threshold on word 1-2-gram shingles).

    Signatures are datasketch ``MinHash`` signatures (the ``affine32`` scheme, xxh32 shingle hashes,
    datasketch's own permutations), computed for a whole corpus at once: each distinct shingle is
    hashed and permuted once, and a text's signature is the column-wise minimum over its shingles.
    That is what ``MinHash.update_batch`` computes one text at a time (a test checks the two agree),
    at a fraction of the cost. Banding follows ``MinHashLSH(params=(bands, rows))``.

    Example:
        >>> d = MinHashDeduper()
        >>> d.duplicate_pairs(["find cheap flights to rome in may", "find cheap flights to rome in may please"])
        [(0, 1)]
    """

    def __init__(self, config: MinHashConfig | None = None) -> None:
        from datasketch import MinHash

        self.config = config or MinHashConfig()
        template = MinHash(num_perm=self.config.num_perm, seed=self.config.seed, hashfunc=_xxh32)
        if template.scheme != "affine32":
            raise ValueError(
                f"datasketch's default scheme is {template.scheme!r}; this code expects affine32"
            )
        self._a, self._b = (np.asarray(p, dtype=np.uint32) for p in template.permutations)

    def _permuted(self, shingle_list: list[str]) -> np.ndarray:
        """``[n_shingles, num_perm]`` permuted hashes, as datasketch's affine32 scheme defines them."""
        from datasketch.minhash import _fmix

        hv = np.fromiter((_xxh32(g.encode()) for g in shingle_list), dtype=np.uint32, count=len(shingle_list))
        hv = _fmix(hv.reshape(-1, 1), 32)
        return hv * self._a + self._b  # uint32 arithmetic wraps, as in datasketch

    def signatures(self, sets: Sequence[frozenset[str]], chunk: int = 4096) -> np.ndarray:
        """``[n_texts, num_perm]`` MinHash signatures (an empty set gets the all-max signature)."""
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(g, len(vocab)) for g in s] for s in sets]
        table = self._permuted(list(vocab)) if vocab else np.zeros((0, self.config.num_perm), np.uint32)
        out = np.full((len(sets), self.config.num_perm), np.iinfo(np.uint32).max, dtype=np.uint32)
        for start in range(0, len(sets), chunk):
            part = ids[start : start + chunk]
            lengths = np.array([len(p) for p in part])
            nonempty = np.flatnonzero(lengths)
            if not len(nonempty):
                continue
            flat = np.fromiter((i for p in part for i in p), dtype=np.int64, count=int(lengths.sum()))
            offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])[nonempty]
            out[start + nonempty] = np.minimum.reduceat(table[flat], offsets, axis=0)
        return out

    def candidate_pairs(self, sigs: np.ndarray) -> set[tuple[int, int]]:
        """Pairs that share at least one band (what ``MinHashLSH`` would return as candidates)."""
        r = self.config.rows
        pairs: set[tuple[int, int]] = set()
        for band in range(self.config.bands):
            keys = np.ascontiguousarray(sigs[:, band * r : (band + 1) * r]).view(f"V{4 * r}").ravel()
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
            same = sorted_keys[1:] == sorted_keys[:-1]
            if not same.any():
                continue
            # runs of equal keys: only those of length > 1 make candidates (most buckets are singletons)
            starts = np.flatnonzero(np.concatenate([[True], ~same]))
            lengths = np.diff(np.concatenate([starts, [len(keys)]]))
            for start, length in zip(
                starts[lengths > 1].tolist(), lengths[lengths > 1].tolist(), strict=True
            ):
                g = sorted(order[start : start + length].tolist())
                pairs.update((g[x], g[y]) for x in range(len(g)) for y in range(x + 1, len(g)))
        return pairs

    def duplicate_pairs(self, texts: Sequence[str]) -> list[tuple[int, int]]:
        """All pairs ``(i, j)``, ``i < j``, with exact Jaccard > threshold among LSH candidates."""
        sets = [shingles(t) for t in texts]
        candidates = self.candidate_pairs(self.signatures(sets))
        return sorted((i, j) for i, j in candidates if jaccard(sets[i], sets[j]) > self.config.threshold)

    def band_keys(self, sigs: np.ndarray) -> np.ndarray:
        """``[n_texts, bands]`` 64-bit keys, one per band (a collision only adds a verified candidate)."""
        r = self.config.rows
        wide = sigs.astype(np.uint64).reshape(len(sigs), self.config.bands, r)
        keys = np.zeros(wide.shape[:2], dtype=np.uint64)
        for k in range(r):  # FNV-style mixing; uint64 arithmetic wraps
            keys = (keys ^ wide[:, :, k]) * np.uint64(0x100000001B3)
        return keys

    def keep_mask(self, texts: Sequence[str]) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Which texts survive (the first of each duplicate group, in input order), and why the rest not.

        Streams the texts in order through an LSH index of the texts kept so far: a text is dropped when
        a kept text shares a band with it and their exact Jaccard is > threshold, otherwise it joins the
        index. Only kept texts are ever compared, so large clusters of copies cost one check each.

        Returns:
            the boolean keep mask, and ``(kept_index, dropped_index)`` for every dropped text.
        """
        sets = [shingles(t) for t in texts]
        keys = self.band_keys(self.signatures(sets)).tolist()
        buckets: list[dict[int, list[int]]] = [{} for _ in range(self.config.bands)]
        keep = np.ones(len(texts), dtype=bool)
        removed: list[tuple[int, int]] = []
        threshold = self.config.threshold
        for j, row in enumerate(keys):
            checked: set[int] = set()
            match = -1
            for band, key in enumerate(row):
                for i in buckets[band].get(key, ()):
                    if i not in checked:
                        checked.add(i)
                        if jaccard(sets[i], sets[j]) > threshold:
                            match = i
                            break
                if match >= 0:
                    break
            if match >= 0:
                keep[j] = False
                removed.append((match, j))
                continue
            for band, key in enumerate(row):
                buckets[band].setdefault(key, []).append(j)
        return keep, removed


def _xxh32(data: bytes) -> int:
    import xxhash

    return xxhash.xxh32_intdigest(data)


def within_group_similarity(texts: Sequence[str], groups: Sequence[str]) -> dict[str, float]:
    """Mean pairwise Jaccard (the dedup rule's word 1-2-gram shingles) of the texts of each group.

    How alike one tool's kept queries are: the near-duplicate rule only removes pairs above 0.7, so
    templated requests that differ in one value ("Delete a lead with ID 12345.", "... ID 67890.") pass
    it; this says how much of that a build kept. Groups with fewer than two texts are left out.
    """
    by_group: dict[str, list[frozenset[str]]] = {}
    for text, group in zip(texts, groups, strict=True):
        by_group.setdefault(group, []).append(shingles(text))
    out = {}
    for group, sets in by_group.items():
        if len(sets) < 2:
            continue
        pairs = [jaccard(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]
        out[group] = float(np.mean(pairs))
    return out


def exact_duplicate_pairs(texts: Sequence[str], threshold: float = 0.7) -> list[tuple[int, int]]:
    """All pairs with Jaccard > threshold by brute force: the reference the LSH is measured against."""
    sets = [shingles(t) for t in texts]
    return [
        (i, j)
        for i in range(len(sets))
        for j in range(i + 1, len(sets))
        if jaccard(sets[i], sets[j]) > threshold
    ]
