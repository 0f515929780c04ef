"""ToolIndex: exact top-K by dot product, growth without re-encoding, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from rated.index import ToolIndex


def random_unit(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_search_equals_brute_force() -> None:
    emb = random_unit(500, 16, 0)
    index = ToolIndex(16, [f"t{i}" for i in range(500)], emb)
    for q in random_unit(20, 16, 1):
        idx, sem = index.search(q, k=10)
        expected = np.argsort(-(emb @ q), kind="stable")[:10]
        np.testing.assert_array_equal(idx, expected)
        np.testing.assert_allclose(sem, (emb @ q)[expected], rtol=1e-6)
        assert np.all(np.diff(sem) <= 0)


def test_k_larger_than_the_index() -> None:
    index = ToolIndex(4, ["a", "b"], random_unit(2, 4, 0))
    idx, _ = index.search(random_unit(1, 4, 1)[0], k=10)
    assert sorted(idx.tolist()) == [0, 1]


def test_add_grows_and_new_rows_are_found() -> None:
    index = ToolIndex(8, [f"t{i}" for i in range(10)], random_unit(10, 8, 0))
    new = random_unit(3, 8, 2)
    rows = index.add(["n0", "n1", "n2"], new * 5.0)  # normalized on the way in
    assert rows.tolist() == [10, 11, 12] and len(index) == 13
    idx, sem = index.search(new[1], k=1)
    assert index.ids[int(idx[0])] == "n1" and sem[0] == pytest.approx(1.0, abs=1e-6)
    assert index.position("n2") == 12


def test_errors() -> None:
    index = ToolIndex(2, ["a"], np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="already indexed"):
        index.add(["a"], np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="repeated"):
        index.add(["b", "b"], np.eye(2))
    with pytest.raises(ValueError, match="zeros"):
        index.add(["c"], np.zeros((1, 2)))
    with pytest.raises(ValueError, match="shape"):
        index.search(np.ones(3, dtype=np.float32))
    with pytest.raises(KeyError, match="zzz"):
        index.position("zzz")
