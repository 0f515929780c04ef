"""RATED as a library for an agent: ``select(query) -> tool_id``, then ``feedback(tool_id, success)``.

It wires the frozen dual encoder, the tool index, one bandit per tool and the metadata prior into the
paper's Algorithm 1: retrieve the top-K by dot product, rerank by the fused score, call the best tool,
and update only that tool's bandit with the outcome.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rated.bandit import DiscountedLinUCB, ToolBandit, as_priors
from rated.config import RATEDConfig, Variant
from rated.global_mab import GlobalMAB
from rated.index import ToolIndex

if TYPE_CHECKING:
    import polars as pl

    from rated.encoder import DualEncoder

log = logging.getLogger(__name__)

STATE_FORMAT = "rated-state/1"
Query = str | np.ndarray


def make_bandits(config: RATEDConfig, dim: int, prior: np.ndarray) -> ToolBandit:
    """The reliability module of ``config.variant``: GlobalMAB for ``GLOBAL_MAB``, LinUCB otherwise."""
    cls = GlobalMAB if config.variant is Variant.GLOBAL_MAB else DiscountedLinUCB
    return cls(dim, prior, alpha=config.alpha, gamma=config.gamma, lam=config.lam)


@lru_cache(maxsize=4)
def _load_encoder(path: str, stamp: float) -> DualEncoder:
    """A saved dual encoder, frozen, cached per folder and modification time (loads cost seconds)."""
    from rated.encoder import DualEncoder

    return DualEncoder.load(path).freeze()


@lru_cache(maxsize=4)
def _backbone_encoder(query_encoder: str, tool_encoder: str) -> DualEncoder:
    """The pretrained, not fine-tuned towers (the ``NO_CONTRASTIVE`` ablation), frozen and cached."""
    from rated.encoder import DualEncoder

    return DualEncoder.from_backbones(query_encoder, tool_encoder).freeze()


_EMBED_MEMO: dict[tuple[DualEncoder, str], np.ndarray] = {}


def _tool_embeddings(encoder: DualEncoder, documents: list[str], batch_size: int) -> np.ndarray:
    """Tool-tower embeddings of the catalog. ``encode_tools`` reads the shared on-disk cache
    (``ecoagent.embeddings``) for towers with a key; this memo keeps the last few matrices in memory, so
    the many runs of an evaluation (seeds, variants that keep the encoder) do not read them back each time."""
    import hashlib

    key = (encoder, hashlib.sha256("\x1e".join(documents).encode()).hexdigest())
    if key not in _EMBED_MEMO:
        if len(_EMBED_MEMO) >= 8:
            _EMBED_MEMO.pop(next(iter(_EMBED_MEMO)))
        _EMBED_MEMO[key] = encoder.encode_tools(documents, batch_size=batch_size)
    return _EMBED_MEMO[key]


class RATED:
    """The reliability-aware retriever: semantic top-K, reranked by bandit reliability and the prior.

    ``S_final = w1 * cos + w2 * clip(UCB, 0, 1) + w3 * prior`` (the paper's fusion; ``config.semantic =
    "unit"`` uses ``(1 + cos) / 2``) over the top-K tools by dot product (see ``rated.fusion``). Feedback updates only the chosen tool's bandit. All updates and
    reads of mutable state hold one lock, so an agent may call it from several threads.

    Args:
        encoder: the frozen dual encoder (``None`` for the embedding-level API only).
        index: every tool's embedding and id.
        prior: every tool's metadata prior, in index row order.
        config: hyper-parameters and variant.

    Example:
        >>> from rated import RATED  # doctest: +SKIP
        >>> r = RATED.load(out / "model", tools)  # doctest: +SKIP
        >>> tool_id = r.select("convert this pdf to text")  # doctest: +SKIP
        >>> r.feedback(tool_id, success=False)  # doctest: +SKIP
    """

    def __init__(
        self,
        encoder: DualEncoder | None,
        index: ToolIndex,
        prior: np.ndarray,
        config: RATEDConfig | None = None,
    ) -> None:
        self.config = config or RATEDConfig()
        self.encoder = encoder
        self.index = index
        self.prior = as_priors(prior)
        if self.prior.size != len(index):
            raise ValueError(f"{self.prior.size} priors for {len(index)} indexed tools")
        self.bandits: ToolBandit = make_bandits(self.config, index.dim, self.prior)
        self._weights = self.config.fusion_coefficients()
        self._learn = self.config.variant is not Variant.NO_FEEDBACK
        self._pending: dict[int, np.ndarray] = {}  # tool -> query embedding of the last select choosing it
        self._lock = threading.RLock()

    # ------------------------------------------------------------ building
    @classmethod
    def load(
        cls,
        model_dir: str | Path | None,
        tools: pl.DataFrame,
        config: RATEDConfig | None = None,
    ) -> RATED:
        """Build the retriever from a trained model folder and a tool table.

        Args:
            model_dir: ``DIR/model`` written by ``ecoagent train``. Ignored (may be ``None``) for
                ``Variant.NO_CONTRASTIVE``, which loads ``config.query_encoder`` / ``tool_encoder``.
            tools: a tool table (``tools.parquet``): ``tool_id``, ``name``, ``description``, ``tags``, ``prior``.
            config: hyper-parameters and variant (default: the paper's, ``Variant.FULL``).
        """
        config = config or RATEDConfig()
        if config.variant is Variant.NO_CONTRASTIVE:
            encoder = _backbone_encoder(config.query_encoder, config.tool_encoder)
        else:
            if model_dir is None:
                raise ValueError(f"variant {config.variant.value} needs the trained model folder")
            path = Path(model_dir)
            if not (path / "modules.json").exists():
                raise FileNotFoundError(f"{path} holds no trained model: run `ecoagent train` first")
            encoder = _load_encoder(str(path.resolve()), (path / "modules.json").stat().st_mtime)
        return cls.from_encoder(encoder, tools, config)

    @classmethod
    def from_encoder(
        cls, encoder: DualEncoder, tools: pl.DataFrame, config: RATEDConfig | None = None
    ) -> RATED:
        """Index ``tools`` with ``encoder``'s tool tower and start every bandit cold from the prior."""
        from ecoagent.schemas import tool_documents

        config = config or RATEDConfig()
        ids = tools["tool_id"].to_list()
        emb = _tool_embeddings(encoder, tool_documents(tools), config.encode_batch_size)
        index = ToolIndex(encoder.dim, ids, emb)
        return cls(encoder, index, _prior_column(tools), config)

    def fresh(self, config: RATEDConfig | None = None) -> RATED:
        """A new retriever sharing this one's encoder and index contents, with cold bandits.

        Runs of an evaluation (seeds, variants that keep the encoder) start from here instead of
        re-encoding the catalog. ``NO_CONTRASTIVE`` needs another encoder: use ``load`` for it.
        """
        config = config or self.config
        with self._lock:
            return RATED(self.encoder, self.index.copy(), self.prior.copy(), config)

    # -------------------------------------------------------------- queries
    def encode(self, queries: str | list[str]) -> np.ndarray:
        """Query-tower embeddings: shape (d,) for one string, (n, d) for a list."""
        if self.encoder is None:
            raise RuntimeError("this retriever was built without an encoder: pass query embeddings")
        single = isinstance(queries, str)
        emb = self.encoder.encode_queries([queries] if single else queries, self.config.encode_batch_size)
        return emb[0] if single else emb

    def _embedding(self, query: Query) -> np.ndarray:
        return self.encode(query) if isinstance(query, str) else np.asarray(query, dtype=np.float32)

    def rank_embedding(self, q_emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The top-K by dot product, reranked by the fused score, best first.

        Args:
            q_emb: L2-normalized query embedding, shape (d,).

        Returns:
            ``(idx, final_scores)``: tool indices and their fused scores, descending
            (ties keep the semantic order).
        """
        with self._lock:
            idx, sem = self.index.search(q_emb, self.config.top_k)
            final, _ = self.bandits.fused(idx, sem, q_emb, self._weights)
        order = np.argsort(-final, kind="stable")
        return idx[order], final[order]

    def select_embedding(self, q_emb: np.ndarray) -> int:
        """The index of the tool with the best fused score among the top-K (Algorithm 1, lines 2-5)."""
        with self._lock:
            idx, sem = self.index.search(q_emb, self.config.top_k)
            if idx.size == 0:
                raise LookupError("the index holds no tools to select from")
            return int(idx[self.bandits.fused(idx, sem, q_emb, self._weights)[1]])

    def select(self, query: Query) -> str:
        """The tool id to call for ``query`` (a string, or a query embedding).

        The query embedding is remembered for the chosen tool, so ``feedback(tool_id, success)`` can
        update that tool's bandit with the context it was chosen for.
        """
        q = self._embedding(query)
        with self._lock:
            i = self.select_embedding(q)
            self._pending[i] = np.array(q, dtype=np.float32)  # a copy: the caller may reuse its buffer
            return self.index.ids[i]

    def rank(self, query: Query, k: int | None = None) -> list[tuple[str, float]]:
        """``(tool_id, fused score)`` of the reranked top-K (or its first ``k``), best first."""
        idx, final = self.rank_embedding(self._embedding(query))
        n = len(idx) if k is None else k
        return [(self.index.ids[int(i)], float(s)) for i, s in zip(idx[:n], final[:n], strict=True)]

    # ------------------------------------------------------------- feedback
    def feedback_embedding(self, i: int, q_emb: np.ndarray, success: bool, error: bool | None = None) -> None:
        """Update tool ``i``'s bandit with the outcome of calling it for ``q_emb``.

        ``error`` says the call did not execute; by default it is ``not success`` (execution-only
        feedback: a call either worked or errored). Pass ``error=False`` with ``success=False`` for a
        call that worked but was the wrong tool (labelled feedback). ``RATEDConfig.reward`` turns the
        outcome into the bandit's reward and weight. A no-op for ``Variant.NO_FEEDBACK``, whose bandit
        keeps its prior start.
        """
        if self._learn:
            reward, weight = self.config.reward(bool(success), not success if error is None else bool(error))
            with self._lock:
                self.bandits.update(i, q_emb, reward, weight)

    def feedback(
        self, tool_id: str, success: bool, query: Query | None = None, error: bool | None = None
    ) -> None:
        """Report whether the call of ``tool_id`` succeeded; updates only that tool's bandit.

        Args:
            tool_id: the tool that was called (normally the last ``select``'s answer).
            success: whether the call worked.
            query: the query it was called for; default: the query of the last ``select`` that chose
                ``tool_id``.
            error: whether the call errored (did not execute); default ``not success``. A caller that
                knows a working call was the wrong tool passes ``success=False, error=False``.

        Raises:
            KeyError: ``tool_id`` is not indexed.
            ValueError: no query given and ``tool_id`` was never selected.
        """
        i = self.index.position(tool_id)
        q = None if query is None else self._embedding(query)
        with self._lock:
            if q is None:
                q = self._pending.get(i)
                if q is None:
                    raise ValueError(f"tool {tool_id!r} was not selected: pass the query it was called for")
            self.feedback_embedding(i, q, success, error)

    def step(self, query: Query, observe: Callable[[str], bool]) -> tuple[str, bool]:
        """One step of Algorithm 1: select a tool, call ``observe(tool_id) -> success``, learn from it."""
        q = self._embedding(query)
        with self._lock:
            i = self.select_embedding(q)
        tool_id = self.index.ids[i]
        success = bool(observe(tool_id))
        self.feedback_embedding(i, q, success)
        return tool_id, success

    def warm_up(self, pairs: Iterable[tuple[Query, str | int | Collection[str | int]]]) -> dict[str, float]:
        """Run Algorithm 1 on labelled pairs before evaluation (paper: 2,000 pairs).

        Each pair is ``(query, relevant)``: a query (string or embedding) and its true tool(s) (ids or
        indices). RATED selects as it would online and learns ``success = chosen tool is relevant``;
        every warm-up call executes, so a wrong choice teaches 0, not an error.

        Returns:
            ``{"pairs": n, "successes": k, "success_rate": k / n}``.
        """
        pairs = list(pairs)
        texts = [q for q, _ in pairs if isinstance(q, str)]
        encoded = iter(self.encode(texts)) if texts else iter(())
        hits = 0
        for query, relevant in pairs:
            q = next(encoded) if isinstance(query, str) else np.asarray(query, dtype=np.float32)
            rel = [relevant] if isinstance(relevant, str | int | np.integer) else list(relevant)
            targets = {r if isinstance(r, int | np.integer) else self.index.position(r) for r in rel}
            with self._lock:
                i = self.select_embedding(q)
                success = i in targets
                self.feedback_embedding(i, q, success, error=False)
            hits += success
        n = len(pairs)
        return {"pairs": n, "successes": hits, "success_rate": hits / n if n else 0.0}

    # -------------------------------------------------------------- catalog
    def add_tools(self, tools: pl.DataFrame) -> np.ndarray:
        """Index new tools by encoding their documents with the frozen tool tower (no retraining).

        Returns:
            The new tools' indices. Their bandits start cold from their prior.
        """
        from ecoagent.schemas import tool_documents

        if self.encoder is None:
            raise RuntimeError("this retriever was built without an encoder")
        emb = self.encoder.encode_tools(tool_documents(tools), self.config.encode_batch_size)
        prior = _prior_column(tools)
        with self._lock:
            rows = self.index.add(tools["tool_id"].to_list(), emb)
            self.prior = np.concatenate([self.prior, prior])
            self.bandits.add_arms(prior)
        return rows

    # ---------------------------------------------------------- persistence
    def save_state(self, path: str | Path) -> None:
        """Write the bandits' state (tools named by id) and the config to a safetensors file."""
        from safetensors.numpy import save_file

        with self._lock:
            state = self.bandits.state_dict()
        arrays = {k: np.ascontiguousarray(v) for k, v in state.items() if isinstance(v, np.ndarray)}
        arms = arrays.pop("arms")
        metadata = {
            "format": STATE_FORMAT,
            "kind": state["kind"],
            "settings": json.dumps(state["settings"]),
            "config": json.dumps(self.config.to_dict()),
            "tool_ids": json.dumps([self.index.ids[int(a)] for a in arms]),
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        save_file(arrays, str(tmp), metadata=metadata)
        tmp.replace(path)

    def load_state(self, path: str | Path) -> int:
        """Restore bandit state saved by ``save_state``, mapping tools by id.

        Tools of the saved state that this catalog lacks are dropped (with a warning).

        Returns:
            The number of tools whose state was restored.

        Raises:
            ValueError: the file is not a RATED state, or is for another bandit kind or dimension.
        """
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as fh:
            metadata = fh.metadata() or {}
            arrays = {k: fh.get_tensor(k) for k in fh.keys()}  # noqa: SIM118 (safe_open is not a dict)
        if metadata.get("format") != STATE_FORMAT:
            raise ValueError(f"{path} is not a RATED state file")
        settings = json.loads(metadata["settings"])
        if settings["dim"] != self.index.dim:
            raise ValueError(f"state is for dimension {settings['dim']}, this index has {self.index.dim}")
        ids = json.loads(metadata["tool_ids"])
        keep = [k for k, t in enumerate(ids) if t in self.index]
        if len(keep) < len(ids):
            log.warning("dropping the state of %d tools missing from this catalog", len(ids) - len(keep))
        state: dict[str, Any] = {k: v[keep] for k, v in arrays.items()}
        state["arms"] = np.asarray([self.index.position(ids[k]) for k in keep], dtype=np.int64)
        state["kind"] = metadata["kind"]
        with self._lock:
            self.bandits.load_state_dict(state)
        return len(keep)


def _prior_column(tools: pl.DataFrame) -> np.ndarray:
    """The ``prior`` column as float64 in [0, 1]; a missing prior (null) counts as 0.5, the midpoint."""
    if "prior" not in tools.columns:
        raise ValueError("the tool table has no prior column (see ecoagent.schemas.TOOL_SCHEMA)")
    return as_priors(tools["prior"].cast(float).fill_null(0.5).to_numpy())
