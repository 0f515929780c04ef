"""MinHash LSH dedup against exact all-pairs Jaccard, on real ToolBench queries and short texts."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import xxhash
from datasketch import MinHash

from generators.dedup import (
    MinHashConfig,
    MinHashDeduper,
    exact_duplicate_pairs,
    jaccard,
    shingles,
    within_group_similarity,
)


def test_signatures_equal_datasketch_minhash(toolbench_queries: list[str]) -> None:
    deduper = MinHashDeduper()
    texts = toolbench_queries[:20] + ["find flights"]
    sigs = deduper.signatures([shingles(t) for t in texts])
    for text, sig in zip(texts, sigs, strict=True):
        m = MinHash(num_perm=128, seed=1, hashfunc=xxhash.xxh32_intdigest)
        m.update_batch([g.encode() for g in shingles(text)])
        assert np.array_equal(m.hashvalues, sig)


def test_short_texts_get_enough_shingles() -> None:
    assert len(shingles("Find cheap flights to Rome")) == 9  # 5 unigrams + 4 bigrams
    a, b = shingles("find cheap flights to rome"), shingles("find cheap flights to rome please")
    assert jaccard(a, b) > 0.7


def test_lsh_matches_exact_jaccard(
    toolbench_queries: list[str], perturb: Callable[[str, random.Random, int], str]
) -> None:
    rng = random.Random(0)
    base = toolbench_queries[:150] + [
        " ".join(t.split()[: rng.randint(5, 9)]) for t in toolbench_queries[150:300]
    ]
    texts = base + [perturb(t, rng, rng.randint(0, 6)) for t in base]
    exact = set(exact_duplicate_pairs(texts, 0.7))
    found = set(MinHashDeduper().duplicate_pairs(texts))
    assert len(exact) > 100  # the sample really holds near-duplicates
    assert found <= exact  # precision 1.0: every reported pair is verified
    assert len(found & exact) / len(exact) >= 0.99


def test_keep_mask_drops_later_copies_only() -> None:
    texts = [
        "convert my quarterly report pdf into plain text",
        "convert my quarterly report pdf into plain text please",
        "what will the weather be in Oslo tomorrow",
        "convert my quarterly report pdf into plain text",
    ]
    keep, pairs = MinHashDeduper(MinHashConfig(threshold=0.7)).keep_mask(texts)
    assert keep.tolist() == [True, False, True, False]
    assert pairs == [(0, 1), (0, 3)]  # (kept, dropped)


def test_keep_mask_equals_greedy_over_exact_pairs(
    toolbench_queries: list[str], perturb: Callable[[str, random.Random, int], str]
) -> None:
    rng = random.Random(1)
    texts = [perturb(rng.choice(toolbench_queries[:200]), rng, rng.randint(0, 5)) for _ in range(800)]
    expected = np.ones(len(texts), dtype=bool)
    for i, j in exact_duplicate_pairs(texts, 0.7):  # sorted by i, then j: earlier kept texts decide
        if expected[i]:
            expected[j] = False
    keep, removed = MinHashDeduper().keep_mask(texts)
    assert (~expected).sum() > 50
    assert np.array_equal(keep, expected)
    assert all(keep[i] and not keep[j] and i < j for i, j in removed)


def test_within_group_similarity_is_the_mean_pairwise_jaccard_of_each_group() -> None:
    texts = ["delete lead 1", "delete lead 2", "delete lead 3", "send an email", "lonely query"]
    groups = ["crm", "crm", "crm", "mail", "solo"]
    sim = within_group_similarity(texts, groups)
    # {delete, lead, N, delete lead, lead N}: any two share 3 of 7 shingles
    assert sim == {"crm": 3 / 7}  # the one-query groups have no pairs
    assert within_group_similarity(["a b", "a b"], ["t", "t"]) == {"t": 1.0}
