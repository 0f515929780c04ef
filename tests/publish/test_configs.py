"""The configs: every one loads offline with `datasets.load_dataset(folder, name)` and the expected rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_parquet
from ecoagent.config import get_profile
from publish.configs import build_configs
from publish.pipeline import run


def _expected(out: Path) -> dict[str, dict[str, int]]:
    art = ArtifactDir(out)
    tools = pl.read_parquet(art.tools).height
    syn = pl.read_parquet(art.syn_positives)
    neg = pl.read_parquet(art.syn_negatives)
    pairs = pl.read_parquet(art.real_pairs)
    names = {"train": "train", "val": "validation", "test": "test"}

    def per_split(frame: pl.DataFrame, column: str = "split") -> dict[str, int]:
        return {names[s]: n for s, n in frame.group_by(column).len().iter_rows()}

    qrels = per_split(pl.concat([syn.select("split"), pairs.select("split")]))
    qrels["syn_test"] = syn.filter(pl.col("split") == "test").height
    qrels["real_test"] = pairs.filter(pl.col("split") == "test").height
    return {
        "tools": {"train": tools},
        "syn": per_split(syn),
        "syn_tool_split": per_split(syn, "split_tool"),
        "syn_negatives": per_split(neg),
        "real": per_split(pairs),
        "real_decisions": {"train": pl.read_parquet(art.real_decisions).height},
        "mcp_prompts": {"test": pl.read_parquet(art.real_mcp_prompts).height},
        "mcp_server_prompts": {"test": pl.read_parquet(art.real_mcp_server_prompts).height},
        "manual_check": {"train": pl.read_parquet(art.review_sample).height},
        "corpus": {"corpus": tools},
        "queries": {"queries": syn["query_id"].n_unique() + pairs["query_id"].n_unique()},
        "qrels": qrels,
    }


def test_every_config_loads_offline_with_expected_rows(
    published: dict, small_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = str(small_out / "dataset")
    expected = _expected(small_out)
    assert published["configs"] == expected
    assert published["absent"] == {}
    for name, splits in {**expected, "default": expected["qrels"]}.items():
        loaded = datasets.load_dataset(folder, name, cache_dir=str(tmp_path / "cache"))
        assert {s: d.num_rows for s, d in loaded.items()} == splits, name
    # no name: the default config, the qrels (as MTEB expects)
    assert (
        datasets.load_dataset(folder, split="test", cache_dir=str(tmp_path / "cache")).num_rows
        == (expected["qrels"]["test"])
    )


def test_the_tool_disjoint_config_keeps_every_tool_in_one_split(
    published: dict, small_out: Path, tmp_path: Path
) -> None:
    """`syn_tool_split` loads with the same pairs as `syn`, and no tool crosses its splits (unlike `syn`)."""
    folder = str(small_out / "dataset")
    cache = str(tmp_path / "cache")
    by_tool = datasets.load_dataset(folder, "syn_tool_split", cache_dir=cache)
    by_query = datasets.load_dataset(folder, "syn", cache_dir=cache)
    tools_in = {s: set(d["tool_id"]) for s, d in by_tool.items()}
    assert set(tools_in) == {"train", "validation", "test"}
    for a in tools_in:
        for b in tools_in:
            assert a == b or not tools_in[a] & tools_in[b], (a, b)
    assert sorted(q for d in by_tool.values() for q in d["query_id"]) == sorted(
        q for d in by_query.values() for q in d["query_id"]
    )
    assert "split_tool" not in by_query["train"].column_names and "split" not in by_tool["train"].column_names
    query_split_tools = {s: set(d["tool_id"]) for s, d in by_query.items()}
    assert query_split_tools["test"] & query_split_tools["train"]  # the paper's split shares tools
    mcp = datasets.load_dataset(folder, "mcp_prompts", split="test", cache_dir=cache)
    assert mcp.num_rows == 2 and mcp.column_names == ["query_id", "query", "tool_ids", "server", "source"]
    every = datasets.load_dataset(folder, "mcp_server_prompts", split="test", cache_dir=cache)
    assert every.num_rows == 3 and every.column_names == mcp.column_names
    # the judged prompts' labels are among their server's records
    server_labels = dict(zip(every["query_id"], every["tool_ids"], strict=True))
    assert all(set(t) <= set(server_labels[q]) for q, t in zip(mcp["query_id"], mcp["tool_ids"], strict=True))


def test_beir_configs_have_the_toolkit_columns(published: dict, small_out: Path) -> None:
    folder = small_out / "dataset"
    corpus = pl.read_parquet(folder / "corpus" / "corpus-00000-of-00001.parquet")
    queries = pl.read_parquet(folder / "queries" / "queries-00000-of-00001.parquet")
    qrels = pl.read_parquet(folder / "qrels" / "test-00000-of-00001.parquet")
    assert corpus.columns == ["_id", "title", "text"]
    assert queries.columns == ["_id", "text"]
    assert qrels.columns == ["query-id", "corpus-id", "score"]
    # every judgement points at a known query and a known tool
    assert set(qrels["query-id"]) <= set(queries["_id"])
    assert set(qrels["corpus-id"]) <= set(corpus["_id"])
    assert all(i.startswith(("syn:", "real:")) for i in queries["_id"])


def test_manual_check_carries_the_last_label(published: dict, small_out: Path) -> None:
    mc = pl.read_parquet(small_out / "dataset" / "manual_check" / "train-00000-of-00001.parquet")
    labels = dict(zip(mc["item_id"], mc["label"], strict=True))
    first, second, third = pl.read_parquet(ArtifactDir(small_out).review_sample)["item_id"].to_list()[:3]
    assert labels[first] == "match"  # relabelled: the last line wins
    assert labels[second] == "match"
    assert labels[third] is None


def test_licenses_follow_the_sources(published: dict, small_out: Path) -> None:
    platforms = set(pl.read_parquet(ArtifactDir(small_out).tools)["platform"])
    lic = published["licenses"]
    assert "apache-2.0" in lic["real"] and "apache-2.0" in lic["manual_check"]
    assert "apache-2.0" not in lic["tools"] and "apache-2.0" not in lic["syn"]
    assert ("other" in lic["tools"]) == ("n8n" in platforms)
    assert ("mit" in lic["tools"]) == bool(platforms & {"langchain", "crewai", "llamaindex", "mcp"})


def test_tools_only_folder_publishes_and_lists_absent_configs(tools_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "tools.parquet").write_bytes(ArtifactDir(tools_source).tools.read_bytes())
    stats = run(out, get_profile("embedded"))
    assert set(stats["configs"]) == {"tools", "corpus"}
    # without qrels, `tools` is the default config
    assert (
        datasets.load_dataset(str(out / "dataset"), split="train").num_rows
        == stats["configs"]["tools"]["train"]
    )
    assert set(stats["absent"]) == {
        "syn",
        "syn_tool_split",
        "syn_negatives",
        "real",
        "real_decisions",
        "mcp_prompts",
        "mcp_server_prompts",
        "manual_check",
        "queries",
        "qrels",
    }
    card = (out / "dataset" / "README.md").read_text()
    assert "absent" in card and "`real_decisions`: missing `real/decisions.parquet`" in card
    assert ArtifactDir(out).is_done("publish", stats["fingerprint"])


def test_missing_tools_fails_naming_the_crawl(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="ecoagent crawl"):
        build_configs(ArtifactDir(tmp_path))


def test_rebuild_in_place_is_not_served_from_a_stale_cache(small_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(small_out, out, ignore=shutil.ignore_patterns("dataset", ".done"))
    cache = str(tmp_path / "cache")
    run(out, get_profile("embedded"))
    before = datasets.load_dataset(str(out / "dataset"), "corpus", split="corpus", cache_dir=cache).num_rows
    tools = pl.read_parquet(out / "tools.parquet")
    write_parquet(tools.head(tools.height // 2), out / "tools.parquet")
    run(out, get_profile("embedded"))
    after = datasets.load_dataset(str(out / "dataset"), "corpus", split="corpus", cache_dir=cache).num_rows
    assert (before, after) == (tools.height, tools.height // 2)


def test_an_empty_table_is_reported_absent_not_published_empty(small_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(small_out, out, ignore=shutil.ignore_patterns("dataset", ".done"))
    pairs = pl.read_parquet(ArtifactDir(out).real_pairs)
    write_parquet(pairs.clear(), ArtifactDir(out).real_pairs)
    stats = run(out, get_profile("embedded"))
    assert stats["absent"] == {"real": "no rows in its input"}
    assert "real_test" not in stats["configs"]["qrels"]
    loaded = datasets.load_dataset(str(out / "dataset"), "qrels", cache_dir=str(tmp_path / "cache"))
    assert {s: d.num_rows for s, d in loaded.items()} == stats["configs"]["qrels"]
