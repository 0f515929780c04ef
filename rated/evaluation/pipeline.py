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
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json
from ecoagent.config import Profile
from rated.evaluation import dynamic, offline, report
from rated.evaluation.baselines import BatchUpdate, GlobalMAB, HealthCheckBlacklist, Retry, StaticRetriever
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.data import Catalog, Dataset, load_pool
from rated.evaluation.failures import Scenario
from rated.evaluation.metrics import PostFailSuccessRate
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.retrievers import BM25Retriever, DenseRetriever, TfidfRetriever
from rated.evaluation.simulator import QueryPool, Stream

log = logging.getLogger(__name__)

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
    warm: QueryPool  # the sampled warm-up pairs (repeats allowed)
    warm_split: str
    dropped_pairs: int
    eval_split: str = "test"
    emb: dict[str, np.ndarray] = field(default_factory=dict)  # encoder -> test query embeddings
    warm_emb: dict[str, np.ndarray] = field(default_factory=dict)
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # baseline -> [n_test, n_tools]


def _warm_pool(
    art: ArtifactDir, dataset: Dataset, catalog: Catalog, n: int, seed: int, splits: tuple[str, ...]
) -> tuple[QueryPool, str]:
    """``n`` pairs drawn with replacement from the first non-empty of ``splits``, seeded."""
    for split in splits:
        pool, _ = load_pool(art, dataset, split, catalog)
        if len(pool):
            rng = np.random.default_rng([seed, 0xA11])
            pick = rng.integers(0, len(pool), size=n) if n else np.zeros(0, dtype=np.int64)
            return QueryPool(
                [pool.queries[i] for i in pick],
                [pool.relevant[i] for i in pick],
                [pool.query_ids[i] for i in pick],
            ), split
    return QueryPool([], [], []), "none"


def _load_inputs(
    art: ArtifactDir, catalog: Catalog, cfg: EvaluationConfig, seed: int
) -> dict[str, DatasetInputs]:
    """Each dataset's test split (val when a small build has no test queries; recorded as
    ``eval_split``), and warm-up pairs from train (or val, if val is not the evaluated split)."""
    out = {}
    for dataset in ("syn", "real"):
        for split in ("test", "val"):
            pool, dropped = load_pool(art, dataset, split, catalog)  # type: ignore[arg-type]
            if len(pool):
                break
        if not len(pool):
            log.warning("%s has no test or val queries whose tool is in the catalog; skipped", dataset)
            continue
        if split != "test":
            log.warning("%s has no test queries: evaluating on its %s split", dataset, split)
        warm_splits = ("train", "val") if split == "test" else ("train",)
        warm, warm_split = _warm_pool(art, dataset, catalog, cfg.warm_up_pairs, seed, warm_splits)  # type: ignore[arg-type]
        out[dataset] = DatasetInputs(dataset, pool, warm, warm_split, dropped, eval_split=split)
    return out


def _load_rated(art: ArtifactDir, catalog: Catalog, profile: Profile, top_k: int) -> dict[str, Any]:
    """RATED Full from DIR/model, the variants that share its encoder, and w/o Contrastive."""
    from rated import RATED, RATEDConfig, Variant

    base = RATEDConfig.for_profile(profile, top_k=top_k)
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
            d.warm_emb[key] = _encode_unique(models[key], d.warm.queries)


def _baseline_scores(
    inputs: dict[str, DatasetInputs],
    catalog: Catalog,
    cfg: EvaluationConfig,
    models: dict[str, Any],
    art: ArtifactDir,
) -> dict[str, float]:
    """Score matrices of TF-IDF, BM25 and the pretrained dense encoders on every test pool."""
    caches = (art.eval / "cache", art.real / "cache")
    timings = {}
    nc_cfg = models["config"]
    for retriever in (TfidfRetriever(), BM25Retriever()):
        t0 = time.perf_counter()
        retriever.fit(catalog.documents)
        for d in inputs.values():
            d.scores[retriever.name] = retriever.scores(d.test.queries)
        timings[retriever.name] = time.perf_counter() - t0
    for name in cfg.dense_models:
        t0 = time.perf_counter()
        label = name.split("/")[-1]
        if name == nc_cfg.query_encoder == nc_cfg.tool_encoder:
            # the w/o Contrastive towers are exactly this pretrained encoder: reuse their embeddings
            tools = models["no_contrastive"].index.embeddings
            for d in inputs.values():
                d.scores[label] = (d.emb["no_contrastive"] @ tools.T).astype(np.float64)
        else:
            dense = DenseRetriever(name, cache_dirs=caches, write_cache=caches[0]).fit(catalog.documents)
            if dense.cache_hit is not None:
                log.info("%s tool embeddings read from %s", label, dense.cache_hit)
            for d in inputs.values():
                d.scores[label] = dense.scores(d.test.queries)
        timings[label] = time.perf_counter() - t0
    return timings


def _rated_policies(models: dict[str, Any], d: DatasetInputs) -> dict[str, RatedPolicy]:
    """Warm RATED variants for one dataset (w/o Contrastive uses its own query embeddings)."""
    v = models["Variant"]
    base = models["config"]
    specs = {
        "RATED w/o Feedback": (models["full"].fresh(base.replace(variant=v.NO_FEEDBACK)), "full"),
        "RATED w/ Global MAB": (models["full"].fresh(base.replace(variant=v.GLOBAL_MAB)), "full"),
        "RATED w/o Contrastive": (models["no_contrastive"].fresh(), "no_contrastive"),
        "RATED Full": (models["full"].fresh(base), "full"),
    }
    out = {}
    for name, (model, enc) in specs.items():
        policy = RatedPolicy(model, d.emb[enc], name)
        if len(d.warm):
            policy.warm_up(d.warm_emb[enc], d.warm.relevant)
        out[name] = policy
    return out


def run_offline(
    inputs: dict[str, DatasetInputs], models: dict[str, Any], cfg: EvaluationConfig, seed: int
) -> dict[str, Any]:
    rows = []
    for d in inputs.values():
        for name, scores in d.scores.items():
            rows.append(
                offline.score_rankings(name, d.name, offline.rankings_from_scores(scores), d.test, "baseline")
            )
        cold = RatedPolicy(models["full"].fresh(), d.emb["full"], "RATED Full (cold, no warm-up)")
        rows.append(
            offline.score_rankings(
                cold.name, d.name, offline.rated_rankings(cold, d.emb["full"]), d.test, "rated"
            )
        )
        for name, policy in _rated_policies(models, d).items():
            rankings = offline.rated_rankings(policy, policy.query_emb)
            rows.append(offline.score_rankings(name, d.name, rankings, d.test, "rated"))
    sig = offline.significance(rows, "RATED Full", cfg.n_resamples, seed)
    return {
        "rows": [r.to_dict() for r in rows],
        "significance": sig,
        "per_query_rr": {f"{r.method} | {r.split}": r.scores.rr.round(6).tolist() for r in rows},
        "warm_up": {d.name: {"pairs": len(d.warm), "split": d.warm_split} for d in inputs.values()},
        "note": (
            "MRR is MRR@100; Recall@k = |relevant ∩ top-k| / |relevant| (BEIR), so a Real query with two true "
            "tools caps Recall@1 at 0.5. RATED rows other than 'cold' are scored after the bandit warm-up "
            "(feedback on the warm-up pairs of the train split, all tools healthy); without it Full, w/o "
            "Feedback and w/ Global MAB rank identically (semantic + prior). w/o Feedback ignores the warm-up."
        ),
    }


def _methods(
    d: DatasetInputs, models: dict[str, Any], catalog: Catalog, cfg: EvaluationConfig
) -> dict[str, dynamic.PolicyFactory]:
    methods: dict[str, Any] = {}
    for name, scores in d.scores.items():
        methods[name] = StaticRetriever(CandidateLists.from_scores(scores, cfg.top_k), name)
    tools_emb = models["full"].index.embeddings
    shared = CandidateLists.from_scores((d.emb["full"] @ tools_emb.T).astype(np.float64), cfg.top_k)
    methods["HealthCheckBlacklist"] = HealthCheckBlacklist(shared)
    methods[f"Retry (k={cfg.retry_k})"] = Retry(shared, k=cfg.retry_k)
    methods[f"BatchUpdate (ToolRL-like, B={cfg.batch})"] = BatchUpdate(
        shared, len(catalog), cfg.batch, cfg.batch_lr
    )
    base = models["config"]
    gmab = GlobalMAB(
        shared, catalog.prior, base.weights, gamma=base.gamma, alpha=base.alpha, name="Global MAB"
    )
    if len(d.warm):
        warm_cands = CandidateLists.from_scores(
            (d.warm_emb["full"] @ tools_emb.T).astype(np.float64), cfg.top_k
        )
        gmab.warm_up(warm_cands, d.warm.relevant)
    methods["Global MAB"] = gmab
    rated = _rated_policies(models, d)
    for name in ("RATED w/o Feedback", "RATED w/ Global MAB", "RATED Full"):
        methods[name] = rated[name]
    return {name: (lambda p=policy: p) for name, policy in methods.items()}


def run_simulation(
    inputs: dict[str, DatasetInputs],
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    eval_dir: Path,
) -> dict[str, Any]:
    sim = cfg.simulation()
    out: dict[str, Any] = {}
    for dataset in cfg.streams:
        if dataset not in inputs:
            continue
        d = inputs[dataset]
        methods = _methods(d, models, catalog, cfg)
        scenarios = cfg.all_scenarios(extended=dataset in cfg.extended_streams)
        block: dict[str, Any] = {
            "steps": sim.steps,
            "pool_size": len(d.test),
            "eval_split": d.eval_split,
            "scenarios": {},
            "plots": [],
        }
        for scenario in scenarios:
            t0 = time.perf_counter()
            runs = [
                dynamic.run_stream(methods, d.test, len(catalog), scenario, sim, seed, keep_curves=(i == 0))
                for i, seed in enumerate(sim.seeds)
            ]
            curves = runs[0].pop("curves")
            for r in runs[1:]:
                r.pop("curves")
            block["n_true_tools"] = runs[0]["n_true_tools"]
            block["scenarios"][scenario.name] = {
                "scenario": asdict(scenario),
                "methods": list(methods),  # table order (the JSON file sorts keys)
                "aggregate": dynamic.aggregate(runs),
                "runs": runs,
                "seconds": time.perf_counter() - t0,
            }
            if scenario.kind == "permanent" or dataset in cfg.extended_streams:
                slug = "".join(c if c.isalnum() else "_" for c in f"sr_{dataset}_{scenario.name}").strip("_")
                path = eval_dir / f"{slug[:60]}.png"
                report.plot_sr_curves(
                    curves,
                    sim.onset,
                    sim.moving_window,
                    f"{dataset}: {scenario.name}, seed {sim.seeds[0]}",
                    path,
                )
                block["plots"].append(path.name)
            log.info("simulation %s / %s: %.1fs", dataset, scenario.name, time.perf_counter() - t0)
        out[dataset] = block
    return out


def run_sensitivity(
    inputs: dict[str, DatasetInputs],
    models: dict[str, Any],
    catalog: Catalog,
    cfg: EvaluationConfig,
    eval_dir: Path,
) -> dict[str, Any]:
    from rated.evaluation.sensitivity import sweep

    dataset = next((s for s in cfg.streams if s in inputs), next(iter(inputs)))
    d = inputs[dataset]
    seed = cfg.seeds[0]
    steps = min(cfg.sensitivity_steps, cfg.steps)
    stream = Stream.sample(d.test, steps, seed)
    scenario = Scenario("rho=20%", "permanent", rho=0.2, onset=cfg.onset)
    schedule = scenario.build(stream.relevant_per_step(), len(catalog), seed)
    metric = PostFailSuccessRate(cfg.onset, min(cfg.window_end, steps))
    result = sweep(
        models["full"], d.emb["full"], (d.warm_emb["full"], d.warm.relevant), stream, schedule, metric
    )
    result["weights"]["plot"] = report.plot_grid(
        result["weights"], "Post-Fail SR vs (w1, w3)", eval_dir / "sensitivity_weights.png"
    ).name
    result["bandit"]["plot"] = report.plot_grid(
        result["bandit"], "Post-Fail SR vs (γ, α)", eval_dir / "sensitivity_bandit.png"
    ).name
    result["note"] = (
        f"{dataset} test stream, seed {seed}, {steps:,} steps, ρ = 20%, Post-Fail SR over steps "
        f"{cfg.onset + 1:,}-{min(cfg.window_end, steps):,}; w2 = 1 - w1 - w3; other settings as RATED Full."
    )
    return result


def run_latency(
    inputs: dict[str, DatasetInputs], models: dict[str, Any], cfg: EvaluationConfig
) -> dict[str, Any]:
    from rated.evaluation.latency import measure

    v, base, full = models["Variant"], models["config"], models["full"]
    d = inputs.get("real") or next(iter(inputs.values()))
    queries = (d.test.queries * (cfg.latency_queries // max(len(d.test), 1) + 1))[: cfg.latency_queries]
    rows = measure(
        full.fresh(base),
        full.fresh(base.replace(variant=v.NO_FEEDBACK)),
        full.fresh(base.replace(variant=v.GLOBAL_MAB)),
        queries,
        cfg.batch,
    )
    return {
        "rows": rows,
        "note": f"{len(queries)} {d.name} test queries, one call per query, one torch and one BLAS thread, this machine.",
    }


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
    out: Path, profile: Profile, seeds: int | tuple[int, ...] = 5, steps: int | None = None, **options: Any
) -> dict[str, Any]:
    """Run the whole evaluation and write DIR/eval/; returns the headline numbers.

    Args:
        out: the artifact folder (reads tools.parquet, syn/, real/, model/).
        profile: models and the base seed.
        seeds: number of simulation seeds (or the seeds themselves).
        steps: T per stream (default 10,000).
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
    inputs = _load_inputs(art, catalog, cfg, cfg.seeds[0])
    if not inputs:
        return _nothing_to_evaluate(art, config, fp, len(catalog))
    models = _load_rated(art, catalog, profile, cfg.top_k)
    _encode_all(inputs, models)
    config["rated_config"] = models["config"].to_dict()
    config["fingerprint"] = fp
    write_json(eval_dir / "config.json", config)
    timings["load + encode"] = time.perf_counter() - t0
    timings.update(
        {f"fit + score {k}": v for k, v in _baseline_scores(inputs, catalog, cfg, models, art).items()}
    )

    result: dict[str, Any] = {"config": {**config, "simulation": cfg.simulation().to_dict()}}
    result["data"] = {
        "n_tools": len(catalog),
        **{
            d.name: {
                "test_queries": len(d.test),
                "dropped_pairs": d.dropped_pairs,
                "warm_up_pairs": len(d.warm),
                "warm_up_split": d.warm_split,
                "eval_split": d.eval_split,
            }
            for d in inputs.values()
        },
    }
    # one BLAS thread: the simulation and the per-query latency runs make many tiny products, where
    # thread hand-offs cost more than they save (and on a shared machine they stall); the batch
    # encodings above keep torch's threads
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.perf_counter()
        result["offline"] = run_offline(inputs, models, cfg, cfg.seeds[0])
        timings["offline"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        result["simulation"] = run_simulation(inputs, models, catalog, cfg, eval_dir)
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
    (eval_dir / "report.md").write_text(report.render_markdown(result))
    stats = headline(result)
    art.mark_done("evaluate", fp, stats)
    return stats


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
        if row["method"] == "RATED Full":
            stats[f"offline {row['split']} MRR"] = round(row["MRR"], 4)
    for dataset, block in result["simulation"].items():
        for name, sc in block["scenarios"].items():
            cell = sc["aggregate"].get("RATED Full", {}).get("post_fail_sr", {})
            if cell.get("mean") is not None:
                stats[f"{dataset} {name} Post-Fail SR"] = round(cell["mean"], 4)
    return stats
