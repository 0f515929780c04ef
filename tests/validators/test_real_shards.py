"""Real's judgments cut into shards: the stage then finds every pair scored and decides as one process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ecoagent.artifacts import write_parquet
from validators.pipeline import CHECKPOINTS, judge_shard, run
from validators.validator import PairText, shard_checkpoint, shard_pairs

# transformers' SmolLM2 scores a pair the same in any batch or process (llama.cpp's arithmetic moves
# slightly with what its slots have cached), so the sharded and the single run can be compared exactly
BACKEND = "transformers"


def _pair(query_id: str, tool_id: str) -> PairText:
    return PairText(query_id, tool_id, f"query {query_id}", tool_id, "a tool")


def test_shards_take_whole_queries_and_cover_every_pair_once() -> None:
    pairs = [_pair(q, t) for q, t in [("a", "x"), ("a", "y"), ("b", "x"), ("c", "z"), ("b", "y"), ("d", "x")]]
    parts = [shard_pairs(pairs, i, 3) for i in range(3)]
    assert sorted(p.key for part in parts for p in part) == sorted(p.key for p in pairs)
    # each query lives in one shard, in first-seen order: a -> 0, b -> 1, c -> 2, d -> 0
    assert [[p.key for p in part] for part in parts] == [
        [("a", "x"), ("a", "y"), ("d", "x")],
        [("b", "x"), ("b", "y")],
        [("c", "z")],
    ]
    assert shard_pairs(pairs, 0, 1) == pairs
    with pytest.raises(ValueError, match="shard 3 is not in 0..2"):
        shard_pairs(pairs, 3, 3)
    assert shard_checkpoint(Path("real/labels_checkpoint.jsonl"), 1, 12).name == (
        "labels_checkpoint.shard-001-of-012.jsonl"
    )


def _two_outs(tmp_path: Path, tools: pl.DataFrame) -> tuple[Path, Path]:
    """Two artifact folders holding the same tool table: one for a single process, one for the shards."""
    single, sharded = tmp_path / "single", tmp_path / "sharded"
    for out in (single, sharded):
        out.mkdir()
        write_parquet(tools, out / "tools.parquet")
    return single, sharded


def _assert_same_decisions(single: Path, sharded: Path, stats: dict[str, Any]) -> None:
    """The stage after the shards scored nothing itself and decided what one process decided."""
    timings = stats["timings"]
    assert timings["labels_scored"] == timings["validator_scored"] == timings["mcp_prompts_scored"] == 0
    a, b = (
        pl.read_parquet(o / "real" / "decisions.parquet").sort("query_id", "tool_id")
        for o in (single, sharded)
    )
    assert a.drop("validator_score").equals(b.drop("validator_score"))
    assert (a["validator_score"] - b["validator_score"]).abs().max() == pytest.approx(0.0, abs=1e-5)


def test_two_shards_then_the_stage_give_the_decisions_of_one_process(
    tmp_path: Path,
    tools_slice: pl.DataFrame,
    small_mirror: Path,
    test_profile: Any,
    real_options: dict[str, Any],
) -> None:
    from ecoagent.config import ModelConfig
    from ecoagent.llm import make_llm

    profile = test_profile.replace(llm_backend=BACKEND)
    single, sharded = _two_outs(tmp_path, tools_slice)
    alone = run(single, profile, mirror=small_mirror, **real_options)
    assert alone["timings"]["validator_scored"] > 0

    llm = make_llm(ModelConfig(llm=profile.models.llm, llm_backend=BACKEND))  # one load for both shards
    try:
        shards = [
            judge_shard(sharded, profile, i, 2, mirror=small_mirror, llm=llm, **real_options)
            for i in range(2)
        ]
    finally:
        llm.close()
    assert [s["shard"] for s in shards] == [0, 1]
    judged = alone["validator"]["scored"]
    assert shards[0]["pairs"]["validator"] + shards[1]["pairs"]["validator"] == judged
    assert min(s["pairs"]["validator"] for s in shards) > 0  # both shards got work
    for name in ("labels", "validator"):  # every checkpoint has its two shard files, the stage's own none yet
        assert all(shard_checkpoint(sharded / "real" / CHECKPOINTS[name], i, 2).exists() for i in range(2))
        assert not (sharded / "real" / CHECKPOINTS[name]).exists()

    stats = run(sharded, profile, mirror=small_mirror, **real_options)
    _assert_same_decisions(single, sharded, stats)
    # a rebuild maps the shards again: with the stage done they return at once, without recall or a model
    again = judge_shard(sharded, profile, 0, 2, mirror=small_mirror, llm=object(), **real_options)
    assert again["pairs"] == {} and "done" in again["skipped"]
    assert stats["validator"]["threshold"] == pytest.approx(alone["validator"]["threshold"], abs=1e-5)


@pytest.mark.slow  # ~2 CPU-min: two model loads on Dask workers, then the stage
def test_two_dask_workers_judge_what_one_process_does(
    tmp_path: Path,
    tools_slice: pl.DataFrame,
    small_mirror: Path,
    test_profile: Any,
    real_options: dict[str, Any],
) -> None:
    distributed = pytest.importorskip("distributed")
    profile = test_profile.replace(llm_backend=BACKEND)
    single, sharded = _two_outs(tmp_path, tools_slice)
    run(single, profile, mirror=small_mirror, **real_options)

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
    with cluster, distributed.Client(cluster) as client:
        futures = [
            client.submit(judge_shard, sharded, profile, i, 2, small_mirror, pure=False, **real_options)
            for i in range(2)
        ]
        shards = client.gather(futures)
    assert sorted(s["shard"] for s in shards) == [0, 1]
    _assert_same_decisions(single, sharded, run(sharded, profile, mirror=small_mirror, **real_options))
