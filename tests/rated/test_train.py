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
from ecoagent.schemas import tool_documents
from rated.config import TrainConfig
from rated.train import training_triples, validation_evaluator


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
    assert "val mrr@10" in table and "train loss" in table
    stats = json.loads((out.markers / "train.json").read_text())["stats"]
    assert stats["steps"] == 2 and np.isfinite(stats["train_loss"])
    assert set(stats["val_before"]) >= {"mrr@10", "recall@10"} and stats["val_after"]
    assert stats["reload_max_abs_diff"] < 1e-4
    cfg = json.loads((out.model / "training_config.json").read_text())
    assert cfg["used"]["steps"] == 2 and cfg["loss"]["scale"] == 20.0 and cfg["config"]["batch_size"] == 4
    history = json.loads((out.model / "metrics.json").read_text())["log_history"]
    assert any(k.endswith("mrr@10") for entry in history for k in entry)  # validation logged in training
    r = RATED.load(out.model, tools)
    assert r.select(positives["query"][0]) in set(tools["tool_id"])
    # a second run with the same config and data is skipped
    assert main(argv) == 0
    assert "skipped" in capsys.readouterr().out
