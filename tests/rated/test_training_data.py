"""The CPU recipe's training pairs: every query of the tool-disjoint train tools (bar the query split's test
ones) and MCP authors' prompts of servers with no held-out record, with no held-out text in training."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from rated_testdata import first_sentence, syn_like

from ecoagent.schemas import tool_documents
from rated.config import TrainConfig
from rated.train import (
    held_out_sets,
    held_out_tools,
    mcp_training_servers,
    training_selection,
    training_triples,
    val_rows,
)

RECIPE = TrainConfig(syn_rows="tool_train", mcp_server_share=0.5)


def _splits(positives: pl.DataFrame, seed: int = 3) -> pl.DataFrame:
    """Each tool wholly in one tool split (60/20/20) and each query in a query split (60/10/30)."""
    tools = sorted(set(positives["tool_id"].to_list()))
    rng = np.random.default_rng(seed)
    side = dict(zip(tools, rng.choice(["train", "val", "test"], len(tools), p=[0.6, 0.2, 0.2]), strict=True))
    query = rng.choice(["train", "val", "test"], positives.height, p=[0.6, 0.1, 0.3])
    return positives.with_columns(
        pl.Series("split", query),
        pl.col("tool_id").replace_strict(side, return_dtype=pl.String).alias("split_tool"),
    )


@pytest.fixture(scope="module")
def data(small_tools: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Syn-like positives with both splits, negatives, and an MCP prompt table: one prompt per MCP tool of
    the sample (its description's first sentence), labelled with every record of its server."""
    positives, negatives = syn_like(small_tools)
    positives = _splits(positives)
    mcp = small_tools.filter(pl.col("platform") == "mcp").sort("tool_id")
    records = mcp.group_by("server").agg(pl.col("tool_id").sort().alias("tool_ids"))
    prompts = (
        mcp.select("tool_id", "server", "description", "name")
        .join(records, on="server")
        .with_columns(
            pl.struct("description", "name")
            .map_elements(
                lambda r: "please " + (first_sentence(r["description"] or "") or r["name"]),
                return_dtype=pl.String,
            )
            .alias("query"),
            ("mcp:" + pl.col("tool_id")).alias("query_id"),
            pl.lit("test").alias("source"),
        )
        .select("query_id", "query", "tool_ids", "server", "source")
    )
    # a server that holds a held-out Syn tool must never train: give one server such a record
    test_tool = positives.filter(pl.col("split_tool") == "test")["tool_id"][0]
    first = prompts["server"][0]
    prompts = prompts.with_columns(
        pl.when(pl.col("server") == first)
        .then(pl.col("tool_ids").list.concat(pl.lit([test_tool])))
        .otherwise(pl.col("tool_ids"))
        .alias("tool_ids")
    )
    return positives, negatives, prompts


def test_recipe_trains_every_query_of_train_tools_and_no_held_out_text(small_tools, data) -> None:
    positives, negatives, prompts = data
    pairs, record = training_selection(small_tools, positives, negatives, RECIPE, prompts)
    syn, mcp = pairs.filter(pl.col("source") == "syn"), pairs.filter(pl.col("source") == "mcp")
    # counts: every (tool-split train, query-split not test) row, and every prompt of the trained servers
    expected = positives.filter((pl.col("split_tool") == "train") & (pl.col("split") != "test"))
    assert set(syn["query_id"]) == set(expected["query_id"]) and syn.height == expected.height > 0
    assert expected.filter(pl.col("split") == "val").height > 0  # more than the both-train rows
    servers = set(record["mcp_servers"])
    assert servers and mcp.height == prompts.filter(pl.col("server").is_in(sorted(servers))).height
    assert record["syn_pairs"] == syn.height and record["mcp_pairs"] == mcp.height
    # no leakage: no held-out tool is a positive or a negative, in ids or in text
    untrained = prompts.filter(~pl.col("server").is_in(sorted(servers)))
    held = held_out_tools(positives)
    untrained_records = set(untrained.explode("tool_ids")["tool_ids"].to_list())
    assert held and not held & (set(pairs["tool_id"]) | set(pairs["negative_id"]))
    assert not untrained_records & set(pairs["negative_id"])
    assert not untrained_records & set(mcp["tool_id"])
    docs = dict(zip(small_tools["tool_id"], tool_documents(small_tools), strict=True))
    triples = training_triples(small_tools, positives, negatives, RECIPE, prompts)
    held_docs = {docs[t] for t in held if t in docs}
    assert not held_docs & (set(triples["positive"]) | set(triples["negative"]))
    # ... and no held-out query: tool-disjoint val/test, the query split's test, untrained servers' prompts
    held_queries = set(
        positives.filter((pl.col("split_tool") != "train") | (pl.col("split") == "test"))["query"]
    ) | set(untrained["query"])
    assert not held_queries & set(triples["anchor"])
    # the server with a held-out Syn tool among its records stays held out
    assert prompts["server"][0] not in servers
    # every MCP positive is a record of the prompt's own server, every negative one of another
    own = dict(zip(prompts["query_id"], prompts["tool_ids"], strict=True))
    for q, t, n in mcp.select("query_id", "tool_id", "negative_id").iter_rows():
        assert t in own[q] and n not in own[q]


def test_held_out_sets_and_val_leave_out_what_trained(small_tools, data) -> None:
    positives, negatives, prompts = data
    pairs, record = training_selection(small_tools, positives, negatives, RECIPE, prompts)
    servers = set(record["mcp_servers"])
    sets = held_out_sets(positives, set(pairs["tool_id"]), None, None, prompts, servers)
    kept = set(sets["mcp_server_prompts"][0]["query_id"])
    assert kept and not kept & set(pairs["query_id"])
    # a held-out prompt's server has no record among the training positives
    kept_servers = prompts.filter(pl.col("query_id").is_in(sorted(kept)))
    assert not set(kept_servers.explode("tool_ids")["tool_ids"]) & set(pairs["tool_id"])
    assert not set(sets["syn_tool_split_test"][0]["tool_id"]) & set(pairs["tool_id"])
    val = positives.filter(val_rows(positives, "tool_train"))
    assert val.height and not set(val["query_id"]) & set(pairs["query_id"])


def test_server_share_is_seeded_and_bounded(data) -> None:
    _, _, prompts = data
    none = mcp_training_servers(prompts, set(), 0.0, seed=0)
    every = mcp_training_servers(prompts, set(), 1.0, seed=0)
    half = mcp_training_servers(prompts, set(), 0.5, seed=0)
    assert none == set() and every == set(prompts["server"]) and half <= every
    assert half == mcp_training_servers(prompts, set(), 0.5, seed=0)
    blocked = set(prompts["tool_ids"][0])
    assert prompts["server"][0] not in mcp_training_servers(prompts, blocked, 1.0, seed=0)


def test_both_train_recipe_is_unchanged(small_tools, data) -> None:
    """The default (paper) recipe still trains only the rows that are train in both splits, Syn only."""
    positives, negatives, prompts = data
    pairs, record = training_selection(small_tools, positives, negatives, TrainConfig(), prompts)
    both = positives.filter((pl.col("split") == "train") & (pl.col("split_tool") == "train"))
    assert set(pairs["query_id"]) == set(both["query_id"]) and record["mcp_pairs"] == 0
