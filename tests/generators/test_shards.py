"""Syn cut into shards: a local two-worker Dask cluster writes the same rows as one process."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from ecoagent.config import get_profile
from generators.pipeline import generate_shard, run

# transformers' SmolLM2 samples every row with its own seed, so text does not depend on the process or
# the batch it ran in (llama.cpp's arithmetic varies slightly with its prompt cache)
PROFILE = get_profile("tiny").replace(llm_backend="transformers", syn_queries_per_tool=2)


def _rows(out: Path) -> list[tuple[str, str, str, str]]:
    q = pl.read_parquet(out / "syn" / "queries.parquet").sort("query_id")
    return list(q.select("query_id", "tool_id", "split", "split_tool").iter_rows())


@pytest.mark.slow  # ~4 CPU-min: three model loads and two generations of three tools
def test_two_dask_workers_give_the_rows_of_one_process(small_out: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    sharded = tmp_path / "sharded"
    shutil.copytree(small_out, sharded)
    run(small_out, PROFILE, max_tools=3)  # one process

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
    with cluster, distributed.Client(cluster) as client:
        futures = [client.submit(generate_shard, sharded, PROFILE, i, 2, 3, pure=False) for i in range(2)]
        shards = client.gather(futures)
        workers = {w for f in futures for w in client.who_has(f).get(f.key, ())}
    assert sorted(s["shard"] for s in shards) == [0, 1] and sum(s["tools"] for s in shards) == 3
    assert len(workers) >= 1
    checkpoints = sorted((sharded / "syn" / "checkpoint").glob("*.shard-*.jsonl"))
    assert len(checkpoints) == 2  # one checkpoint per shard

    stats = run(sharded, PROFILE, max_tools=3)  # finds every tool generated; does only the rest
    assert stats["generation"]["generated_tokens"] == 0
    assert _rows(sharded) == _rows(small_out)


def test_shard_index_is_checked(small_out: Path) -> None:
    with pytest.raises(ValueError, match="shard 2 is not in 0..1"):
        generate_shard(small_out, PROFILE, 2, 2)
