"""The train stage: triples and the val evaluator from Syn tables, then a tiny real fine-tuning run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from rated_testdata import syn_like

from ecoagent.artifacts import ArtifactDir, write_parquet
from ecoagent.cli import main
from ecoagent.config import MINILM
from ecoagent.schemas import tool_documents
from rated.config import TrainConfig
from rated.train import (
    held_out_comparison,
    held_out_sets,
    train_rows,
    training_triples,
    validation_evaluator,
    verdict,
)


def with_tool_split(positives: pl.DataFrame, seed: int = 1) -> pl.DataFrame:
    """A ``split_tool`` column: each tool wholly in one split (60/20/20), independent of ``split``."""
    tools = sorted(set(positives["tool_id"].to_list()))
    rng = np.random.default_rng(seed)
    side = dict(
        zip(tools, rng.choice(["train", "val", "test"], size=len(tools), p=[0.6, 0.2, 0.2]), strict=True)
    )
    return positives.with_columns(
        pl.col("tool_id").replace_strict(side, return_dtype=pl.String).alias("split_tool")
    )


@pytest.fixture(scope="module")
def syn(small_tools: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    return syn_like(small_tools)


def test_triples_pair_each_train_query_with_its_tool_and_hard_negative(small_tools, syn) -> None:
    positives, negatives = syn
    triples = training_triples(small_tools, positives, negatives, TrainConfig())
    train = positives.filter(pl.col("split") == "train").sort("query_id", "tool_id")  # the triples' order
    assert triples.columns == ["anchor", "positive", "negative"] and triples.height == train.height
    docs = dict(zip(small_tools["tool_id"], tool_documents(small_tools), strict=True))
    hard = negatives.filter(pl.col("kind") == "hard")
    hard_doc = {q: docs[t] for q, t in zip(hard["query_id"], hard["tool_id"], strict=True)}
    for row, qid, tool in zip(
        triples.iter_rows(named=True), train["query_id"], train["tool_id"], strict=True
    ):
        assert row["positive"] == docs[tool]
        assert row["negative"] == hard_doc[qid] != row["positive"]


def test_triples_use_only_pairs_that_are_train_in_both_splits(small_tools, syn) -> None:
    """A pair that either test set holds (query split or tool-disjoint split) never reaches training."""
    positives, negatives = syn
    positives = with_tool_split(
        positives.with_columns(
            pl.when(pl.int_range(pl.len()) % 5 == 0)
            .then(pl.lit("test"))
            .otherwise(pl.col("split"))
            .alias("split")
        )
    )
    docs = dict(zip(small_tools["tool_id"], tool_documents(small_tools), strict=True))
    triples = training_triples(small_tools, positives, negatives, TrainConfig())
    both = positives.filter((pl.col("split") == "train") & (pl.col("split_tool") == "train"))
    assert 0 < triples.height == both.height < positives.filter(pl.col("split") == "train").height
    assert set(triples["anchor"]) == set(both["query"])
    unseen = set(positives.filter(pl.col("split_tool") != "train")["tool_id"])
    assert not {docs[t] for t in unseen} & set(triples["positive"])
    assert positives.filter(train_rows(positives)).height == both.height
    ev = validation_evaluator(small_tools, positives, negatives, TrainConfig())
    assert ev is not None
    held = set(positives.filter((pl.col("split") == "test") | (pl.col("split_tool") == "test"))["query_id"])
    assert ev.queries_ids and not set(ev.queries_ids) & held


def test_held_out_comparison_scores_known_answers(small_tools, dual_encoder) -> None:
    """Queries that are their tool's own document rank it first; an encoder equal to the backbone does
    not beat it, and the tool-disjoint set holds only tools unseen in training."""
    docs = tool_documents(small_tools)
    ids = small_tools["tool_id"].to_list()
    positives = pl.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(12)],
            "query": docs[:12],
            "tool_id": ids[:12],
            "split": ["train"] * 4 + ["test"] * 8,
            "split_tool": ["train"] * 8 + ["test"] * 4,
        }
    )
    train_tools = set(positives.filter(train_rows(positives))["tool_id"])
    sets = held_out_sets(positives, train_tools, None)
    assert set(sets) == {"syn_tool_split_test", "syn_query_split_test_seen_tools"}
    assert not set(sets["syn_tool_split_test"][0]["tool_id"]) & train_tools
    assert sets["syn_query_split_test_seen_tools"][0]["query_id"].to_list() == []  # q4-q7: tools not trained
    result = held_out_comparison(small_tools, sets, {"fine-tuned": dual_encoder, "backbone": dual_encoder})
    tool_split = result["syn_tool_split_test"]
    assert tool_split["distinct_queries"] == 4 and "smoke_test" in tool_split
    assert tool_split["fine-tuned"]["MRR"] > 0.9 and tool_split["fine-tuned"]["Recall@1"] > 0.7
    assert tool_split["fine-tuned"] == tool_split["backbone"] and tool_split["mrr_gain"] == 0
    assert "does NOT beat" in tool_split["verdict"] and "not distinguishable" in tool_split["verdict"]
    assert tool_split["paired_test"]["mean_diff"] == 0.0
    assert "skipped" in result["syn_query_split_test_seen_tools"]
    # with Syn's naming flags: the tool-disjoint test without the queries that name their tool
    sets = held_out_sets(positives, train_tools, None, naming={"q8", "q11"})
    assert sets["syn_tool_split_test_not_naming_tool"][0]["query_id"].to_list() == ["q9", "q10"]
    result = held_out_comparison(small_tools, sets, {"fine-tuned": dual_encoder, "backbone": dual_encoder})
    assert result["syn_tool_split_test_not_naming_tool"]["distinct_queries"] == 2
    # MCP authors' prompts with server-level labels: any of the server's records is a hit
    server = pl.DataFrame(
        {
            "query_id": ["mcp:s:0", "mcp:s:1"],
            "query": [docs[20], docs[21]],
            "tool_ids": [[ids[20], ids[30]], [ids[30], ids[21], ids[31]]],
            "server": ["s", "t"],
            "source": ["mcpm/s.json examples[0]", "mcpm/t.json examples[0]"],
        }
    )
    sets = held_out_sets(positives, train_tools, None, mcp_server=server)
    assert sets["mcp_server_prompts"][0].height == 5
    result = held_out_comparison(small_tools, sets, {"fine-tuned": dual_encoder, "backbone": dual_encoder})
    block = result["mcp_server_prompts"]
    assert block["distinct_queries"] == 2 and block["true_tools"] == 4  # ids[30] serves both
    assert block["fine-tuned"]["MRR"] == 1.0  # each prompt is one of its server's documents
    assert "mcp_server_prompts" not in held_out_sets(positives, train_tools, None, mcp_server=server.clear())
    # a prompt of a server one of whose records was trained on is not held out; none left, no set
    trained_server = server.with_columns(
        pl.Series("tool_ids", [[ids[20], ids[0]], [ids[30], ids[21], ids[31]]])
    )
    sets = held_out_sets(positives, train_tools, None, mcp_server=trained_server)
    assert sets["mcp_server_prompts"][0]["query_id"].unique().to_list() == ["mcp:s:1"]
    assert "(1 of 2 prompts)" in sets["mcp_server_prompts"][1]
    only_trained = trained_server.filter(pl.col("server") == "s")
    assert "mcp_server_prompts" not in held_out_sets(positives, train_tools, None, mcp_server=only_trained)


def test_triples_without_negatives_fall_back_to_random_other_tools(small_tools, syn) -> None:
    positives, _ = syn
    triples = training_triples(small_tools, positives, None, TrainConfig(max_train_examples=10, seed=3))
    assert triples.height == 10
    assert all(r["negative"] != r["positive"] for r in triples.iter_rows(named=True))
    again = training_triples(small_tools, positives, None, TrainConfig(max_train_examples=10, seed=3))
    assert again.equals(triples)  # seeded


def test_val_evaluator_holds_relevant_and_negative_tools(small_tools, syn) -> None:
    positives, negatives = syn
    ev = validation_evaluator(
        small_tools, positives, negatives, TrainConfig(max_val_queries=5, max_val_corpus=30)
    )
    assert ev is not None and len(ev.queries) == 5 and len(ev.corpus) == 30
    corpus = set(ev.corpus_ids)
    for qid in ev.queries_ids:
        assert ev.relevant_docs[qid] <= corpus
    assert (
        validation_evaluator(small_tools, positives.with_columns(split=pl.lit("train")), None, TrainConfig())
        is None
    )


def test_train_command_fine_tunes_saves_and_resumes(tmp_path: Path, small_tools, syn, capsys) -> None:
    """A real (tiny) run through `ecoagent train`: loss is finite, the saved model reloads into RATED."""
    from rated import RATED

    out = ArtifactDir(tmp_path / "out")
    tools = small_tools.head(40)
    positives, negatives = syn_like(tools)
    positives = with_tool_split(positives)
    write_parquet(tools, out.tools)
    write_parquet(positives, out.syn_positives)
    write_parquet(negatives, out.syn_negatives)
    argv = [
        "train",
        "--out",
        str(out.root),
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--max-val-queries",
        "6",
    ]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "val mrr@10" in table and "train loss" in table and "syn_tool_split_test MRR" in table
    stats = json.loads((out.markers / "train.json").read_text())["stats"]
    assert stats["steps"] == 2 and np.isfinite(stats["train_loss"])
    assert set(stats["val_before"]) >= {"mrr@10", "recall@10"} and stats["val_after"]
    assert stats["reload_max_abs_diff"] < 1e-4
    cfg = json.loads((out.model / "training_config.json").read_text())
    assert cfg["used"]["steps"] == 2 and cfg["loss"]["scale"] == 20.0 and cfg["config"]["batch_size"] == 4
    history = json.loads((out.model / "metrics.json").read_text())["log_history"]
    assert any(k.endswith("mrr@10") for entry in history for k in entry)  # validation logged in training
    held = json.loads((out.model / "metrics.json").read_text())["held_out"]
    block = held["syn_tool_split_test"]
    assert block["distinct_queries"] == positives.filter(pl.col("split_tool") == "test").height > 0
    assert set(block["fine-tuned"]) == {"MRR", "Recall@1", "Recall@5", "nDCG@10"} and "verdict" in block
    assert "skipped" in held["real_test"]  # no real/pairs.parquet in this folder
    r = RATED.load(out.model, tools)
    assert r.select(positives["query"][0]) in set(tools["tool_id"])
    # the embedded recipe keeps the tool tower: the saved model names the backbone's catalog vectors
    from rated.encoder import DualEncoder, backbone_key

    assert stats["towers_trained"] == ["query"]
    assert DualEncoder.load(out.model).tools_key == backbone_key(MINILM, "auto", 128)
    # a second run with the same config and data is skipped
    assert main(argv) == 0
    assert "skipped" in capsys.readouterr().out


def test_verdict_says_beats_only_when_the_interval_excludes_zero() -> None:
    assert verdict("fine-tuned", "backbone", 0.55, 0.50, 0.01, 0.09).startswith(
        "fine-tuned beats backbone on MRR (0.5500 vs 0.5000; paired 95% CI of the difference [+0.0100, +0.0900])"
    )
    ahead = verdict("fine-tuned", "backbone", 0.548, 0.529, -0.0008, 0.0389)
    assert ahead.startswith("fine-tuned is ahead of backbone") and "not distinguishable" in ahead
    assert "beats" not in ahead
    lost = verdict("fine-tuned", "backbone", 0.45, 0.50, -0.09, -0.01)
    assert lost.startswith("fine-tuned does NOT beat backbone") and "not distinguishable" not in lost


def test_why_not_names_tool_learning_when_only_the_not_naming_set_is_lost() -> None:
    from rated.train import _why_not

    record = {"train_examples": 5000, "val_before": {"mrr@10": 0.4}, "val_after": {"mrr@10": 0.5}}
    comparison = {
        "syn_tool_split_test": {"mrr_gain": 0.04},
        "syn_tool_split_test_not_naming_tool": {"mrr_gain": -0.01},
    }
    why = _why_not(comparison, record)
    assert why is not None and why.startswith(
        "fine-tuning did not beat the backbone on syn_tool_split_test_not"
    )
    assert "learned tool names" in why
    comparison["syn_tool_split_test_not_naming_tool"]["mrr_gain"] = 0.02
    assert _why_not(comparison, record) is None


def test_why_not_says_the_gain_did_not_carry_to_mcp_authors_requests() -> None:
    from rated.train import _why_not

    record = {"train_examples": 5000, "val_before": {"mrr@10": 0.4}, "val_after": {"mrr@10": 0.5}}
    comparison = {"syn_tool_split_test": {"mrr_gain": 0.04}, "mcp_server_prompts": {"mrr_gain": -0.02}}
    why = _why_not(comparison, record)
    assert why is not None and "on mcp_server_prompts:" in why and "did not carry" in why
    assert "learned tool names" not in why and "too few" not in why


def test_a_frozen_tool_tower_keeps_the_backbone_and_the_query_tower_moves(
    tmp_path: Path, small_tools
) -> None:
    """``freeze_tool_tower``: two real steps move only the query route; the tool route is the backbone."""
    import torch
    from datasets import Dataset

    from rated.encoder import DualEncoder, backbone_key
    from rated.train import fine_tune

    tools = small_tools.head(24)
    positives, negatives = syn_like(tools)
    config = TrainConfig(
        batch_size=4, max_steps=2, max_seq_length=64, freeze_tool_tower=True, learning_rate=1e-4
    )
    triples = training_triples(tools, with_tool_split(positives), negatives, config)
    model, record = fine_tune(Dataset.from_polars(triples), None, config, tmp_path / "work")
    assert record["steps"] == 2 and record["towers_trained"] == ["query"]
    assert record["backbone_tools_key"] == backbone_key(MINILM, "auto", 64)  # checked unchanged
    base = DualEncoder.from_backbones(MINILM, max_seq_length=64).model[0].sub_modules
    routes = model[0].sub_modules
    for name, weight in routes["document"].state_dict().items():
        assert torch.equal(weight, base["document"].state_dict()[name]), name
    moved = [
        name
        for name, weight in routes["query"].state_dict().items()
        if weight.is_floating_point() and not torch.equal(weight, base["query"].state_dict()[name])
    ]
    assert len(moved) > 50  # every layer of the query tower trained
