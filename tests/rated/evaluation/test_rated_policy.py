"""The RATED adapter ranks exactly like ``RATED.rank_embedding`` and every run restarts from warm-up."""

from __future__ import annotations

import numpy as np
import pytest

from rated.config import RATEDConfig, Variant
from rated.evaluation.failures import FailureSchedule
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.simulator import QueryPool, Stream, simulate

retriever = pytest.importorskip("rated.retriever")
index_mod = pytest.importorskip("rated.index")


def _model(variant: Variant = Variant.FULL, n_tools: int = 30, dim: int = 32) -> object:
    """Tools are one-hot embeddings, so a query's dot products are exactly its mixing weights."""
    emb = np.eye(n_tools, dim, dtype=np.float32)
    index = index_mod.ToolIndex(dim, [f"t{i}" for i in range(n_tools)], emb)
    return retriever.RATED(None, index, np.full(n_tools, 0.5), RATEDConfig(variant=variant, top_k=5))


def _queries(model: object, n: int = 6) -> tuple[np.ndarray, QueryPool]:
    # each query is a noisy copy of one tool's embedding, and that tool is its true tool
    rng = np.random.default_rng(1)
    emb = model.index.embeddings[:n] + 0.05 * rng.normal(size=(n, model.index.dim)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    pool = QueryPool(
        [f"q{i}" for i in range(n)], [frozenset({i}) for i in range(n)], [str(i) for i in range(n)]
    )
    return emb.astype(np.float32), pool


def test_select_matches_rank_embedding() -> None:
    model = _model()
    emb, _ = _queries(model)
    policy = RatedPolicy(model, emb, "RATED")
    policy.reset(np.zeros(30, dtype=np.int64))
    for q in range(len(emb)):
        assert policy.select(0, q) == int(model.rank_embedding(emb[q])[0][0])


def test_runs_restart_from_the_warm_state_and_repeat() -> None:
    model = _model()
    emb, pool = _queries(model)
    policy = RatedPolicy(model, emb, "RATED")
    stats = policy.warm_up(emb, pool.relevant)
    assert stats["pairs"] == len(pool)
    stream = Stream.sample(pool, 400, seed=0)
    schedule = FailureSchedule.outage(30, np.array([0, 1]), onset=100)
    first = simulate(policy, stream, schedule).success
    second = simulate(policy, stream, schedule).success
    assert np.array_equal(first, second)


def test_full_adapts_where_no_feedback_cannot() -> None:
    model = _model()
    emb, pool = _queries(model)
    # queries 0 and 1 get a second true tool (6, 7) ranked lower; tools 0 and 1 die
    pool = QueryPool(pool.queries, [frozenset({0, 6}), frozenset({1, 7})] + pool.relevant[2:], pool.query_ids)
    # q0 sits between tools 0 and 6 (nearer 0), q1 between 1 and 7: the backup is second in the top-K,
    # by a cosine gap (0.05) that the bandit term (w2 = 0.15 against w1 = 0.75) can overturn
    for q, backup in ((0, 6), (1, 7)):
        mix = 0.7245 * model.index.embeddings[q] + 0.6745 * model.index.embeddings[backup]
        emb[q] = mix
        assert model.rank_embedding(emb[q])[0][:2].tolist() == [q, backup]
    stream = Stream(pool, np.tile([0, 1], 300), seed=0)
    schedule = FailureSchedule.outage(30, np.array([0, 1]), onset=50)
    full = simulate(RatedPolicy(model, emb, "full"), stream, schedule)
    frozen = simulate(RatedPolicy(_model(Variant.NO_FEEDBACK), emb, "nofb"), stream, schedule)
    assert frozen.success[50:].mean() == 0.0
    assert full.success[-200:].mean() > 0.9


def test_batched_warm_up_equals_the_library_warm_up() -> None:
    ours, theirs = _model(), _model()
    emb, pool = _queries(ours)
    rng = np.random.default_rng(2)
    emb = emb + 1.5 * rng.normal(size=emb.shape).astype(np.float32)  # some picks wrong, some right
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    pick = rng.integers(0, len(pool), size=200)
    stats = RatedPolicy(ours, emb, "RATED").warm_up(emb[pick], [pool.relevant[i] for i in pick])
    expected = theirs.warm_up([(emb[i], sorted(pool.relevant[i])) for i in pick])
    assert 20 < stats["successes"] < 180 and stats["successes"] == expected["successes"]
    a, b = ours.bandits.state_dict(), theirs.bandits.state_dict()
    assert (
        np.array_equal(a["arms"], b["arms"]) and np.allclose(a["A"], b["A"]) and np.allclose(a["b"], b["b"])
    )


def test_arrivals_merge_into_the_top_k_as_a_full_rescoring_would() -> None:
    """Tools that join mid-run update each query's top-K exactly as rescoring the whole index does,
    ties included (a copy of an old tool joins behind it)."""
    from ecoagent.topk import top_k_dot

    model = _model(n_tools=12)
    rng = np.random.default_rng(3)
    queries = rng.normal(size=(40, model.index.dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    queries[:5] = model.index.embeddings[:5]  # exact ties once the copies arrive
    policy = RatedPolicy(model, queries, "RATED")
    arrivals = [
        model.index.embeddings[:5].copy(),  # copies of tools 0-4: equal scores, higher rows
        np.eye(3, model.index.dim, 20, dtype=np.float32),
        (rng.normal(size=(4, model.index.dim)) / 5).astype(np.float32),
    ]
    for batch in arrivals:
        start = len(policy.live.index)
        policy.live.index.add([f"new{start + i}" for i in range(len(batch))], batch)
        policy._merge_arrivals(start)
        idx, sem = top_k_dot(queries, policy.live.index.embeddings, policy.k)
        np.testing.assert_array_equal(policy._idx, idx)
        np.testing.assert_allclose(policy._sem, sem, atol=1e-6)
    assert policy._idx[0, :2].tolist() == [0, 12]  # the old tool before its copy


@pytest.mark.parametrize("absent_share", [0.1, 0.5, 0.95])
def test_warm_up_lists_of_a_smaller_catalog_equal_a_search_of_it(absent_share: float) -> None:
    """A run with late arrivals warms up on the step-0 tools; their lists, read off the catalog-wide deep
    lists, equal a search of those tools alone, ties included (when most tools are absent, many pairs
    have fewer than K present in their deep list and are searched again)."""
    from ecoagent.topk import top_k_dot

    rng = np.random.default_rng(4)
    n_tools, dim = 80, 16
    tools = rng.normal(size=(n_tools, dim)).astype(np.float32)
    tools[40:60] = tools[:20]  # exact ties between a tool and its copy at a higher row
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    index = index_mod.ToolIndex(dim, [f"t{i}" for i in range(n_tools)], tools)
    model = retriever.RATED(None, index, np.full(n_tools, 0.5), RATEDConfig(top_k=5))
    emb = rng.normal(size=(300, dim)).astype(np.float32)
    emb[:30] = tools[:30]
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    policy = RatedPolicy(model, emb, "RATED")
    policy.warm_up(emb, [frozenset({i % n_tools}) for i in range(len(emb))])
    present = np.sort(rng.choice(n_tools, size=int(n_tools * (1 - absent_share)), replace=False))
    local = np.full(n_tools, -1, dtype=np.int64)
    local[present] = np.arange(present.size)
    idx, sem = policy._warm_candidates(present, local)
    want_idx, want_sem = top_k_dot(emb, tools[present], 5)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(sem, want_sem, atol=1e-6)
