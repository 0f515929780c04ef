"""The simulation's methods other than RATED itself: static retrievers and the reliability baselines.

Every policy reads a precomputed ``CandidateLists`` (the same lists for every adaptive baseline, so a
difference between them is the adaptation mechanism alone) and skips tools that are not yet in the
catalog. Defining behaviours, each checked by a test:

- ``StaticRetriever``: always the retriever's top present tool; never learns (BM25, TF-IDF, dense).
- ``HealthCheckBlacklist``: excludes a tool forever after its first errored call (a health check sees
  that the tool is down, not whether it was the right tool); a recovered or flaky tool never returns.
- ``Retry``: up to k candidates in one step, in rank order, the next one after each unsuccessful call;
  no memory across steps.
- ``BatchUpdate`` (ToolRL-like): per-tool weights added to the retrieval score, updated only every B
  steps from that batch's rewards, so within a batch it repeats the same mistakes.
- ``GlobalMAB``: one discounted UCB arm per tool, shared by all queries (no query context), fused
  with the retrieval score and the metadata prior like RATED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rated.evaluation.candidates import CandidateLists


class RankedPolicy:
    """Base: rank the query's candidates, pick the best present one; subclasses change the ranking."""

    name = "ranked"
    max_attempts = 1

    def __init__(self, candidates: CandidateLists, name: str | None = None) -> None:
        self.candidates = candidates
        if name:
            self.name = name
        self._arrival: np.ndarray | None = None

    def reset(self, arrival: np.ndarray) -> None:
        # a catalog without late arrivals skips the per-step presence check entirely
        self._arrival = arrival if arrival.any() else None

    def present(self, step: int, idx: np.ndarray) -> np.ndarray:
        """The candidates of ``idx`` that are in the catalog at ``step``, in the same order."""
        if self._arrival is None:
            return idx
        kept = idx[self._arrival[idx] <= step]
        return kept if kept.size else idx[:1]  # a retriever always returns something

    def order(self, step: int, query: int) -> np.ndarray:
        """Candidate tools of the query, best first (present ones only)."""
        return self.present(step, self.candidates.idx[query])

    def select(self, step: int, query: int) -> int:
        return int(self.order(step, query)[0])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        return None


class StaticRetriever(RankedPolicy):
    """A retriever's top-1 with no feedback at all (BM25, TF-IDF, pretrained dense)."""


class HealthCheckBlacklist(RankedPolicy):
    """Top-1 among tools that never errored; a tool that errors once is excluded for good."""

    name = "HealthCheckBlacklist"

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self.blacklist: set[int] = set()

    def select(self, step: int, query: int) -> int:
        order = self.order(step, query)
        for tool in order:
            if int(tool) not in self.blacklist:
                return int(tool)
        return int(order[0])  # every candidate is blacklisted: the call has to go somewhere

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        if error:
            self.blacklist.add(tool)


class Retry(RankedPolicy):
    """Call the top candidate; on an unsuccessful call, the next one; at most ``k`` calls per step.

    The step counts as a success if any call succeeds; FSR counts every call. Nothing is remembered
    from one step to the next, so a dead top-1 tool is called again on every step that ranks it first.
    """

    name = "Retry"

    def __init__(self, candidates: CandidateLists, k: int = 3, name: str | None = None) -> None:
        super().__init__(candidates, name)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.max_attempts = k
        self._step = -1
        self._tries = 0

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self._step, self._tries = -1, 0

    def select(self, step: int, query: int) -> int:
        if step != self._step:
            self._step, self._tries = step, 0
        order = self.order(step, query)
        return int(order[min(self._tries, order.size - 1)])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self._tries += 1  # the only state, and it is reset at the next step


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
    ) -> None:
        super().__init__(candidates, name)
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.n_tools, self.batch, self.lr = n_tools, batch, lr

    def reset(self, arrival: np.ndarray) -> None:
        super().reset(arrival)
        self.weights = np.zeros(self.n_tools)
        self._calls = np.zeros(self.n_tools)
        self._rewards = np.zeros(self.n_tools)
        self.updates = 0

    def order(self, step: int, query: int) -> np.ndarray:
        idx = self.candidates.idx[query]
        scores = self.candidates.sem[query] + self.weights[idx]
        return self.present(step, idx[np.argsort(-scores, kind="stable")])

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


@dataclass
class GlobalMABState:
    """Discounted counts of one non-contextual arm per tool (Garivier & Moulines' discounted UCB).

    Every arm is discounted by gamma at every step. Instead of multiplying all arms each step, the
    arrays hold counts divided by ``scale`` = gamma^t, so a step touches one arm; the true discounted
    values are ``n * scale`` and ``s * scale`` (renormalized before ``scale`` underflows).
    """

    n: np.ndarray
    s: np.ndarray
    total: float = 0.0
    scale: float = 1.0

    def copy(self) -> GlobalMABState:
        return GlobalMABState(self.n.copy(), self.s.copy(), self.total, self.scale)

    def step(self, gamma: float, arm: int, reward: float) -> None:
        self.scale *= gamma
        if self.scale < 1e-200:
            self.n *= self.scale
            self.s *= self.scale
            self.scale = 1.0
        self.total = self.total * gamma + 1.0
        self.n[arm] += 1.0 / self.scale
        self.s[arm] += reward / self.scale


class GlobalMAB(RankedPolicy):
    """Discounted UCB per tool, shared by every query, fused like RATED: w1*(1+cos)/2 + w2*ucb + w3*prior.

    The classic non-contextual baseline (Garivier & Moulines' discounted UCB: bonus
    alpha * sqrt(log(total) / n_i), every arm discounted each step, an untried arm scores 1). RATED's own
    "w/ Global MAB" ablation (``rated.global_mab``) differs: it starts each arm from the prior as
    pseudo-evidence and discounts an arm only when it is updated.

    Args:
        prior: the metadata prior of every tool (``tools.parquet``'s ``prior``).
        weights: fusion weights (w1, w2, w3), RATED's defaults.
        gamma: discount per step (forgets old evidence so a recovered tool can win again).
        alpha: width of the exploration bonus.
    """

    name = "GlobalMAB"

    def __init__(
        self,
        candidates: CandidateLists,
        prior: np.ndarray,
        weights: tuple[float, float, float] = (0.75, 0.15, 0.10),
        gamma: float = 0.99,
        alpha: float = 0.5,
        name: str | None = None,
    ) -> None:
        super().__init__(candidates, name)
        if not 0.0 < gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {gamma}")
        self.prior = np.asarray(prior, dtype=np.float64)
        self.weights, self.gamma, self.alpha = weights, gamma, alpha
        self._initial = GlobalMABState(np.zeros(self.prior.size), np.zeros(self.prior.size))
        self.state = self._initial.copy()

    def reset(self, arrival: np.ndarray) -> None:
        """Back to the state after warm-up (or empty), so every run starts the same."""
        super().reset(arrival)
        self.state = self._initial.copy()

    def ucb(self, idx: np.ndarray) -> np.ndarray:
        """Mean reward + bonus, clipped to [0, 1] so it sits on the same scale as cosine and prior;
        an untried arm gets the optimistic 1."""
        n = self.state.n[idx] * self.state.scale
        mean = np.divide(self.state.s[idx] * self.state.scale, n, out=np.full(idx.size, 0.5), where=n > 0)
        bonus = self.alpha * np.sqrt(np.log(max(self.state.total, 1.0) + 1.0) / np.maximum(n, 1e-9))
        return np.clip(np.where(n > 0, mean + bonus, 1.0), 0.0, 1.0)

    def order(self, step: int, query: int) -> np.ndarray:
        idx = self.candidates.idx[query]
        w1, w2, w3 = self.weights
        sem = 0.5 * (1.0 + self.candidates.sem[query])  # cosine -> [0, 1], RATED's semantic unit
        scores = w1 * sem + w2 * self.ucb(idx) + w3 * self.prior[idx]
        return self.present(step, idx[np.argsort(-scores, kind="stable")])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.state.step(self.gamma, tool, float(success))

    def warm_up(self, candidates: CandidateLists, relevant: list[frozenset[int]]) -> None:
        """Learn from warm-up pairs (``candidates`` row i has true tools ``relevant[i]``), every tool
        available; the state afterwards is what ``reset`` returns to."""
        saved, self.candidates, self._arrival = self.candidates, candidates, None
        self.state = self._initial.copy()
        for q, rel in enumerate(relevant):
            tool = self.select(0, q)
            self.observe(0, q, tool, tool in rel, False)
        self.candidates = saved
        self._initial = self.state.copy()
