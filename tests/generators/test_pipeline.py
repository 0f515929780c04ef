"""The Syn stage end to end on a slice of the real crawl, with the real embedded model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import get_profile
from ecoagent.llm import LLMClient
from generators.dedup import MinHashDeduper, jaccard, shingles
from generators.pipeline import (
    QUERY_SCHEMA,
    catalog_median,
    catalog_weights,
    generation_key,
    median_interval,
    run,
    weighted_median,
)


@pytest.mark.slow
def test_syn_writes_consistent_outputs_and_resumes(small_out: Path, llm: LLMClient) -> None:
    profile = get_profile("embedded").replace(syn_queries_per_tool=3)
    stats = run(small_out, profile, max_tools=4, llm=llm)
    art = ArtifactDir(small_out)
    queries = pl.read_parquet(art.syn_queries)
    positives = pl.read_parquet(art.syn_positives)
    negatives = pl.read_parquet(art.syn_negatives)
    tools = pl.read_parquet(art.tools)

    assert dict(queries.schema) == QUERY_SCHEMA
    assert queries.height == stats["queries"]["total"] > 0
    assert queries["query_id"].n_unique() == queries.height
    assert set(queries["tool_id"]) <= set(tools["tool_id"])
    assert queries["n_words"].min() >= 5 and queries["n_words"].max() <= 120
    assert (queries["model_file_sha256"] == llm.info()["model_file_sha256"]).all()
    assert json.loads(queries["sampling"][0])["temperature"] == 0.6
    assert (
        positives.columns == ["query_id", "query", "tool_id", "split", "split_tool"]
        and positives.height == queries.height
    )

    # two negatives per positive, never the positive itself, each with a score and a kind
    assert negatives.height == 2 * queries.height
    assert (negatives["tool_id"] != negatives["positive_tool_id"]).all()
    assert sorted(negatives["kind"].unique()) == ["hard", "random"]
    assert negatives["score"].is_not_null().all()

    # no query and no near-duplicate across splits
    texts = queries["query"].to_list()
    splits = queries["split"].to_list()
    assert queries.group_by("query").agg(pl.col("split").n_unique()).filter(pl.col("split") > 1).height == 0
    assert all(splits[i] == splits[j] for i, j in MinHashDeduper().duplicate_pairs(texts))
    assert not MinHashDeduper().duplicate_pairs(texts)  # dedup already removed them all

    minilm, mpnet = profile.models.sbert, profile.models.recall_encoder
    assert set(stats["yield"]) >= {minilm, mpnet}
    for name in (minilm, mpnet):  # equivalents only add true tools: never a lower yield
        strict, labels = stats["yield"][name], stats["yield"][name]["with_equivalents"]
        assert labels["per_tool_mean"] >= strict["per_tool_mean"] and labels["mrr"] >= strict["mrr"]
        low, high = strict["per_tool_median_ci90"]
        assert low <= strict["per_tool"]["median"] <= high
        # the histogram counts every sampled tool once and agrees with the mean
        hist = {int(k): n for k, n in strict["tools_by_hits"].items()}
        assert sum(hist.values()) == 4 and max(hist) == strict["per_tool"]["max"]
        assert sum(k * n for k, n in hist.items()) / 4 == pytest.approx(strict["per_tool_mean"], abs=1e-3)
        low, high = strict["per_tool_median_catalog_ci90"]
        assert low <= strict["per_tool_median_catalog"] <= high
        # the queries that do not name their tool: a subset, so never more hits per tool
        plain = strict["not_naming_tool"]
        assert plain["queries"] == int((~queries["names_tool"]).sum())
        assert plain["per_tool_mean"] <= strict["per_tool_mean"]
    assert stats["leakage"]["tool_split"] == 0 and stats["leakage"]["query_split"] == 0
    assert sum(p["queries"] for p in stats["per_platform"].values()) == queries.height
    # how alike each tool's kept queries are, recomputed by hand from the kept queries
    similar, means = stats["queries"]["within_tool_similarity"], []
    for group in queries.partition_by("tool_id"):
        sets = [shingles(q) for q in group["query"]]
        if len(sets) > 1:
            means.append(np.mean([jaccard(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]))
    assert similar["tools"] == len(means)
    if means:
        assert similar["mean"] == pytest.approx(float(np.mean(means)), abs=1e-4)
        assert 0.0 <= similar["min"] <= similar["mean"] <= similar["max"] < 1.0
    # the tool-disjoint split never puts one tool in two splits
    assert queries.group_by("tool_id").agg(pl.col("split_tool").n_unique())["split_tool"].max() == 1
    assert stats["tools"]["sampled"] == 4
    assert stats["tools"]["table_per_platform"] == dict(tools.group_by("platform").len().iter_rows())
    assert json.loads(art.syn_stats.read_text()) == json.loads(json.dumps(stats))

    # a finished stage is not redone; a rerun after its marker is gone reuses the generation checkpoint
    ckpt = next((art.syn / "checkpoint").glob("*.jsonl"))
    before = ckpt.read_bytes()
    assert run(small_out, profile, max_tools=4, llm=llm) == json.loads(art.syn_stats.read_text())
    (art.markers / "syn.json").unlink()
    by_tool = run(small_out, profile, max_tools=4, llm=llm)
    assert ckpt.read_bytes() == before
    resumed = by_tool["generation"]
    assert resumed["generated_tokens"] == 0  # everything came from the checkpoint
    # the run's own cost: four tools generated the first time, none on the resume
    assert stats["generation"]["tools_generated"] == 4 and stats["generation"]["llm_cpu_s"] > 0
    assert resumed["tools_generated"] == 0 and resumed["llm_cpu_s_per_tool"] is None
    speed = (
        "generated_tokens",
        "tokens_per_s",
        "tools_generated",
        "llm_wall_s",
        "llm_cpu_s",
        "llm_cpu_s_per_tool",
    )
    assert {k: v for k, v in resumed.items() if k not in speed} == {
        k: v for k, v in stats["generation"].items() if k not in speed
    }


def test_missing_tool_table_names_the_stage(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="ecoagent crawl"):
        run(tmp_path, get_profile("embedded"), max_tools=1)


def test_bad_tool_row_is_named(small_out: Path) -> None:
    tools = pl.read_parquet(small_out / "tools.parquet")
    tools = tools.with_columns(
        pl.when(pl.col("tool_id") == tools["tool_id"][0])
        .then(pl.lit(""))
        .otherwise(pl.col("description"))
        .alias("description")
    )
    tools.write_parquet(small_out / "tools.parquet")
    with pytest.raises(ValueError, match=f"tool '{tools['tool_id'][0]}': empty description"):
        run(small_out, get_profile("embedded"), max_tools=1)


@pytest.mark.slow
def test_the_embedded_default_model_end_to_end(small_out: Path) -> None:
    """Qwen2.5-Coder-1.5B on llama.cpp, the embedded default, through the whole Syn stage on 3 real tools."""
    pytest.importorskip("xllamacpp")
    from ecoagent.llm import make_llm
    from generators.filters import copies_example, ends_sentence
    from generators.prompts import FEW_SHOT

    profile = get_profile("embedded")
    llm = make_llm(profile.models, threads=1)
    stats = run(small_out, profile, max_tools=3, llm=llm)
    queries = pl.read_parquet(ArtifactDir(small_out).syn_queries)
    assert stats["mode"] == "list" and stats["model"]["backend"] == "llamacpp"
    assert queries.height >= 20  # 3 tools x 10 wanted, less what the filters and dedup removed
    texts = queries["query"].to_list()
    assert not any(copies_example(q, [a for _, _, a in FEW_SHOT]) for q in texts)
    # the last item of an answer must end its sentence (the filter); the model ends nearly all the others too
    assert sum(ends_sentence(q) for q in texts) >= 0.9 * len(texts)
    assert stats["yield"][profile.models.sbert]["per_tool"]["median"] >= 5


def test_median_interval_resamples_tools_within_their_platform() -> None:
    assert median_interval(np.full(30, 7.0), ["a"] * 15 + ["b"] * 15) == [7.0, 7.0]
    # half the tools yield 9 (platform a), half 3 (platform b): every stratified resample keeps the
    # halves, so its median is always 6; resampling across platforms would scatter it over 3, 6 and 9
    values, strata = np.array([9.0] * 50 + [3.0] * 50), ["a"] * 50 + ["b"] * 50
    assert median_interval(values, strata) == [6.0, 6.0]
    assert median_interval(values, ["x"] * 100) == [3.0, 9.0]
    # 55 tools at 8 and 45 at 2 on one platform: the median is 8, but in about a fifth of resamples
    # half the tools are 2s, so the interval reaches down to 5 (a tie) or 2
    low, high = median_interval(np.array([8.0] * 55 + [2.0] * 45), ["x"] * 100)
    assert low <= 5.0 and high == 8.0
    assert median_interval(np.array([]), []) == []


def test_weighted_median_is_the_median_with_equal_weights() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 10, 11):
        values = rng.integers(0, 11, n).astype(float)
        assert weighted_median(values, np.ones(n)) == float(np.median(values))
    # one value standing for nine items outweighs three others
    assert weighted_median(np.array([1.0, 2.0, 3.0, 9.0]), np.array([1.0, 1.0, 1.0, 9.0])) == 9.0
    with pytest.raises(ValueError, match="weights"):
        weighted_median(np.array([1.0]), np.array([0.0]))


def test_catalog_median_weighs_each_platform_by_its_share_of_the_table() -> None:
    # 20 tools of a small platform yield 2 each, 20 of a large one 8 each: the sample's median is 5,
    # but the table holds nine tools of the large platform for each of the small one's, so its median is 8
    values, platforms = np.array([2.0] * 20 + [8.0] * 20), ["small"] * 20 + ["large"] * 20
    assert float(np.median(values)) == 5.0
    assert catalog_weights(platforms, {"small": 100, "large": 900})[[0, -1]].tolist() == [5.0, 45.0]
    assert catalog_median(values, platforms, {"small": 100, "large": 900}) == {
        "median": 8.0,
        "ci90": [8.0, 8.0],
    }
    # a table as balanced as the sample gives the sample's own median back
    assert catalog_median(values, platforms, {"small": 20, "large": 20}) == {
        "median": 5.0,
        "ci90": [5.0, 5.0],
    }
    assert catalog_median(np.array([]), [], {}) == {"median": None, "ci90": []}
    with pytest.raises(ValueError, match="other"):
        catalog_weights(["other"], {"small": 1})


def test_the_generation_key_names_the_model_not_how_it_ran() -> None:
    """Checkpoints resume across thread counts, slots and llama.cpp builds, never across models."""
    profile = get_profile("embedded")
    info = {"backend": "llamacpp", "model": "Qwen/Qwen2.5-Coder-1.5B-Instruct", "model_file_sha256": "a"}
    ran = {
        "runtime": "xllamacpp 1",
        "threads": 2,
        "slots": 4,
        "runtime_openmp": True,
        "runtime_amx_patched": True,
    }
    key = generation_key({**info, **ran}, profile)[1]
    # an older build's info, without runtime_amx_patched
    other_run = {"runtime": "xllamacpp 2", "threads": 1, "slots": 1, "runtime_openmp": False}
    assert generation_key({**info, **other_run}, profile)[1] == key
    assert generation_key({**info, **ran, "model_file_sha256": "b"}, profile)[1] != key
