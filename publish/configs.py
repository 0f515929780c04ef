"""The dataset's configs: each artifact table reshaped into Hub parquet files, one file per (config, split).

Every config is built from the artifact folder only (no stage internals). Rows are sorted by stable keys
and columns are in a fixed order, so equal inputs always give byte-identical parquet files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ecoagent.artifacts import ArtifactDir

__all__ = [
    "CONFIG_ORDER",
    "PLATFORM_LICENSES",
    "TOOLBENCH_LICENSE",
    "Config",
    "build_configs",
    "read_labels",
]

# the split names of the artifact tables -> the Hub's canonical names
SPLIT_NAMES = {
    "train": "train",
    "val": "validation",
    "validation": "validation",
    "dev": "validation",
    "test": "test",
}
SPLIT_ORDER = ("train", "validation", "test", "syn_test", "real_test", "corpus", "queries")

# the order configs appear in the card (and the YAML `configs` list)
CONFIG_ORDER = (
    "tools",
    "syn",
    "syn_tool_split",
    "syn_negatives",
    "real",
    "real_decisions",
    "mcp_prompts",
    "mcp_server_prompts",
    "manual_check",
    "corpus",
    "queries",
    "qrels",
)

# licenses of the sources, in the Hub's license identifiers
# MCP: the registries are MIT (ToolHive Apache-2.0); each server's own licence is the tools' `licence` column
PLATFORM_LICENSES = {"langchain": "mit", "crewai": "mit", "llamaindex": "mit", "n8n": "other", "mcp": "mit"}
TOOLBENCH_LICENSE = "apache-2.0"
N8N_LICENSE_NAME = "sustainable-use-license"
N8N_LICENSE_LINK = "https://github.com/n8n-io/n8n/blob/master/LICENSE.md"

DESCRIPTIONS = {
    "tools": "The tool catalog: one row per tool of LangChain, CrewAI, LlamaIndex, n8n and MCP servers, with health "
    "signals and the metadata prior.",
    "syn": "EcoAgent-Syn: LLM-generated queries and the tool each was written for (the positive pair), "
    "with generation metadata; split by query (the paper's split: test tools also occur in train).",
    "syn_tool_split": "EcoAgent-Syn on its tool-disjoint split: the same pairs as `syn`, split so that every "
    "tool (with its cross-platform equivalents) is in one split only; test tools are unseen in train.",
    "mcp_prompts": "MCP example prompts: requests MCP server authors wrote for their own server (mcpm.sh), "
    "labelled with the server tools the validator accepts; one split, test.",
    "mcp_server_prompts": "MCP example prompts, server-level: every request-like prompt MCP server authors "
    "wrote for their own server (mcpm.sh), labelled with all of that server's records in `tools` (a "
    "retriever hits when it finds any of them); no LLM or retriever chose the labels; one split, test.",
    "syn_negatives": "EcoAgent-Syn negatives: two negative tools per positive pair (one hard, mined "
    "with SBERT; one random), with the query-negative cosine.",
    "real": "EcoAgent-Real: real requests paired with their catalog tools: ToolBench queries with the tools the "
    "validator kept (`label_source = validator`) and n8n workflow templates' write-ups with the service "
    "operations of their own nodes (`label_source = template`); `source` names the origin, `split` is by "
    "query (stratified by source and tool), `tool_split` by service (null where a query's services straddle).",
    "real_decisions": "EcoAgent-Real decisions: every recalled (query, tool) candidate with its recall "
    "cosine, validator score and the keep decision.",
    "manual_check": "The manual check: the stratified sample of Real decisions and the human labels.",
    "corpus": "BEIR/MTEB corpus: the tools as _id/title/text.",
    "queries": "BEIR/MTEB queries: every Syn and Real query as _id/text (ids prefixed syn: / real:).",
    "qrels": "BEIR/MTEB relevance judgements: query-id/corpus-id/score, per split.",
}


@dataclass
class Config:
    """One dataset config: its splits (name -> frame), license ids, and the platforms it draws from."""

    name: str
    splits: dict[str, pl.DataFrame]
    licenses: list[str]
    description: str
    sources: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(f.height for f in self.splits.values())

    def data_file(self, split: str) -> str:
        """The path of a split's parquet file inside the dataset folder (Hub naming)."""
        return f"{self.name}/{split}-00000-of-00001.parquet"


def _read(path: Path) -> pl.DataFrame | None:
    return pl.read_parquet(path) if path.exists() else None


def _normalize_split(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.col("split").cast(pl.String).replace_strict(SPLIT_NAMES, default=pl.col("split").cast(pl.String))
    )


def _by_split(frame: pl.DataFrame, sort_by: list[str]) -> dict[str, pl.DataFrame]:
    """Split a frame on its `split` column (dropped), each part sorted; empty parts are left out.

    A table without a `split` column is one `train` split.
    """
    if "split" not in frame.columns:
        return {"train": frame.sort(sort_by, nulls_last=True, maintain_order=True)} if frame.height else {}
    frame = _normalize_split(frame)
    out: dict[str, pl.DataFrame] = {}
    names = sorted(frame["split"].unique().to_list(), key=_split_key)
    for name in names:
        part = frame.filter(pl.col("split") == name).drop("split")
        if part.height:
            out[name] = part.sort(sort_by, nulls_last=True, maintain_order=True)
    return out


def _split_key(name: str | None) -> tuple[int, str]:
    name = name or ""
    return (SPLIT_ORDER.index(name) if name in SPLIT_ORDER else len(SPLIT_ORDER), name)


def _str_ids(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    return frame.with_columns([pl.col(c).cast(pl.String) for c in columns if c in frame.columns])


def _licenses(platforms: set[str], *, toolbench: bool = False) -> list[str]:
    ids = {PLATFORM_LICENSES.get(p, "other") for p in platforms}
    if toolbench:
        ids.add(TOOLBENCH_LICENSE)
    return sorted(ids)


def read_labels(path: Path) -> pl.DataFrame | None:
    """The human labels (`review/labels.jsonl`); the last line for an item wins."""
    if not path.exists():
        return None
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        record = json.loads(line)
        latest[str(record["item_id"])] = record
    if not latest:
        return None
    rows = [
        {
            "item_id": k,
            "label": v.get("label"),
            "labeled_at": None if v.get("labeled_at") is None else str(v["labeled_at"]),
        }
        for k, v in sorted(latest.items())
    ]
    return pl.DataFrame(rows, schema={"item_id": pl.String, "label": pl.String, "labeled_at": pl.String})


def build_configs(art: ArtifactDir) -> tuple[dict[str, Config], dict[str, str]]:
    """Build every config whose inputs exist.

    Returns:
        ``(configs, absent)``: the configs by name (in ``CONFIG_ORDER``), and for each absent config the
        artifact that is missing.

    Raises:
        FileNotFoundError: ``tools.parquet`` is missing (the tool table is required).
    """
    tools = pl.read_parquet(art.require(art.tools, "crawl")).sort("tool_id")
    platform_of = dict(zip(tools["tool_id"].to_list(), tools["platform"].to_list(), strict=True))

    def platforms(*frames: pl.DataFrame | None, columns: tuple[str, ...] = ("tool_id",)) -> set[str]:
        found: set[str] = set()
        for frame in frames:
            if frame is None:
                continue
            for col in columns:
                if col in frame.columns:
                    found |= {platform_of.get(t, str(t).split(":")[0]) for t in frame[col].unique().to_list()}
        return found

    configs: dict[str, Config] = {}
    absent: dict[str, str] = {}
    tool_platforms = set(tools["platform"].unique().to_list())
    configs["tools"] = Config(
        "tools", {"train": tools}, _licenses(tool_platforms), DESCRIPTIONS["tools"], sorted(tool_platforms)
    )

    # --- syn -------------------------------------------------------------------------------------------
    queries = _read(art.syn_queries)
    positives = _read(art.syn_positives)
    syn: pl.DataFrame | None = None
    if positives is not None or queries is not None:
        base = positives if positives is not None else queries
        assert base is not None
        base = _str_ids(base, "query_id")
        if positives is not None and queries is not None:
            meta = _str_ids(queries, "query_id")
            extra = [c for c in meta.columns if c not in base.columns]
            if extra:
                meta = meta.select(["query_id", *extra]).unique("query_id", keep="first", maintain_order=True)
                base = base.join(meta, on="query_id", how="left")
        syn = base
        src = platforms(syn)
        configs["syn"] = Config(
            "syn",
            _by_split(syn.drop("split_tool", strict=False), ["query_id", "tool_id"]),
            _licenses(src),
            DESCRIPTIONS["syn"],
            sorted(src),
        )
        if "split_tool" in syn.columns:
            configs["syn_tool_split"] = Config(
                "syn_tool_split",
                _by_split(syn.drop("split").rename({"split_tool": "split"}), ["query_id", "tool_id"]),
                _licenses(src),
                DESCRIPTIONS["syn_tool_split"],
                sorted(src),
            )
        else:
            absent["syn_tool_split"] = "the split_tool column of syn/positives.parquet"
    else:
        absent["syn"] = absent["syn_tool_split"] = "syn/positives.parquet"
    negatives = _read(art.syn_negatives)
    if negatives is not None:
        negatives = _str_ids(negatives, "query_id")
        src = platforms(negatives, columns=("tool_id", "positive_tool_id"))
        configs["syn_negatives"] = Config(
            "syn_negatives",
            _by_split(negatives, ["query_id", "positive_tool_id", "kind", "tool_id"]),
            _licenses(src),
            DESCRIPTIONS["syn_negatives"],
            sorted(src),
        )
    else:
        absent["syn_negatives"] = "syn/negatives.parquet"

    # --- real ------------------------------------------------------------------------------------------
    pairs = _read(art.real_pairs)
    if pairs is not None:
        pairs = _str_ids(pairs, "query_id")
        src = platforms(pairs)
        origins = set(pairs["source"].to_list()) if "source" in pairs.columns else {"toolbench"}
        configs["real"] = Config(
            "real",
            _by_split(pairs, ["query_id", "tool_id"]),
            _licenses(
                src | ({"n8n"} if "n8n_templates" in origins else set()), toolbench="toolbench" in origins
            ),
            DESCRIPTIONS["real"],
            sorted(src | origins),
        )
    else:
        absent["real"] = "real/pairs.parquet"
    decisions = _read(art.real_decisions)
    if decisions is not None:
        decisions = _str_ids(decisions, "query_id")
        sort = [c for c in ("query_id", "rank", "tool_id") if c in decisions.columns]
        src = platforms(decisions)
        configs["real_decisions"] = Config(
            "real_decisions",
            {"train": decisions.sort(sort, nulls_last=True, maintain_order=True)},
            _licenses(src, toolbench=True),
            DESCRIPTIONS["real_decisions"],
            sorted(src | {"toolbench"}),
        )
    else:
        absent["real_decisions"] = "real/decisions.parquet"

    # the judged MCP prompts and all of them with server-level labels: one schema, one split (test)
    for name, path in (
        ("mcp_prompts", art.real_mcp_prompts),
        ("mcp_server_prompts", art.real_mcp_server_prompts),
    ):
        prompts = _read(path)
        if prompts is None:
            absent[name] = f"real/{path.name}"
            continue
        src = platforms(prompts.explode("tool_ids").rename({"tool_ids": "tool_id"}))
        configs[name] = Config(
            name,
            {"test": prompts.sort("query_id")} if prompts.height else {},
            _licenses(src),
            DESCRIPTIONS[name],
            sorted(src),
        )

    # --- manual check ----------------------------------------------------------------------------------
    sample = _read(art.review_sample)
    if sample is not None:
        sample = _str_ids(sample, "item_id", "query_id")
        labels = read_labels(art.review_labels)
        if labels is None:
            labels = pl.DataFrame(schema={"item_id": pl.String, "label": pl.String, "labeled_at": pl.String})
        sample = sample.drop([c for c in ("label", "labeled_at") if c in sample.columns])
        sample = sample.join(labels, on="item_id", how="left").sort("item_id")
        src = platforms(sample)
        configs["manual_check"] = Config(
            "manual_check",
            {"train": sample},
            _licenses(src, toolbench=True),
            DESCRIPTIONS["manual_check"],
            sorted(src | {"toolbench"}),
        )
    else:
        absent["manual_check"] = "review/sample.parquet"

    # --- BEIR / MTEB -----------------------------------------------------------------------------------
    corpus = tools.select(
        pl.col("tool_id").alias("_id"), pl.col("name").alias("title"), pl.col("description").alias("text")
    )
    configs["corpus"] = Config(
        "corpus",
        {"corpus": corpus},
        configs["tools"].licenses,
        DESCRIPTIONS["corpus"],
        configs["tools"].sources,
    )

    judged: list[pl.DataFrame] = []
    if syn is not None:
        judged.append(
            _normalize_split(syn).select(
                pl.lit("syn"), pl.col("query_id"), pl.col("query"), pl.col("tool_id"), pl.col("split")
            )
        )
    if pairs is not None:
        judged.append(
            _normalize_split(pairs).select(
                pl.lit("real"), pl.col("query_id"), pl.col("query"), pl.col("tool_id"), pl.col("split")
            )
        )
    if judged:
        frames = [
            j.rename({j.columns[0]: "source"}).with_columns(pl.col(c).cast(pl.String) for c in j.columns[1:])
            for j in judged
        ]
        both = pl.concat(frames).with_columns((pl.col("source") + ":" + pl.col("query_id")).alias("_id"))
        qs = both.select("_id", pl.col("query").alias("text")).unique(
            "_id", keep="first", maintain_order=True
        )
        configs["queries"] = Config(
            "queries",
            {"queries": qs.sort("_id")},
            _licenses(platforms(syn, pairs), toolbench=pairs is not None),
            DESCRIPTIONS["queries"],
            sorted(platforms(syn, pairs) | ({"toolbench"} if pairs is not None else set())),
        )
        qrels = both.select(
            pl.col("_id").alias("query-id"),
            pl.col("tool_id").alias("corpus-id"),
            pl.lit(1, dtype=pl.Int64).alias("score"),
            "split",
            "source",
        ).unique(["query-id", "corpus-id"], keep="first", maintain_order=True)
        splits = _by_split(qrels.drop("source"), ["query-id", "corpus-id"])
        for source in ("syn", "real"):
            test = qrels.filter((pl.col("source") == source) & (pl.col("split") == "test"))
            if test.height:
                splits[f"{source}_test"] = test.select("query-id", "corpus-id", "score").sort(
                    ["query-id", "corpus-id"]
                )
        configs["qrels"] = Config(
            "qrels", splits, configs["queries"].licenses, DESCRIPTIONS["qrels"], configs["queries"].sources
        )
    else:
        absent["queries"] = absent["qrels"] = "syn/positives.parquet and real/pairs.parquet"

    for name in [n for n, c in configs.items() if not c.splits or c.rows == 0]:
        if name != "tools":  # an empty table has nothing to load: report it instead of an empty config
            del configs[name]
            absent[name] = "no rows in its input"
    ordered = {name: configs[name] for name in CONFIG_ORDER if name in configs}
    return ordered, {name: absent[name] for name in CONFIG_ORDER if name in absent}
