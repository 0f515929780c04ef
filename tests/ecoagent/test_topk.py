"""The one top-k: best first, ties to the lower column, the same whatever the chunking."""

import numpy as np
import pytest

from ecoagent.topk import top_k, top_k_dot


def test_known_matrix_best_first_and_ties_to_the_lower_column() -> None:
    scores = np.array([[0.1, 0.9, 0.5, 0.9], [0.3, 0.3, 0.3, 0.0]])
    idx, top = top_k(scores, 3)
    assert idx.tolist() == [[1, 3, 2], [0, 1, 2]]
    assert top.tolist() == [[0.9, 0.9, 0.5], [0.3, 0.3, 0.3]]
    assert idx.dtype == np.int64 and top.dtype == scores.dtype


def test_equals_a_stable_full_sort_on_a_matrix_full_of_ties() -> None:
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(50, 40)).astype(np.float32)  # every row has many equal scores
    for k in (1, 7, 40, 100):
        idx, top = top_k(scores, k)
        expected = np.argsort(-scores, axis=1, kind="stable")[:, : min(k, 40)]
        np.testing.assert_array_equal(idx, expected)
        np.testing.assert_array_equal(top, np.take_along_axis(scores, expected, axis=1))


def test_dot_product_in_chunks_equals_one_block() -> None:
    rng = np.random.default_rng(1)
    # small integers: every dot product is exact in float32, so equal documents tie exactly whatever the
    # BLAS blocking of each chunk (with real-valued rows the last bits may differ between chunk sizes)
    q = rng.integers(-3, 4, size=(37, 8)).astype(np.float32)
    d = np.repeat(rng.integers(-3, 4, size=(10, 8)).astype(np.float32), 3, axis=0)  # each row 3 times: ties
    whole = top_k_dot(q, d, 5, chunk=1000)
    for chunk in (1, 4, 36):
        parts = top_k_dot(q, d, 5, chunk=chunk)
        np.testing.assert_array_equal(parts[0], whole[0])
        np.testing.assert_array_equal(parts[1], whole[1])
    np.testing.assert_array_equal(whole[0][:, 0] % 3, 0)  # of three equal documents, the first wins
    assert whole[1].dtype == np.float32


def test_edges() -> None:
    assert top_k_dot(np.zeros((0, 4)), np.ones((3, 4)), 2)[0].shape == (0, 2)
    assert top_k(np.zeros((2, 0)), 3)[0].shape == (2, 0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        top_k(np.ones((2, 2)), 0)
    with pytest.raises(ValueError, match="2-d"):
        top_k(np.ones(3), 1)
