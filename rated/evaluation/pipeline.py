"""The evaluate stage: offline retrieval (Table 1), the dynamic simulation (Table 2 and past it), latency
(Table 3) and sensitivity (Figure 4), written to DIR/eval/ as report.md, report.json, config.json and PNGs.

It reads the crawl's tool table, the Syn and Real test/train splits and the trained model, encodes every
query once per encoder, and hands plain arrays (candidate lists, embeddings, true-tool sets) to the
simulation, so every method of every seed replays 10,000 steps in seconds.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json
from ecoagent.config import Profile
from ecoagent.embeddings import encode_backend, encode_dtype
from ecoagent.parallel import fork_imap
from ecoagent.progress import Progress
from ecoagent.retrievers import BM25Retriever, DenseRetriever, TfidfRetriever
from rated.evaluation import dynamic, offline, report
from rated.evaluation.baselines import (
    BatchUpdate,
    FullLinUCB,
    GlobalDUCB,
    HealthCheckBlacklist,
    OnlineEmbeddingUpdate,
    Retry,
    SlidingWindowUCB,
    StaticRetriever,
)
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.data import (
    DATASETS,
    Catalog,
    load_pool,
    naming_queries,
    syn_equivalents,
    trained_mcp_servers,
    with_equivalents,
)
from rated.evaluation.failures import Scenario
from rated.evaluation.live_report import with_live_section
from rated.evaluation.metrics import PostFailSuccessRate
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.significance import compare
from rated.evaluation.simulator import QueryPool, Stream

log = logging.getLogger(__name__)

# Table 1's two encoder-only RATED rows: the fine-tuned towers and their pretrained backbone
FINE_TUNED, BACKBONE = "RATED Full (encoder only)", "RATED w/o Contrastive (encoder only)"

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"


@dataclass(frozen=True)
class EvaluationConfig:
    """Everything that decides the numbers of one evaluation; saved as DIR/eval/config.json.

    Args:
        seeds: one simulation stream (and failure draw) per seed.
        steps: T, selections per stream (paper: 10,000).
        onset: 0-based failure onset (paper: step 2,001).
        window_end: end of the Post-Fail SR / FSR window (paper: step 5,000).
        warm_up_pairs: bandit warm-up pairs from the train split, sampled with replacement (paper: 2,000).
        top_k: candidates per query for every policy (RATED's K).
        retry_k: candidates Retry may call in one step.
        batch, batch_lr: the ToolRL-like baseline's batch size and learning rate.
        dense_models: pretrained encoders run as offline / static baselines.
        streams: datasets replayed in the simulation; ``extended_streams`` also get the scenarios past
            the paper (recovery, flaky tools, cold start).
        n_resamples: resamples of the paired significance tests.
        latency_queries: queries timed one by one for Table 3.
        sensitivity_steps: steps of each sensitivity run (Post-Fail SR needs no more than window_end).
        sensitivity_seeds: seeds of each sensitivity cell (the first ones of ``seeds``), on the val split.
        global_ucb_gamma, global_ucb_alpha: the Global D-UCB baseline's per-arm discount and bonus.
        sw_window: W of the SW-UCB baseline (calls of a tool kept).
        embedding_lr: step size of the online embedding update baseline.
        dlinucb_dim: projected dimension of the full-matrix D-LinUCB baseline.
        task_feedback_row: add "RATED (task-success feedback)", the labelled upper bound.
        syn_equivalents: give each Syn query its tool's cross-platform equivalents as extra true tools.
        semantic: RATED's fusion of the cosine (``cosine``: the paper; ``unit``: (1 + cos) / 2).
        n_bootstrap: resamples of the query x seed bootstrap CIs of Table 2.
        churn: replay the MCP registry history (``rated.evaluation.churn``) on the extended streams.
        retrievers, policies: outside plug-ins as ``module:Factory`` (``rated.evaluation.plugins``).
    """

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    steps: int = 10_000
    onset: int = 2000
    window_end: int = 5000
    warm_up_pairs: int = 2000
    top_k: int = 10
    retry_k: int = 3
    batch: int = 500
    batch_lr: float = 0.5
    dense_models: tuple[str, ...] = (MINILM, MPNET)
    streams: tuple[str, ...] = ("real", "syn")
    extended_streams: tuple[str, ...] = ("real",)
    n_resamples: int = 10_000
    latency: bool = True
    latency_queries: int = 200
    sensitivity: bool = True
    sensitivity_steps: int = 5000
    sensitivity_seeds: int = 2
    global_ucb_gamma: float = 0.95
    global_ucb_alpha: float = 0.5
    sw_window: int = 100
    embedding_lr: float = 0.1
    dlinucb_dim: int = 32
    task_feedback_row: bool = True
    syn_equivalents: bool = True
    semantic: str = "cosine"
    n_bootstrap: int = 2000
    churn: bool = True
    retrievers: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()
    scenarios: tuple[Scenario, ...] = field(default=dynamic.PAPER_SCENARIOS)
    extended_scenarios: tuple[Scenario, ...] = field(default=dynamic.EXTENDED_SCENARIOS)

    def all_scenarios(self, extended: bool) -> list[Scenario]:
        """The scenarios with this config's onset; recovery and arrivals at the end of the metric window."""
        chosen = list(self.scenarios) + (list(self.extended_scenarios) if extended else [])
        return [
            dataclasses.replace(s, onset=self.onset, recover_at=self.window_end, arrival=self.window_end)
            for s in chosen
        ]

    def simulation(self) -> dynamic.SimulationConfig:
        return dynamic.SimulationConfig(self.steps, self.onset, self.window_end, 200, self.seeds)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DatasetInputs:
    """One dataset's test pool and warm-up pairs, encoded by every encoder that needs them."""

    name: str
    test: QueryPool
    train: QueryPool  # the warm-up split, each query once; seeds draw their warm-up pairs from it
    warm_split: str
    dropped_pairs: int
    warm_n: int = 2000
    eval_split: str = "test"
    val: QueryPool | None = None  # for the sensitivity sweeps (None when val is the evaluated split)
    equivalents_gained: int = 0
    emb: dict[str, np.ndarray] = field(default_factory=dict)  # encoder -> test query embeddings
    train_emb: dict[str, np.ndarray] = field(default_factory=dict)
    val_emb: dict[str, np.ndarray] = field(default_factory=dict)
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # baseline -> [n_test, n_tools]

    def warm_pick(self, seed: int) -> np.ndarray:
        """The seed's warm-up sample: ``warm_n`` train queries drawn with replacement."""
        if not len(self.train) or not self.warm_n:
            return np.zeros(0, dtype=np.int64)
        return np.random.default_rng([seed, 0xA11]).integers(0, len(self.train), size=self.warm_n)

    def warm(self, seed: int, encoder: str) -> tuple[np.ndarray, list[frozenset[int]]]:
        pick = self.warm_pick(seed)
        return self.train_emb[encoder][pick], [self.train.relevant[i] for i in pick]


def _load_inputs(
    art: ArtifactDir, catalog: Catalog, cfg: EvaluationConfig, profile: Profile
) -> tuple[dict[str, DatasetInputs], dict[str, str]]:
    """Each dataset's test split (val when a small build has no test queries; recorded as
    ``eval_split``), its train split for the warm-up (or val, if val is not the evaluated split), and
    val for the sensitivity sweeps. Syn queries (both splits) get their tools' equivalents as extra true
    tools. Returns the inputs and, per dataset left out, why (e.g. no MCP prompt set)."""
    skipped: dict[str, str] = {}
    out = {}
    equivalents = None
    for dataset in DATASETS:
        for split in ("test", "val"):
            pool, dropped = load_pool(art, dataset, split, catalog)  # type: ignore[arg-type]
            if len(pool):
                break
        if not len(pool):
            log.warning("%s has no test or val queries whose tool is in the catalog; skipped", dataset)
            skipped[dataset] = "no test or val query whose tool is in tools.parquet"
            continue
        if split != "test":
            log.warning("%s has no test queries: evaluating on its %s split", dataset, split)
        train, warm_split = QueryPool([], [], []), "none"
        for ws in ("train", "val") if split == "test" else ("train",):
            train, _ = load_pool(art, dataset, ws, catalog)  # type: ignore[arg-type]
            if len(train):
                warm_split = ws
                break
        val = load_pool(art, dataset, "val", catalog)[0] if split == "test" else None  # type: ignore[arg-type]
        gained = 0
        if dataset in ("syn", "syn_tool") and cfg.syn_equivalents:
            if equivalents is None:
                equivalents = syn_equivalents(catalog, profile.models.sbert)
            pool, gained = with_equivalents(pool, equivalents)
            train = with_equivalents(train, equivalents)[0]
            val = with_equivalents(val, equivalents)[0] if val is not None else None
        out[dataset] = DatasetInputs(
            dataset, pool, train, warm_split, dropped, cfg.warm_up_pairs, split, val or None, gained
        )
    return out, skipped


def _load_rated(
    art: ArtifactDir, catalog: Catalog, profile: Profile, top_k: int, semantic: str = "cosine"
) -> dict[str, Any]:
    """RATED Full from DIR/model, the variants that share its encoder, and w/o Contrastive."""
    from rated import RATED, RATEDConfig, Variant

    base = RATEDConfig.for_profile(profile, top_k=top_k, semantic=semantic)
    full = RATED.load(art.require(art.model, "train"), catalog.tools, base)
    nc = RATED.load(None, catalog.tools, base.replace(variant=Variant.NO_CONTRASTIVE))
    return {"full": full, "no_contrastive": nc, "config": base, "Variant": Variant}


def _encode_unique(model: Any, texts: list[str]) -> np.ndarray:
    """Encode each distinct text once (warm-up pairs repeat train queries)."""
    if not texts:
        return np.zeros((0, model.index.dim), np.float32)
    unique = list(dict.fromkeys(texts))
    emb = model.encode(unique)
    row = {t: i for i, t in enumerate(unique)}
    return emb[[row[t] for t in texts]]


def _encode_all(inputs: dict[str, DatasetInputs], models: dict[str, Any]) -> None:
    for d in inputs.values():
        for key in ("full", "no_contrastive"):
            d.emb[key] = _encode_unique(models[key], d.test.queries)
            d.train_emb[key] = _encode_unique(models[key], d.train.queries)
            if d.val is not None and key == "full":
                d.val_emb[key] = _encode_unique(models[key], d.val.queries)


def _baseline_scores(
    inputs: dict[str, DatasetInputs],
    catalog: Catalog,
    cfg: EvaluationConfig,
    models: dict[str, Any],
    art: ArtifactDir,
) -> dict[str, float]:
    """Score matrices of TF-IDF, BM25 and the pretrained dense encoders on every test pool."""
    timings = {}
    nc_cfg = models["config"]
    for retriever in (TfidfRetriever(), BM25Retriever()):
        t0 = time.perf_counter()
        retriever.fit(catalog.documents)
        for d in inputs.values():
            d.scores[retriever.name] = retriever.scores(d.test.queries)
        timings[retriever.name] = time.perf_counter() - t0
    from rated.evaluation.plugins import check_scores, load_retriever

    for spec in cfg.retrievers:
        t0 = time.perf_counter()
        plugin = load_retriever(spec)
        plugin.fit(catalog.documents)
        for d in inputs.values():
            d.scores[plugin.name] = check_scores(
                spec, plugin.scores(d.test.queries), len(d.test), len(catalog)
            )
        timings[plugin.name] = time.perf_counter() - t0
    for name in cfg.dense_models:
        t0 = time.perf_counter()
        label = name.split("/")[-1]
        if name == nc_cfg.query_encoder == nc_cfg.tool_encoder:
            # the w/o Contrastive towers are exactly this pretrained encoder: reuse their embeddings
            tools = models["no_contrastive"].index.embeddings
            for d in inputs.values():
                d.scores[label] = (d.emb["no_contrastive"] @ tools.T).astype(np.float64)
        else:
            dense = DenseRetriever(name).fit(catalog.documents)
            for d in inputs.values():
                d.scores[label] = dense.scores(d.test.queries)
        timings[label] = time.perf_counter() - t0
    return timings


def _rated_policies(
    models: dict[str, Any], d: DatasetInputs, catalog: Catalog, seed: int, task_row: bool = False
) -> dict[str, RatedPolicy]:
    """Warm RATED variants for one dataset and seed (w/o Contrastive uses its own query embeddings).

    Every variant learns from execution-only feedback online; the warm-up on the seed's train sample
    is labelled (the paper's 2,000 warm-up pairs). ``task_row`` adds Full with task-success feedback.
    """
    v = models["Variant"]
    base = models["config"]
    specs: dict[str, tuple[Any, str, str]] = {
        "RATED w/o Feedback": (
            models["full"].fresh(base.replace(variant=v.NO_FEEDBACK)),
            "full",
            "execution",
        ),
        "RATED w/ Global MAB": (
            models["full"].fresh(base.replace(variant=v.GLOBAL_MAB)),
            "full",
            "execution",
        ),
        "RATED w/o Contrastive": (models["no_contrastive"].fresh(), "no_contrastive", "execution"),
        "RATED Full": (models["full"].fresh(base), "full", "execution"),
        PAPER_ROW: (models["full"].fresh(base.paper_exact()), "full", "execution"),
    }
    if task_row:
        specs[TASK_ROW] = (models["full"].fresh(base), "full", "task")
    out = {}
    for name, (model, enc, feedback) in specs.items():
        policy = RatedPolicy(model, d.emb[enc], name, feedback=feedback, tools=catalog.tools)
        if len(d.train):
            policy.warm_up(*d.warm(seed, enc))
        out[name] = policy
    return out


TASK_ROW = "RATED (task-success feedback)"
# RATED Full with the paper's learning and fusion exactly (an error teaches 0 once, the bandit clipped to
# [0, 1]): kept beside the default so the difference of the fix is visible (docs/evaluation.md)
PAPER_ROW = "RATED Full (paper-exact)"


def run_offline(
    inputs: dict[str, DatasetInputs],
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    seed: int,
    real_pairs: pl.DataFrame | None = None,
    naming: set[str] | None = None,
) -> dict[str, Any]:
    """Table 1 rows per dataset, significance, construction advantage on Real and, for Syn, each
    method's MRR on the queries that name their tool against those that do not (``naming``: the ids of
    Syn's queries that name their tool, ``data.naming_queries``)."""
    rows = []
    nc_tools = models["no_contrastive"].index.embeddings
    full_tools = models["full"].index.embeddings
    real_rankings: dict[str, list[np.ndarray]] = {}

    def add(name: str, d: DatasetInputs, rankings: list[np.ndarray], kind: str) -> None:
        rows.append(offline.score_rankings(name, d.name, rankings, d.test, kind))
        if d.name == "real":
            real_rankings[name] = rankings

    for d in inputs.values():
        for name, scores in d.scores.items():
            add(name, d, offline.rankings_from_scores(scores), "baseline")
        # the paper's RATED rows: the encoder alone (w/o Contrastive = the pretrained towers)
        for name, emb, tools in (
            (FINE_TUNED, d.emb["full"], full_tools),
            (BACKBONE, d.emb["no_contrastive"], nc_tools),
        ):
            add(name, d, offline.rankings_from_scores((emb @ tools.T).astype(np.float64)), "rated")
        cold = RatedPolicy(models["full"].fresh(), d.emb["full"], "RATED Full + prior (cold, no warm-up)")
        add(cold.name, d, offline.rated_rankings(cold, d.emb["full"]), "extra")
        for name, policy in _rated_policies(models, d, catalog, seed).items():
            label = f"{name} + prior, bandit warmed on {d.warm_split}"
            add(label, d, offline.rated_rankings(policy, policy.query_emb), "extra")
    advantage = _construction_advantage(real_rankings, inputs.get("real"), real_pairs, catalog, models)
    sig = offline.significance(rows, FINE_TUNED, cfg.n_resamples, seed)
    return {
        "rows": [r.to_dict() for r in rows],
        "significance": sig,
        "per_query_rr": {f"{r.method} | {r.split}": r.scores.rr.round(6).tolist() for r in rows},
        "construction_advantage": advantage,
        "by_naming": _by_naming(rows, inputs, naming, cfg.n_resamples, seed) if naming else {},
        "fine_tuned_vs_backbone": fine_tuned_vs_backbone(rows, inputs, cfg.n_resamples, seed),
        "warm_up": {d.name: {"pairs": d.warm_n, "split": d.warm_split} for d in inputs.values()},
        "pools": {
            d.name: {"queries": len(d.test), "true_tools": len(set().union(*d.test.relevant))}
            for d in inputs.values()
        },
        "note": (
            "MRR is MRR@100; Recall@k = |relevant ∩ top-k| / |relevant| (BEIR), so a Real query with two true "
            "tools caps Recall@1 at 0.5. The paper's RATED rows are the encoder alone ('encoder only'; "
            "w/o Contrastive = the pretrained towers). Rows marked '+ prior' are extra: RATED's fused "
            "ranking of its top-K with the metadata prior, cold or after the labelled bandit warm-up on "
            "the train split (first seed's sample, all tools healthy); ranks past K follow the encoder."
        ),
    }


def fine_tuned_vs_backbone(
    rows: list[offline.OfflineRow], inputs: dict[str, DatasetInputs], n_resamples: int, seed: int
) -> dict[str, Any]:
    """Per dataset: the paired comparison of the fine-tuned encoder with its backbone (per-query reciprocal
    rank, fine-tuned minus backbone; ``significance.compare``: seeded paired bootstrap 95 % CI over
    queries and the paired randomization p), with the distinct queries and true tools it rests on.

    On ``syn_tool`` every test tool is unseen in training, and the MCP streams hold only prompts of
    servers the encoder did not train on (``data.trained_mcp_servers``): the held-out gains of fine-tuning.
    """
    out: dict[str, Any] = {}
    for name, d in inputs.items():
        rr = {r.method: r.scores.rr for r in rows if r.split == name}
        if FINE_TUNED not in rr or BACKBONE not in rr or not len(d.test):
            continue
        test = compare(rr[FINE_TUNED], rr[BACKBONE], n_resamples, seed)
        out[name] = {
            "mrr_fine_tuned": float(rr[FINE_TUNED].mean()),
            "mrr_backbone": float(rr[BACKBONE].mean()),
            "queries": len(d.test),
            "true_tools": len(set().union(*d.test.relevant)),
            "ci_excludes_zero": bool(test.ci_low > 0 or test.ci_high < 0),
            **test.to_dict(),
        }
    return out


def _by_naming(
    rows: list[offline.OfflineRow],
    inputs: dict[str, DatasetInputs],
    naming: set[str],
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Per Syn dataset: MRR of every method on the test queries that name their tool and on the rest,
    and the paired test of the fine-tuned encoder against its backbone on each part.

    A query that names its tool is found by the name (lexical methods gain most), so a Table 1 gap that
    holds on the queries that do not name it is the one that rests on the request itself.
    """
    out: dict[str, Any] = {}
    for name in ("syn", "syn_tool"):
        d = inputs.get(name)
        if d is None or not len(d.test):
            continue
        mask = np.array([q in naming for q in d.test.query_ids])
        parts = [(part, sel) for part, sel in (("naming", mask), ("not_naming", ~mask)) if sel.any()]
        rr = {r.method: r.scores.rr for r in rows if r.split == name}
        methods = {
            method: {
                "mrr_naming": float(v[mask].mean()) if mask.any() else None,
                "mrr_not_naming": float(v[~mask].mean()) if (~mask).any() else None,
            }
            for method, v in rr.items()
        }
        tests = {}
        if FINE_TUNED in rr and BACKBONE in rr:
            tests = {
                part: compare(rr[FINE_TUNED][sel], rr[BACKBONE][sel], n_resamples, seed).to_dict()
                for part, sel in parts
            }
        out[name] = {
            "queries_naming": int(mask.sum()),
            "queries_not_naming": int((~mask).sum()),
            "methods": methods,
            "fine_tuned_vs_backbone": tests,
        }
    return out


def _construction_advantage(
    rankings: dict[str, list[np.ndarray]],
    d: DatasetInputs | None,
    pairs: pl.DataFrame | None,
    catalog: Catalog,
    models: dict[str, Any],
) -> dict[str, Any]:
    """Issue #11's check on Real test: each Table 1 method's MRR on the pairs it did not propose."""
    if d is None or pairs is None or not rankings:
        return {"skipped": "no Real test pool"}
    if "proposed_by" not in pairs.columns:
        return {"skipped": "real/pairs.parquet has no proposed_by column (built before the recall union)"}
    proposers = {n for ns in pairs["proposed_by"].to_list() for n in (ns or ())}
    proposer_of = {m: m for m in rankings if m in proposers}
    nc = models["config"]
    backbone = nc.query_encoder.split("/")[-1]
    if nc.query_encoder == nc.tool_encoder and backbone in proposers:
        proposer_of[BACKBONE] = backbone
    methods = offline.construction_advantage(
        rankings, d.test, pairs.filter(pl.col("split") == d.eval_split), list(catalog.index), proposer_of
    )
    return {
        "split": d.eval_split,
        "proposers": sorted(proposers),
        "methods": methods,
        "note": (
            "MRR@100 on the Real test pairs a method did NOT propose (queries with at least one such pair); "
            "a method that took no part in building Real gets its plain MRR over all its test pairs. "
            f"RATED Full is fine-tuned from {backbone}, a recall encoder, but is not itself a proposer."
        ),
    }


def _methods(
    d: DatasetInputs,
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    seed: int,
) -> dict[str, dynamic.PolicyFactory]:
    """Every method of Table 2 for one seed (the warm-ups use the seed's sample), execution-only
    feedback for all but the task-success row. Candidate lists are 2K deep so that tools absent before
    their arrival can be skipped while K remain."""
    depth, k = 2 * cfg.top_k, cfg.top_k
    methods: dict[str, Any] = {}
    for name, scores in d.scores.items():
        methods[name] = StaticRetriever(CandidateLists.from_scores(scores, depth), name, k)
    tools_emb = models["full"].index.embeddings
    q_emb = d.emb["full"]
    shared = CandidateLists.from_scores((q_emb @ tools_emb.T).astype(np.float64), depth)
    base = models["config"]
    w = base.fusion_coefficients()
    methods["HealthCheckBlacklist"] = HealthCheckBlacklist(shared, k=k)
    methods[f"Retry (k={cfg.retry_k})"] = Retry(shared, k=cfg.retry_k, depth=k)
    methods[f"BatchUpdate (ToolRL-like, B={cfg.batch})"] = BatchUpdate(
        shared, len(catalog), cfg.batch, cfg.batch_lr, k=k
    )
    learners = {
        f"Global D-UCB (per-arm γ={cfg.global_ucb_gamma})": GlobalDUCB(
            shared, catalog.prior, w, gamma=cfg.global_ucb_gamma, alpha=cfg.global_ucb_alpha, k=k
        ),
        f"SW-UCB (W={cfg.sw_window})": SlidingWindowUCB(
            shared, catalog.prior, cfg.sw_window, w, alpha=cfg.global_ucb_alpha, k=k
        ),
        f"Online embedding update (η={cfg.embedding_lr})": OnlineEmbeddingUpdate(
            shared, q_emb, tools_emb, lr=cfg.embedding_lr, k=k
        ),
        f"D-LinUCB full matrix (d={cfg.dlinucb_dim})": FullLinUCB(
            shared, q_emb, catalog.prior, cfg.dlinucb_dim, w, base.alpha, base.gamma, base.lam, seed=seed, k=k
        ),
    }
    if len(d.train):
        warm_emb, warm_rel = d.warm(seed, "full")
        warm_cands = CandidateLists.from_scores((warm_emb @ tools_emb.T).astype(np.float64), depth)
        for policy in learners.values():
            if isinstance(policy, OnlineEmbeddingUpdate | FullLinUCB):
                policy.warm_up(warm_cands, warm_rel, warm_emb)
            else:
                policy.warm_up(warm_cands, warm_rel)
    methods.update(learners)
    rated = _rated_policies(models, d, catalog, seed, task_row=cfg.task_feedback_row)
    for name in ("RATED w/o Feedback", "RATED w/ Global MAB", "RATED Full", PAPER_ROW, TASK_ROW):
        if name in rated:
            methods[name] = rated[name]
    if cfg.policies:
        from rated.evaluation.plugins import PolicyContext, make_policy

        pick = d.warm_pick(seed)
        context = PolicyContext(
            list(catalog.index),
            catalog.documents,
            catalog.prior,
            d.test.queries,
            shared,
            k,
            q_emb,
            tools_emb,
            ([d.train.queries[i] for i in pick], [d.train.relevant[i] for i in pick]),
            seed,
        )
        for spec in cfg.policies:
            policy = make_policy(spec, context)
            methods[policy.name] = policy
    return {name: (lambda p=policy: p) for name, policy in methods.items()}


class _Plan(NamedTuple):
    """One simulated dataset: its pool, scenarios (with the notes of the extra ones) and per-seed methods."""

    dataset: str
    d: DatasetInputs
    scenarios: list[Scenario]
    notes: dict[str, str]
    per_seed: dict[int, Any]


def run_simulation(
    inputs: dict[str, DatasetInputs],
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    eval_dir: Path,
    extra_scenarios: dict[str, list[tuple[Scenario, str]]] | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Table 2 and the extended scenarios: every (dataset, scenario, seed) run, spread over ``workers``
    forked processes (default: every core; ``ecoagent.parallel``). Each run is seeded and starts from
    reset policies, so the numbers do not depend on the number of workers.

    Runs stay in this process where a forked one could hang: scenarios that add tools (RATED encodes
    them with torch and reads their rows with polars) and every run when outside policies take part
    (their libraries are unknown).
    """
    sim = cfg.simulation()
    plans: list[_Plan] = []
    for dataset in cfg.streams:
        if dataset not in inputs:
            continue
        d = inputs[dataset]
        per_seed = {seed: _methods(d, models, catalog, cfg, seed) for seed in sim.seeds}
        scenarios = cfg.all_scenarios(extended=dataset in cfg.extended_streams)
        notes = {}
        for scenario, note in (extra_scenarios or {}).get(dataset, []):
            scenarios.append(scenario)
            notes[scenario.name] = note
        plans.append(_Plan(dataset, d, scenarios, notes, per_seed))
    jobs = [
        (p, j, i)
        for p, plan in enumerate(plans)
        for j in range(len(plan.scenarios))
        for i in range(len(sim.seeds))
    ]

    def one_run(job: tuple[int, int, int]) -> tuple[dict[str, Any], float]:
        p, j, i = job
        plan, seed = plans[p], sim.seeds[i]
        t0 = time.perf_counter()
        run = dynamic.run_stream(
            plan.per_seed[seed], plan.d.test, len(catalog), plan.scenarios[j], sim, seed, keep_curves=i == 0
        )
        return run, time.perf_counter() - t0

    bar = Progress(len(jobs), "simulation", "runs", log)
    results: dict[tuple[int, int, int], tuple[dict[str, Any], float]] = {}

    def here(job: tuple[int, int, int]) -> bool:
        return bool(cfg.policies) or plans[job[0]].scenarios[job[1]].adds_tools

    for job, result in zip(jobs, fork_imap(one_run, jobs, workers, here), strict=True):
        results[job] = result
        bar.update()
    bar.close()

    out: dict[str, Any] = {}
    for p, (dataset, d, scenarios, notes, per_seed) in enumerate(plans):
        block: dict[str, Any] = {
            "steps": sim.steps,
            "pool_size": len(d.test),
            "n_true_tools_pool": len(set().union(*d.test.relevant)),
            "eval_split": d.eval_split,
            "equivalents_gained": d.equivalents_gained,
            "scenarios": {},
            "plots": [],
        }
        names = list(per_seed[sim.seeds[0]])
        for j, scenario in enumerate(scenarios):
            runs = [results[(p, j, i)][0] for i in range(len(sim.seeds))]
            seconds = sum(results[(p, j, i)][1] for i in range(len(sim.seeds)))
            curves = runs[0].pop("curves")
            events = _events(runs[0]["schedule"], scenario)
            ci = {w: dynamic.bootstrap_sr(runs, w, cfg.n_bootstrap, sim.seeds[0]) for w in ("pre", "post")}
            for r in runs:
                r.pop("curves", None)
                r.pop("per_query")
                r.pop("query_counts")
            block["n_true_tools"] = runs[0]["n_true_tools"]
            block["scenarios"][scenario.name] = {
                "scenario": {k: v for k, v in asdict(scenario).items() if k != "events"},
                "n_events": len(scenario.events),
                "methods": names,  # table order (the JSON file sorts keys)
                "aggregate": dynamic.aggregate(runs),
                "ci": ci,
                "failed_tools": [len(r["schedule"]["failed_tools"]) for r in runs],
                "runs": runs,
                "seconds": seconds,  # the runs' own wall time, summed over seeds (they may overlap)
            }
            if scenario.name in notes:
                block["scenarios"][scenario.name]["note"] = notes[scenario.name]
            if scenario.kind in ("permanent", "events") or dataset in cfg.extended_streams:
                slug = "".join(c if c.isalnum() else "_" for c in f"sr_{dataset}_{scenario.name}").strip("_")
                path = eval_dir / f"{slug[:60]}.png"
                report.plot_sr_curves(
                    curves,
                    sim.moving_window,
                    f"{dataset}: {scenario.name} — {len(d.test)} distinct queries, seed {sim.seeds[0]}",
                    path,
                    events,
                )
                block["plots"].append(path.name)
            log.info("simulation %s / %s: %.1f s of runs", dataset, scenario.name, seconds)
        out[dataset] = block
    return out


def _events(schedule: dict[str, Any], scenario: Scenario) -> list[tuple[int, str]]:
    """(0-based step, label) of the events a plot marks: onset, recovery, arrivals."""
    marks: list[tuple[int, str]] = []
    for s in schedule.get("fail_start", [])[:3]:
        marks.append((int(s), "failure onset" if scenario.kind != "events" else "first removal"))
    for e in schedule.get("fail_end", []):
        if e >= 0:
            marks.append((int(e), "recovery"))
    for a in schedule.get("arrival", [])[:3]:
        marks.append((int(a), "arrival"))
    return marks


def run_sensitivity(
    inputs: dict[str, DatasetInputs],
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    eval_dir: Path,
) -> dict[str, Any]:
    """The (w1, w3) and (gamma, alpha) grids on the validation split (where the paper selects), each
    cell averaged over ``sensitivity_seeds`` seeds (stream, failure draw and warm-up sample)."""
    from rated.evaluation.sensitivity import sweep

    dataset = next((s for s in cfg.streams if s in inputs), next(iter(inputs)))
    d = inputs[dataset]
    pool, emb, split = (
        (d.val, d.val_emb["full"], "val") if d.val is not None else (d.test, d.emb["full"], d.eval_split)
    )
    seeds = cfg.seeds[: max(1, cfg.sensitivity_seeds)]
    steps = min(cfg.sensitivity_steps, cfg.steps)
    scenario = Scenario("rho=20%", "permanent", rho=0.2, onset=cfg.onset)
    runs = []
    for seed in seeds:
        stream = Stream.sample(pool, steps, seed)
        schedule = scenario.build(stream.relevant_per_step(), len(catalog), seed)
        runs.append((stream, schedule, d.warm(seed, "full")))
    metric = PostFailSuccessRate(cfg.onset, min(cfg.window_end, steps))
    result = sweep(models["full"], emb, runs, metric)
    result["weights"]["plot"] = report.plot_grid(
        result["weights"], "Post-Fail SR vs (w1, w3)", eval_dir / "sensitivity_weights.png"
    ).name
    result["bandit"]["plot"] = report.plot_grid(
        result["bandit"], "Post-Fail SR vs (γ, α)", eval_dir / "sensitivity_bandit.png"
    ).name
    result["note"] = (
        f"{dataset} {split} split ({len(pool)} distinct queries), mean over seeds {list(seeds)}, {steps:,} "
        f"steps, ρ = 20%, Post-Fail SR over steps {cfg.onset + 1:,}-{min(cfg.window_end, steps):,}; "
        "w2 = 1 - w1 - w3; other settings as RATED Full; execution-only feedback."
    )
    if len(pool) < SMOKE_QUERIES:
        result["note"] = f"**SMOKE TEST** (< {SMOKE_QUERIES} distinct queries). " + result["note"]
    return result


SMOKE_QUERIES, SMOKE_FAILED = 100, 20


def run_latency(
    inputs: dict[str, DatasetInputs], models: dict[str, Any], cfg: EvaluationConfig
) -> dict[str, Any]:
    """Table 3 on distinct queries: the evaluated dataset's test, then val and train queries, each once."""
    from rated.evaluation.latency import measure

    v, base, full = models["Variant"], models["config"], models["full"]
    d = inputs.get("real") or next(iter(inputs.values()))
    pools = [d.test.queries, (d.val.queries if d.val is not None else []), d.train.queries]
    queries = list(dict.fromkeys(q for p in pools for q in p))[: cfg.latency_queries]
    rows = measure(
        full.fresh(base),
        full.fresh(base.replace(variant=v.NO_FEEDBACK)),
        full.fresh(base.replace(variant=v.GLOBAL_MAB)),
        queries,
        cfg.batch,
        dlinucb_dim=cfg.dlinucb_dim,
    )
    note = (
        f"{len(queries)} distinct {d.name} queries (test first, then val and train), one call per query, "
        "one torch and one BLAS thread, this machine."
    )
    if len(queries) < SMOKE_QUERIES:
        note = f"**SMOKE TEST** (< {SMOKE_QUERIES} distinct queries). " + note
    return {"rows": rows, "note": note, "distinct_queries": len(queries)}


def config_from_options(
    profile: Profile, seeds: int | tuple[int, ...] = 5, steps: int | None = None, **options: Any
) -> EvaluationConfig:
    """The run's config: ``seeds`` is a count (seeds profile.seed, profile.seed + 1, ...) or explicit seeds."""
    seed_list = tuple(range(profile.seed, profile.seed + seeds)) if isinstance(seeds, int) else tuple(seeds)
    if not seed_list:
        raise ValueError("at least one seed is needed")
    changes = {k: v for k, v in options.items() if v is not None}
    if steps is not None:
        changes["steps"] = steps
    cfg = EvaluationConfig(seeds=seed_list, **changes)
    if cfg.steps <= cfg.onset:
        raise ValueError(f"steps ({cfg.steps}) must exceed the failure onset ({cfg.onset})")
    return cfg


def run(
    out: Path,
    profile: Profile,
    seeds: int | tuple[int, ...] = 5,
    steps: int | None = None,
    workers: int | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run the whole evaluation and write DIR/eval/; returns the headline numbers.

    Args:
        out: the artifact folder (reads tools.parquet, syn/, real/, model/).
        profile: models and the base seed.
        seeds: number of simulation seeds (or the seeds themselves).
        steps: T per stream (default 10,000).
        workers: processes for the simulation's runs (default: every core; 1 = this process). The
            numbers do not depend on it, so it is not part of the config.
        options: any ``EvaluationConfig`` field (e.g. ``latency=False``, ``streams=("real",)``).
    """
    t_start = time.perf_counter()
    art = ArtifactDir(Path(out))
    cfg = config_from_options(profile, seeds, steps, **options)
    eval_dir = art.eval
    eval_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "profile": profile.name,
        "profile_config": profile.to_dict(),
        "evaluation": cfg.to_dict(),
        "seeds": list(cfg.seeds),
    }
    fp = fingerprint(config)
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    catalog = Catalog.load(art)
    inputs, skipped_datasets = _load_inputs(art, catalog, cfg, profile)
    if not inputs:
        return _nothing_to_evaluate(art, config, fp, len(catalog))
    models = _load_rated(art, catalog, profile, cfg.top_k, cfg.semantic)
    _encode_all(inputs, models)
    config["rated_config"] = models["config"].to_dict()
    config["fingerprint"] = fp
    config["encode_dtype"] = encode_dtype()  # catalog vectors: bfloat16 on CPUs with native bf16
    config["encode_backend"] = encode_backend()  # ...computed by torch or OpenVINO's CPU runtime
    write_json(eval_dir / "config.json", config)
    timings["load + encode"] = time.perf_counter() - t0
    timings.update(
        {f"fit + score {k}": v for k, v in _baseline_scores(inputs, catalog, cfg, models, art).items()}
    )

    result: dict[str, Any] = {"config": {**config, "simulation": cfg.simulation().to_dict()}}
    rc = models["config"]
    result["fusion"] = {
        "semantic": rc.semantic,
        "weights": list(rc.weights),
        "effective_weights": [round(x, 4) for x in rc.effective_weights()],
    }
    result["seeds_change"] = SEEDS_CHANGE
    result["fine_tuning"] = _fine_tuning(art)
    result["fine_tuning"]["mcp_servers_trained_on"] = len(trained_mcp_servers(art))
    result["data"] = {
        "n_tools": len(catalog),
        **{
            d.name: {
                "test_queries": len(d.test),
                "true_tools": len(set().union(*d.test.relevant)),
                "dropped_pairs": d.dropped_pairs,
                "warm_up_pairs": d.warm_n if len(d.train) else 0,
                "warm_up_split": d.warm_split,
                "train_queries": len(d.train),
                "eval_split": d.eval_split,
                "equivalents_gained": d.equivalents_gained,
            }
            for d in inputs.values()
        },
        "skipped": skipped_datasets,
    }
    # one BLAS thread: the simulation and the per-query latency runs make many tiny products, where
    # thread hand-offs cost more than they save (and on a shared machine they stall); the batch
    # encodings above keep torch's threads
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.perf_counter()
        real_pairs = pl.read_parquet(art.real_pairs) if art.real_pairs.exists() else None
        naming = naming_queries(art)
        result["offline"] = run_offline(inputs, models, catalog, cfg, cfg.seeds[0], real_pairs, naming)
        timings["offline"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        extra, result["churn"] = _churn(catalog, cfg)
        result["simulation"] = run_simulation(inputs, models, catalog, cfg, eval_dir, extra, workers)
        timings["simulation"] = time.perf_counter() - t0
        if cfg.sensitivity:
            t0 = time.perf_counter()
            result["sensitivity"] = run_sensitivity(inputs, models, catalog, cfg, eval_dir)
            timings["sensitivity"] = time.perf_counter() - t0
        if cfg.latency:
            t0 = time.perf_counter()
            result["latency"] = run_latency(inputs, models, cfg)
            timings["latency"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_start
    result["timings_s"] = timings

    write_json(eval_dir / "report.json", result)
    (eval_dir / "report.md").write_text(with_live_section(report.render_markdown(result), art.root))
    stats = headline(result)
    art.mark_done("evaluate", fp, stats)
    return stats


def _fine_tuning(art: ArtifactDir) -> dict[str, Any]:
    """The train stage's fine-tuned-vs-backbone comparison on held-out data (``model/metrics.json``)."""
    import json

    path = art.model / "metrics.json"
    try:
        metrics = json.loads(path.read_text())
    except (OSError, ValueError):
        return {"skipped": f"no readable {path}"}
    if "held_out" not in metrics:
        return {"skipped": "model/metrics.json predates the held-out comparison"}
    keep = ("held_out", "held_out_note", "fine_tuning_loses", "steps", "train_examples")
    return {k: metrics.get(k) for k in keep}


def _churn(
    catalog: Catalog, cfg: EvaluationConfig
) -> tuple[dict[str, list[tuple[Scenario, str]]], dict[str, Any]]:
    """The replayed MCP registry churn scenario for the extended streams, when the snapshot has it."""
    from ecoagent.config import default_mirror
    from rated.evaluation.churn import HISTORY, churn_scenario

    path = default_mirror() / HISTORY
    if not cfg.churn or not path.exists():
        return {}, {"skipped": f"no {HISTORY} in the catalog snapshot" if cfg.churn else "disabled"}
    scenario, summary = churn_scenario(catalog.tools, path, cfg.steps)
    note = (
        f"{summary['matched_events']} of {summary['history_events']} dated events of docker/mcp-registry's history "
        f"matched the catalog's {summary['mcp_tools_in_catalog']} MCP tools ({summary['schedule_events']} schedule "
        "events); dates mapped linearly onto steps 1..T, removed tools unavailable from their step, added tools "
        "arriving (cold start) at theirs."
        + (" With no match the scenario is the healthy catalog." if not summary["schedule_events"] else "")
    )
    return {s: [(scenario, note)] for s in cfg.extended_streams}, summary


SEEDS_CHANGE = (
    "Each seed changes (1) the stream: which test query comes at each step (uniform, with replacement); "
    "(2) the failure draw: which tools fail follows the stream's true-tool frequencies, plus the flaky coin "
    "flips and the cold-start tools; (3) the warm-up sample: which train queries make the labelled "
    "warm-up pairs (and the D-LinUCB projection). The test queries, the catalog and the models stay fixed."
)


def _nothing_to_evaluate(art: ArtifactDir, config: dict[str, Any], fp: str, n_tools: int) -> dict[str, Any]:
    """A report that says why no number was measured (no Syn or Real query matches the catalog)."""
    reason = "no test or val query of syn/ or real/ has a true tool in tools.parquet: nothing was measured"
    log.warning(reason)
    write_json(art.eval / "config.json", {**config, "fingerprint": fp})
    write_json(art.eval / "report.json", {"config": config, "data": {"n_tools": n_tools}, "skipped": reason})
    (art.eval / "report.md").write_text(f"# EcoAgent evaluation report\n\n{reason}.\n")
    stats = {"evaluated_queries": 0, "skipped": reason}
    art.mark_done("evaluate", fp, stats)
    return stats


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The few numbers the CLI prints and the completion marker keeps."""
    stats: dict[str, Any] = {"seconds": round(result["timings_s"]["total"], 1)}
    for row in result["offline"]["rows"]:
        if row["method"] == FINE_TUNED:
            stats[f"offline {row['split']} MRR"] = round(row["MRR"], 4)
    for dataset, block in result["simulation"].items():
        for name, sc in block["scenarios"].items():
            cell = sc["aggregate"].get("RATED Full", {}).get("post_fail_sr", {})
            if cell.get("mean") is not None:
                stats[f"{dataset} {name} Post-Fail SR"] = round(cell["mean"], 4)
    return stats
