"""Reads what evaluation needs from the artifact folder: the tool catalog and the Syn / Real query pools.

Tools are addressed by their row in ``tools.parquet`` everywhere in evaluation (candidate lists, failure
schedules, bandits), so this module is the one place that maps ``tool_id`` strings to those indices.
A query's true tools are all the tools paired with its ``query_id`` in the split (EcoAgent-Real keeps
several for some queries); pairs naming a tool that is not in the catalog are dropped and counted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir
from ecoagent.schemas import tool_documents
from rated.evaluation.simulator import QueryPool

log = logging.getLogger(__name__)

Dataset = Literal["syn", "syn_tool", "real", "mcp", "mcp_server"]
# the query streams: Syn on its query split (the paper's), Syn on its tool-disjoint split (every test tool
# unseen in training), Real (ToolBench), the MCP servers' own example prompts with the tools the validator
# accepted (all test), and every such prompt with all of its server's records (all test, no LLM)
DATASETS: tuple[str, ...] = ("syn", "syn_tool", "real", "mcp", "mcp_server")
DATASET_LABELS = {
    "syn": "EcoAgent-Syn, query split (the paper's: test tools were seen in training)",
    "syn_tool": "EcoAgent-Syn, tool-disjoint split (test tools unseen in training)",
    "real": "EcoAgent-Real (ToolBench queries and n8n templates)",
    "mcp": "MCP example prompts (server authors' requests; test only)",
    "mcp_server": "MCP example prompts, server-level labels (any record of the author's server; test only)",
}
# where each MCP stream's prompt table lives (``validators.mcp_prompts.PROMPT_SCHEMA``)
_MCP_FILES = {"mcp": "real_mcp_prompts", "mcp_server": "real_mcp_server_prompts"}


PAIRS_SCHEMA = {"query_id": pl.String, "query": pl.String, "tool_id": pl.String, "split": pl.String}


@dataclass(frozen=True)
class Catalog:
    """The tool table with its documents, metadata prior and ``tool_id -> row`` map."""

    tools: pl.DataFrame
    documents: list[str]
    prior: np.ndarray
    index: dict[str, int]

    @classmethod
    def from_frame(cls, tools: pl.DataFrame) -> Catalog:
        ids = tools["tool_id"].to_list()
        prior = (
            tools["prior"].fill_null(0.0).to_numpy().astype(np.float64) if "prior" in tools.columns else None
        )
        return cls(
            tools=tools,
            documents=tool_documents(tools),
            prior=prior if prior is not None else np.zeros(len(ids)),
            index={t: i for i, t in enumerate(ids)},
        )

    @classmethod
    def load(cls, art: ArtifactDir) -> Catalog:
        return cls.from_frame(pl.read_parquet(art.require(art.tools, "crawl")))

    def __len__(self) -> int:
        return len(self.index)


def pairs_frame(art: ArtifactDir, dataset: Dataset) -> pl.DataFrame:
    """The (query_id, query, tool_id, split) pairs of one dataset.

    ``syn_tool`` is Syn with its ``split_tool`` column as the split (empty when Syn predates it); ``mcp``
    is ``real/mcp_prompts.parquet`` exploded to one row per labelled tool, every prompt in ``test``
    (empty when the Real stage wrote no prompt set); ``mcp_server`` is ``real/mcp_server_prompts.parquet``
    the same way. Both leave out the prompts of the servers the encoder trained on
    (``trained_mcp_servers``).
    """
    if dataset == "syn":
        return pl.read_parquet(art.require(art.syn_positives, "syn")).select(
            "query_id", "query", "tool_id", "split"
        )
    if dataset == "syn_tool":
        syn = pl.read_parquet(art.require(art.syn_positives, "syn"))
        if "split_tool" not in syn.columns:
            return syn.select("query_id", "query", "tool_id", "split").clear()
        return syn.select("query_id", "query", "tool_id", pl.col("split_tool").alias("split"))
    if dataset in _MCP_FILES:
        path = getattr(art, _MCP_FILES[dataset])
        if not path.exists():
            return pl.DataFrame(schema=PAIRS_SCHEMA)
        prompts = pl.read_parquet(path)
        trained = trained_mcp_servers(art)
        if trained and "server" in prompts.columns:  # held out: the prompts of servers the encoder trained on
            prompts = prompts.filter(~pl.col("server").is_in(sorted(trained)))
        return prompt_pairs(prompts).with_columns(pl.lit("test").alias("split"))
    if dataset == "real":
        return pl.read_parquet(art.require(art.real_pairs, "real")).select(
            "query_id", "query", "tool_id", "split"
        )
    raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")


def trained_mcp_servers(art: ArtifactDir) -> set[str]:
    """The MCP servers whose authors' prompts trained the encoder (``model/training_config.json``,
    ``training_data.mcp_servers``; empty for a model trained on Syn only): the MCP streams leave their
    prompts out, so every method is measured on prompts the fine-tuned encoder never saw."""
    import json

    path = art.model / "training_config.json"
    if not path.exists():
        return set()
    data = json.loads(path.read_text()).get("training_data") or {}
    return set(data.get("mcp_servers") or [])


def prompt_pairs(prompts: pl.DataFrame) -> pl.DataFrame:
    """An MCP prompt table (one row per prompt, a ``tool_ids`` list) as (query_id, query, tool_id) pairs."""
    return (
        prompts.explode("tool_ids")
        .drop_nulls("tool_ids")
        .select("query_id", "query", pl.col("tool_ids").alias("tool_id"))
    )


def naming_queries(art: ArtifactDir) -> set[str] | None:
    """Ids of the Syn queries that name their tool (``syn/queries.parquet`` → ``names_tool``); None when
    the folder has no Syn query table. Such a query is found by the name alone, so the train stage's
    held-out comparison and Table 1 report the rest apart."""
    if not art.syn_queries.exists():
        return None
    columns = pl.read_parquet_schema(art.syn_queries)
    if "query_id" not in columns or "names_tool" not in columns:
        # an optional breakdown: a table without the flags leaves it out instead of failing the stage
        log.warning(
            "%s has no query_id / names_tool columns: the naming breakdown is skipped", art.syn_queries
        )
        return None
    flags = pl.read_parquet(art.syn_queries, columns=["query_id", "names_tool"])
    return set(flags.filter(pl.col("names_tool"))["query_id"].to_list())


def pool_from_pairs(pairs: pl.DataFrame, catalog: Catalog) -> tuple[QueryPool, int]:
    """Group pairs by query into a pool; returns the pool and the number of pairs dropped because their
    tool is not in the catalog. Query order is by ``query_id``, so a pool is the same on every run."""
    known = pairs.filter(pl.col("tool_id").is_in(list(catalog.index)))
    dropped = pairs.height - known.height
    grouped = (
        known.group_by("query_id").agg(pl.col("query").first(), pl.col("tool_id").unique()).sort("query_id")
    )
    relevant = [frozenset(catalog.index[t] for t in tools) for tools in grouped["tool_id"].to_list()]
    return QueryPool(grouped["query"].to_list(), relevant, grouped["query_id"].to_list()), dropped


def load_pool(art: ArtifactDir, dataset: Dataset, split: str, catalog: Catalog) -> tuple[QueryPool, int]:
    """One split of Syn or Real as a query pool (see ``pool_from_pairs``)."""
    pairs = pairs_frame(art, dataset)
    return pool_from_pairs(pairs.filter(pl.col("split") == split), catalog)


def syn_equivalents(catalog: Catalog, sbert: str) -> dict[int, set[int]]:
    """Syn's cross-platform equivalents of every tool (``generators.equivalents``'s rule, on the Syn
    stage's own encoder, its tool embeddings read from the shared cache), so a Syn query whose one true tool fails can still
    be served by the same function on another platform."""
    from ecoagent.embeddings import embed
    from generators.equivalents import find_equivalents

    tools = catalog.tools
    emb = embed(sbert, catalog.documents)
    return find_equivalents(tools["name"].to_list(), tools["platform"].to_list(), emb)


def with_equivalents(pool: QueryPool, equivalents: dict[int, set[int]]) -> tuple[QueryPool, int]:
    """The pool with each query's true tools extended by their equivalents; returns how many queries
    gained at least one."""
    relevant, gained = [], 0
    for rel in pool.relevant:
        extra = set().union(*(equivalents.get(t, set()) for t in rel)) - set(rel)
        gained += bool(extra)
        relevant.append(frozenset(rel | extra))
    return QueryPool(pool.queries, relevant, pool.query_ids), gained
