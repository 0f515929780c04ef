"""The simulation's methods other than RATED itself: static retrievers and the reliability baselines.

Every policy reads a precomputed ``CandidateLists`` (the same lists for every adaptive baseline, so a
difference between them is the adaptation mechanism alone), drops tools that are not yet in the
catalog and keeps the first ``k`` that are. Every adaptive baseline learns from what the simulator
reports for its ``feedback`` kind: by default only whether its call executed. Defining behaviours,
each checked by a test:

- ``StaticRetriever``: always the retriever's top present tool; never learns (BM25, TF-IDF, dense).
- ``HealthCheckBlacklist``: excludes a tool forever after its first errored call (a health check sees
  that the tool is down, not whether it was the right tool); a recovered or flaky tool never returns.
- ``Retry``: up to k candidates in one step, in rank order, the next one only after an execution
  error; a call that executes ends the step, right tool or not. No memory across steps.
- ``BatchUpdate`` (ToolRL-like): per-tool weights added to the retrieval score, updated only every B
  steps from that batch's rewards, so within a batch it repeats the same mistakes.
- ``GlobalDUCB``: one discounted UCB arm per tool, shared by all queries (no query context), each arm
  discounted when it is updated, fused with the retrieval score and the metadata prior like RATED.
- ``SlidingWindowUCB``: one context-free UCB arm per tool over its last W calls (SW-UCB).
- ``OnlineEmbeddingUpdate``: no bandit; the chosen tool's embedding moves toward the query after a
  working call and away after an error (the online form of outcome-aware tool embeddings).
- ``FullLinUCB``: discounted LinUCB with the full design matrix (D-LinUCB) on a random projection of
  the query embedding, to price RATED's diagonal approximation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from rated.evaluation.candidates import CandidateLists
from rated.evaluation.simulator import Feedback
from rated.fusion import fuse_unchecked
from rated.kernels import full_linucb_scores, full_linucb_update

PAPER_WEIGHTS = (0.75, 0.15, 0.10)


class RankedPolicy:
    """Base: rank the query's candidates, pick the best present one; subclasses change the ranking.

    Args:
        candidates: each query's candidate tools, best first (may be deeper than ``k``, so that tools
            absent before their arrival can be skipped without leaving fewer than ``k``).
        name: the row label.
        k: candidates a policy considers per step (default: all of the list).
        feedback: ``execution`` (default) or ``task`` (the labelled upper bound).
    """

    name = "ranked"
    max_attempts = 1
    feedback: Feedback = "execution"

    def __init__(
        self,
        candidates: CandidateLists,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        self.candidates = candidates
        if name:
            self.name = name
        self.k = candidates.k if k is None else min(int(k), candidates.k)
        self.feedback = feedback
        self._arrival: np.ndarray | None = None

    def reset(self, arrival: np.ndarray) -> None:
        # a catalog without late arrivals skips the per-step presence check entirely
        self._arrival = arrival if arrival.any() else None

    def present_positions(self, step: int, query: int) -> np.ndarray:
        """Positions in the query's candidate list of the first ``k`` tools present at ``step``."""
        idx = self.candidates.idx[query]
        if self._arrival is None:
            return np.arange(min(self.k, idx.size))
        pos = np.flatnonzero(self._arrival[idx] <= step)[: self.k]
        return pos if pos.size else np.zeros(0, dtype=np.int64)

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray | None:
        """Scores to re-rank the present candidates by (``None`` keeps the retriever's order)."""
        return None

    def order(self, step: int, query: int) -> np.ndarray:
        """Candidate tools of the query, best first (present ones only; may be empty)."""
        pos = self.present_positions(step, query)
        idx, sem = self.candidates.idx[query][pos], self.candidates.sem[query][pos]
        scores = self.rescore(query, idx, sem)
        return idx if scores is None else idx[np.argsort(-scores, kind="stable")]

    def select(self, step: int, query: int) -> int | None:
        order = self.order(step, query)
        return int(order[0]) if order.size else int(self.candidates.idx[query][0])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        return None


class StaticRetriever(RankedPolicy):
    """A retriever's top-1 with no feedback at all (BM25, TF-IDF, pretrained dense, plug-ins)."""


class HealthCheckBlacklist(RankedPolicy):
    """Top-1 among tools that never errored; a tool that errors once is excluded for good."""

    name = "HealthCheckBlacklist"

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self.blacklist: set[int] = set()

    def select(self, step: int, query: int) -> int | None:
        order = self.order(step, query)
        for tool in order:
            if int(tool) not in self.blacklist:
                return int(tool)
        return super().select(step, query)  # every candidate is blacklisted: the call has to go somewhere

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        if error:
            self.blacklist.add(tool)


class Retry(RankedPolicy):
    """Call the top candidate; after an execution error, the next one; at most ``k`` calls per step.

    A call that executes ends the step, whether or not the tool was the right one (an agent sees only
    that the call worked). FSR counts every call. Nothing is remembered from one step to the next, so
    a dead top-1 tool is called again on every step that ranks it first.
    """

    name = "Retry"

    def __init__(
        self, candidates: CandidateLists, k: int = 3, name: str | None = None, depth: int | None = None
    ) -> None:
        super().__init__(candidates, name, depth)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.max_attempts = k
        self._step, self._tries, self._done = -1, 0, False

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self._step, self._tries, self._done = -1, 0, False

    def select(self, step: int, query: int) -> int | None:
        if step != self._step:
            self._step, self._tries, self._done = step, 0, False
        if self._done:
            return None
        order = self.order(step, query)
        if self._tries >= order.size:
            return None if self._tries else super().select(step, query)
        return int(order[self._tries])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self._tries += 1  # the only state, and it is reset at the next step
        self._done = not error


class BatchUpdate(RankedPolicy):
    """ToolRL-like delayed learning: score = retrieval score + w[tool]; w changes only every ``batch`` steps.

    At the end of a batch, each tool called in it moves by ``lr`` x (its mean reward in the batch -
    the batch's mean reward), a REINFORCE-style update with the batch mean as baseline.
    """

    name = "BatchUpdate"

    def __init__(
        self,
        candidates: CandidateLists,
        n_tools: int,
        batch: int = 500,
        lr: float = 0.5,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        super().__init__(candidates, name, k, feedback)
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.n_tools, self.batch, self.lr = n_tools, batch, lr
        self.reset(np.zeros(n_tools, dtype=np.int64))

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self.weights = np.zeros(self.n_tools)
        self._calls = np.zeros(self.n_tools)
        self._rewards = np.zeros(self.n_tools)
        self.updates = 0

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray:
        return sem + self.weights[idx]

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self._calls[tool] += 1
        self._rewards[tool] += float(success)
        if (step + 1) % self.batch == 0:
            called = self._calls > 0
            baseline = self._rewards.sum() / self._calls.sum()
            self.weights[called] += self.lr * (self._rewards[called] / self._calls[called] - baseline)
            self._calls[:] = 0
            self._rewards[:] = 0
            self.updates += 1


class _WarmablePolicy(RankedPolicy):
    """A learning baseline whose state after a labelled warm-up is what every run starts from.

    The warm-up is replayed with the run's catalog (tools absent at step 0 are never selected, so no
    state is held for a tool before its arrival) and cached per catalog.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._warm: tuple[CandidateLists, list[frozenset[int]]] | None = None
        self._warm_cache: dict[bytes, object] = {}

    def clear(self) -> None:
        """The empty state (no evidence)."""
        raise NotImplementedError

    def snapshot(self) -> object:
        raise NotImplementedError

    def restore(self, state: object) -> None:
        raise NotImplementedError

    def warm_up(self, candidates: CandidateLists, relevant: list[frozenset[int]]) -> None:
        """Learn from warm-up pairs (``candidates`` row i has true tools ``relevant[i]``), every tool
        healthy, reward = the chosen tool is a true tool (labelled, like the paper's warm-up)."""
        self._warm = (candidates, list(relevant))
        self._warm_cache.clear()

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        key = (arrival > 0).tobytes()
        if key not in self._warm_cache:
            self.clear()
            if self._warm is not None:
                saved = self.candidates
                self.candidates = self._warm[0]
                for q, rel in enumerate(self._warm[1]):
                    tool = self.select(0, q)
                    if tool is not None:
                        self.observe(0, q, tool, tool in rel, False)
                self.candidates = saved
            self._warm_cache[key] = self.snapshot()
        self.restore(self._warm_cache[key])


class GlobalDUCB(_WarmablePolicy):
    """Discounted UCB per tool, shared by every query, fused like RATED: w1*cos + w2*ucb + w3*prior.

    The classic non-contextual baseline (Garivier & Moulines' discounted UCB, bonus
    alpha * sqrt(log(total) / n_i), an untried arm scores 1), with the discount applied to an arm when
    that arm is updated (as RATED's bandits do), so its memory is ~1 / (1 - gamma) calls *of that
    tool*, not of the whole catalog. Named apart from ``rated.global_mab.GlobalMAB``, RATED's own
    "w/ Global MAB" ablation, which starts each arm from the prior as pseudo-evidence.

    Args:
        prior: the metadata prior of every tool (``tools.parquet``'s ``prior``).
        weights: fusion weights (w1, w2, w3), the paper's by default.
        gamma: discount per update of an arm (its own setting, default 0.95).
        alpha: width of the exploration bonus.
    """

    name = "Global D-UCB"

    def __init__(
        self,
        candidates: CandidateLists,
        prior: np.ndarray,
        weights: tuple[float, float, float] = PAPER_WEIGHTS,
        gamma: float = 0.95,
        alpha: float = 0.5,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        if not 0.0 < gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {gamma}")
        self.prior = np.asarray(prior, dtype=np.float64)
        self.weights, self.gamma, self.alpha = tuple(weights), gamma, alpha
        super().__init__(candidates, name, k, feedback)
        self.clear()

    def clear(self) -> None:
        self.n = np.zeros(self.prior.size)
        self.s = np.zeros(self.prior.size)

    def snapshot(self) -> object:
        return self.n.copy(), self.s.copy()

    def restore(self, state: object) -> None:
        n, s = state  # type: ignore[misc]
        self.n, self.s = n.copy(), s.copy()

    def ucb(self, idx: np.ndarray) -> np.ndarray:
        """Mean reward + bonus, clipped to [0, 1]; an untried arm gets the optimistic 1."""
        n = self.n[idx]
        mean = np.divide(self.s[idx], n, out=np.full(idx.size, 0.5), where=n > 0)
        bonus = self.alpha * np.sqrt(np.log(max(self.n.sum(), 1.0) + 1.0) / np.maximum(n, 1e-9))
        return np.clip(np.where(n > 0, mean + bonus, 1.0), 0.0, 1.0)

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray:
        return fuse_unchecked(sem, self.ucb(idx), self.prior[idx], self.weights)

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.n[tool] = self.gamma * self.n[tool] + 1.0
        self.s[tool] = self.gamma * self.s[tool] + float(success)


class SlidingWindowUCB(_WarmablePolicy):
    """SW-UCB per tool (Garivier & Moulines 2011): the mean and count over each tool's last ``window``
    calls, context-free, fused like RATED. An arm never called scores 1 (optimistic)."""

    name = "SW-UCB"

    def __init__(
        self,
        candidates: CandidateLists,
        prior: np.ndarray,
        window: int = 50,
        weights: tuple[float, float, float] = PAPER_WEIGHTS,
        alpha: float = 0.5,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.prior = np.asarray(prior, dtype=np.float64)
        self.window, self.weights, self.alpha = window, tuple(weights), alpha
        super().__init__(candidates, name, k, feedback)
        self.clear()

    def clear(self) -> None:
        self.history: dict[int, deque[float]] = {}
        self.calls = 0

    def snapshot(self) -> object:
        return {t: deque(h, maxlen=self.window) for t, h in self.history.items()}, self.calls

    def restore(self, state: object) -> None:
        hist, calls = state  # type: ignore[misc]
        self.history = {t: deque(h, maxlen=self.window) for t, h in hist.items()}
        self.calls = calls

    def ucb(self, idx: np.ndarray) -> np.ndarray:
        out = np.ones(idx.size)
        log_t = np.log(min(self.calls, self.window * max(len(self.history), 1)) + 1.0)
        for k, tool in enumerate(idx.tolist()):
            h = self.history.get(tool)
            if h:
                out[k] = min(1.0, sum(h) / len(h) + self.alpha * np.sqrt(log_t / len(h)))
        return out

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray:
        return fuse_unchecked(sem, self.ucb(idx), self.prior[idx], self.weights)

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.history.setdefault(tool, deque(maxlen=self.window)).append(float(success))
        self.calls += 1


class OnlineEmbeddingUpdate(_WarmablePolicy):
    """No bandit: the index itself learns. After a call, the chosen tool's embedding moves by ``lr``
    toward the query's embedding (call executed) or away from it (error), then is re-normalized;
    candidates are re-ranked by the updated dot product (the online form of OATS, arXiv 2603.13426,
    and of the online embedding optimisation of arXiv 2509.20415).

    Args:
        query_emb: the pool's query embeddings [n_queries, d] (``candidates`` rows).
        tool_emb: the tool embeddings [n_tools, d] the candidates came from.
        lr: step size.
    """

    name = "Online embedding update"

    def __init__(
        self,
        candidates: CandidateLists,
        query_emb: np.ndarray,
        tool_emb: np.ndarray,
        lr: float = 0.1,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        if not lr >= 0:
            raise ValueError(f"lr must be >= 0, got {lr}")
        self.query_emb = np.asarray(query_emb, dtype=np.float64)
        self.base = np.asarray(tool_emb, dtype=np.float64)
        self.lr = lr
        self._queries = self.query_emb
        super().__init__(candidates, name, k, feedback)
        self.clear()

    def clear(self) -> None:
        self.moved: dict[int, np.ndarray] = {}

    def snapshot(self) -> object:
        return {t: v.copy() for t, v in self.moved.items()}

    def restore(self, state: object) -> None:
        self.moved = {t: v.copy() for t, v in state.items()}  # type: ignore[attr-defined]

    def warm_up(self, candidates: CandidateLists, relevant: list[frozenset[int]], query_emb=None) -> None:  # type: ignore[override]
        """As ``_WarmablePolicy.warm_up``; ``query_emb`` are the warm-up queries' embeddings."""
        super().warm_up(candidates, relevant)
        self._warm_queries = None if query_emb is None else np.asarray(query_emb, dtype=np.float64)

    def reset(self, arrival: np.ndarray) -> None:
        warm = getattr(self, "_warm_queries", None)
        self._queries = warm if warm is not None else self.query_emb
        super().reset(arrival)
        self._queries = self.query_emb

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray:
        if not self.moved:
            return sem
        q = self._queries[query]
        return np.array(
            [
                float(self.moved[t] @ q) if t in self.moved else s
                for t, s in zip(idx.tolist(), sem, strict=True)
            ]
        )

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        e = self.moved.get(tool, self.base[tool])
        e = e + (self.lr if success else -self.lr) * self._queries[query]
        self.moved[tool] = e / max(np.linalg.norm(e), 1e-12)


class FullLinUCB(_WarmablePolicy):
    """D-LinUCB (Russac, Vernade & Cappe 2019) per tool with the full design matrix, on a seeded random
    projection of the query embedding to ``dim`` coordinates (plus a constant), fused like RATED.

    ``V <- gamma V + x x^T + (1 - gamma) lam I``, ``b <- gamma b + r x`` on the chosen tool only;
    score ``theta . x + alpha sqrt(x^T V^-1 x)``, ``theta = V^-1 b``, cold start from the prior as in
    ``rated.bandit``. O(dim^2) per candidate, O(dim^3) per update: what RATED's diagonal avoids.
    """

    name = "D-LinUCB (full matrix)"

    def __init__(
        self,
        candidates: CandidateLists,
        query_emb: np.ndarray,
        prior: np.ndarray,
        dim: int = 32,
        weights: tuple[float, float, float] = PAPER_WEIGHTS,
        alpha: float = 0.1,
        gamma: float = 0.95,
        lam: float = 1.0,
        seed: int = 0,
        name: str | None = None,
        k: int | None = None,
        feedback: Feedback = "execution",
    ) -> None:
        q = np.asarray(query_emb, dtype=np.float64)
        rng = np.random.default_rng([seed, 0xD11])
        self.projection = rng.normal(size=(q.shape[1], dim)) / np.sqrt(dim)
        self.prior = np.asarray(prior, dtype=np.float64)
        self.dim, self.weights, self.alpha, self.gamma, self.lam = dim + 1, tuple(weights), alpha, gamma, lam
        self.contexts = self.context(q)
        self._ctx = self.contexts
        super().__init__(candidates, name, k, feedback)
        self.clear()

    def context(self, emb: np.ndarray) -> np.ndarray:
        """Projected, L2-normalized query embeddings with the constant coordinate, scaled to unit norm."""
        z = np.asarray(emb, dtype=np.float64) @ self.projection
        z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
        return np.hstack([z, np.ones((z.shape[0], 1))]) / np.sqrt(2.0)

    def clear(self) -> None:
        # Per-tool state in slots of stacked arrays (a slot on a tool's first update) that the compiled
        # kernels of rated.kernels read and update in place.
        self.slot = np.full(self.prior.size, -1, dtype=np.int64)
        self.V, self.Vinv = np.empty((0, self.dim, self.dim)), np.empty((0, self.dim, self.dim))
        self.b, self.theta = np.empty((0, self.dim)), np.empty((0, self.dim))
        self.used = 0

    def snapshot(self) -> object:
        n = self.used
        return self.slot.copy(), n, *(a[:n].copy() for a in (self.V, self.Vinv, self.b, self.theta))

    def restore(self, state: object) -> None:
        slot, n, *arrays = state  # type: ignore[misc]
        self.slot, self.used = slot.copy(), n
        self.V, self.Vinv, self.b, self.theta = (a.copy() for a in arrays)

    def _cold(self, tool: int) -> tuple[np.ndarray, np.ndarray]:
        b = np.zeros(self.dim)
        b[-1] = self.lam * self.prior[tool] * np.sqrt(2.0)  # theta0 . x = prior for every context
        return self.lam * np.eye(self.dim), b

    def ucb(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        out = np.empty(idx.size)
        if full_linucb_scores(
            idx, x, self.slot, self.Vinv, self.theta, self.prior, self.alpha, self.lam, out
        ):
            raise IndexError(f"a candidate tool index is outside 0..{self.slot.size - 1}: {idx.tolist()}")
        return out

    def rescore(self, query: int, idx: np.ndarray, sem: np.ndarray) -> np.ndarray:
        return fuse_unchecked(sem, self.ucb(idx, self._ctx[query]), self.prior[idx], self.weights)

    def warm_up(self, candidates: CandidateLists, relevant: list[frozenset[int]], query_emb=None) -> None:  # type: ignore[override]
        super().warm_up(candidates, relevant)
        self._warm_ctx = None if query_emb is None else self.context(query_emb)

    def reset(self, arrival: np.ndarray) -> None:
        warm = getattr(self, "_warm_ctx", None)
        self._ctx = warm if warm is not None else self.contexts
        super().reset(arrival)
        self._ctx = self.contexts

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.update(tool, self._ctx[query], float(success))

    def update(self, tool: int, x: np.ndarray, reward: float) -> None:
        """One discounted update of ``tool`` for context ``x`` (from ``context``)."""
        s = int(self.slot[tool])
        if s < 0:
            s = self._new_slot(tool)
            self.V[s], self.b[s] = self._cold(tool)
        reg = (1.0 - self.gamma) * self.lam
        full_linucb_update(s, x, reward, self.V, self.b, self.Vinv, self.theta, self.gamma, reg)

    def _new_slot(self, tool: int) -> int:
        if self.used == len(self.V):  # grow by doubling: amortized O(1) per new tool
            grow = max(16, len(self.V))
            self.V, self.Vinv = (
                np.concatenate([a, np.empty((grow, self.dim, self.dim))]) for a in (self.V, self.Vinv)
            )
            self.b, self.theta = (
                np.concatenate([a, np.empty((grow, self.dim))]) for a in (self.b, self.theta)
            )
        self.slot[tool] = self.used
        self.used += 1
        return self.used - 1


def static_policies(
    scores: dict[str, np.ndarray], k: int, depth: int | None = None
) -> dict[str, StaticRetriever]:
    """One static top-1 policy per score matrix ([n_queries, n_tools]), candidates cut at ``depth``."""
    return {
        name: StaticRetriever(CandidateLists.from_scores(s, depth or k), name, k)
        for name, s in scores.items()
    }


__all__: Sequence[str] = (
    "BatchUpdate",
    "FullLinUCB",
    "GlobalDUCB",
    "HealthCheckBlacklist",
    "OnlineEmbeddingUpdate",
    "RankedPolicy",
    "Retry",
    "SlidingWindowUCB",
    "StaticRetriever",
    "static_policies",
)
