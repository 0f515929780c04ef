"""Fixtures for the publisher: a tiny artifact folder of real tools and real ToolBench queries.

Tools come from the session's real crawl (`crawled_out`); where that fixture is not available the
tools are read straight from the snapshot's crewAI spec file. Syn and Real tables pair a few real
ToolBench queries with those tools, in the shapes of docs/CONTRACTS.md.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_json, write_parquet
from ecoagent.config import get_profile
from ecoagent.schemas import TOOL_SCHEMA, rows_to_frame
from validators.review import sample as review_sample

SMOLLM = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _crewai_tools(mirror: Path) -> pl.DataFrame:
    specs = json.loads((mirror / "crewai" / "tool.specs.json").read_text())["tools"]
    rows = []
    for spec in specs:
        name = spec.get("humanized_name") or spec.get("name")
        slug = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
        env = [e["name"] for e in spec.get("env_vars") or []]
        rows.append(
            {
                "tool_id": f"crewai:{slug}",
                "name": name,
                "description": spec.get("description") or name,
                "platform": "crewai",
                "endpoints": [],
                "doc_url": None,
                "auth_kind": "api_key" if env else "none",
                "auth_names": env,
                "tags": [],
                "arguments": [],
                "source_file": "crewai/tool.specs.json",
                "content_hash": hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest(),
                "requires_auth": bool(env),
                "auth_configured": False,
                "link_status": "unchecked",
                "consistency": 0.5,
                "source_weight": 0.5,
                "doc_quality": 0.5,
                "prior": 0.5,
            }
        )
    frame = rows_to_frame(rows, TOOL_SCHEMA).unique("tool_id", keep="first").sort("tool_id")
    return frame.filter(pl.col("description").str.strip_chars() != "")


@pytest.fixture(scope="session")
def tools_source(
    request: pytest.FixtureRequest, mirror: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """An artifact folder holding a real tools.parquet (+ crawl_report.json when the crawl made one)."""
    try:
        crawled = Path(request.getfixturevalue("crawled_out"))
        return ArtifactDir(crawled).root
    except pytest.FixtureLookupError:
        root = tmp_path_factory.mktemp("tools_source")
        write_parquet(_crewai_tools(mirror), ArtifactDir(root).tools)
        return root


def _toolbench_queries(mirror: Path, n: int) -> list[dict[str, str]]:
    base = mirror / "toolbench" / "StableToolBench" / "solvable_queries" / "test_instruction"
    out: list[dict[str, str]] = []
    for group in ("G1_instruction", "G1_category", "G2_instruction"):
        for record in json.loads((base / f"{group}.json").read_text()):
            out.append({"query_id": str(record["query_id"]), "query": record["query"], "group": group})
            if len(out) >= n:
                return out
    return out


def _pick_tools(tools: pl.DataFrame, n: int) -> list[str]:
    """Up to n tool ids spread over the platforms (round robin, sorted), so licenses of each show up."""
    per = {
        p: tools.filter(pl.col("platform") == p)["tool_id"].sort().to_list()
        for p in sorted(set(tools["platform"]))
    }
    picked: list[str] = []
    i = 0
    while len(picked) < n and any(i < len(v) for v in per.values()):
        picked += [v[i] for v in per.values() if i < len(v)]
        i += 1
    return picked[:n]


def build_small_out(root: Path, tools_source: Path, mirror: Path) -> Path:
    """Fill ``root`` with tools + small real syn/real/review tables (see module docstring)."""
    src, art = ArtifactDir(tools_source), ArtifactDir(root)
    art.root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src.tools, art.tools)
    if src.crawl_report.exists():
        shutil.copyfile(src.crawl_report, art.crawl_report)
    else:
        write_json(
            art.crawl_report,
            {"tools": pl.read_parquet(art.tools).height, "filters": {"empty_description": {"removed": 0}}},
        )
    tools = pl.read_parquet(art.tools)
    picked = _pick_tools(tools, 8)
    qs = _toolbench_queries(mirror, 24)

    # syn: 12 queries (6 train / 3 val / 3 test), one positive each, 2 negatives per positive
    syn_rows, neg_rows = [], []
    for i, q in enumerate(qs[:12]):
        tool = picked[i % len(picked)]
        split = "train" if i < 6 else "val" if i < 9 else "test"
        # the tool-disjoint split: tools 0-4 train, 5 val, 6-7 test (every query of a tool in one split)
        k = i % len(picked)
        split_tool = "train" if k < 5 else "val" if k == 5 else "test"
        qid = hashlib.sha256(f"syn|{q['query']}|{tool}".encode()).hexdigest()[:16]
        syn_rows.append(
            {
                "query_id": qid,
                "query": q["query"],
                "tool_id": tool,
                "split": split,
                "split_tool": split_tool,
                "n_words": len(q["query"].split()),
                "names_tool": False,
                "model": SMOLLM,
                "model_file_sha256": "0" * 64,
                "prompt_version": "syn-v1",
                "sampling": json.dumps({"temperature": 0.8, "top_p": 0.95}),
                "seed": 0,
            }
        )
        for kind, off, score in (("hard", 1, 0.61), ("random", 3, 0.05)):
            neg_rows.append(
                {
                    "query_id": qid,
                    "query": q["query"],
                    "tool_id": picked[(i + off) % len(picked)],
                    "positive_tool_id": tool,
                    "score": score + i / 100,
                    "kind": kind,
                    "split": split,
                    "split_tool": split_tool,
                }
            )
    queries = pl.DataFrame(syn_rows)
    write_parquet(queries, art.syn_queries)
    write_parquet(queries.select("query_id", "query", "tool_id", "split", "split_tool"), art.syn_positives)
    # the MCP prompt set (validators.mcp_prompts' schema): two prompts labelled with picked tools
    from validators.mcp_prompts import McpPrompt, write_prompts

    write_prompts(
        [
            McpPrompt("mcp:s:0", qs[12]["query"], (picked[0],), "s", "mcpm/s.json examples[0]"),
            McpPrompt("mcp:s:1", qs[13]["query"], (picked[1], picked[2]), "s", "mcpm/s.json examples[1]"),
        ],
        art.real_mcp_prompts,
    )
    # every prompt with all of its server's records (the server-level set): one more prompt than judged
    write_prompts(
        [
            McpPrompt("mcp:s:0", qs[12]["query"], tuple(picked[:3]), "s", "mcpm/s.json examples[0]"),
            McpPrompt("mcp:s:1", qs[13]["query"], tuple(picked[:3]), "s", "mcpm/s.json examples[1]"),
            McpPrompt("mcp:s:2", qs[11]["query"], tuple(picked[:3]), "s", "mcpm/s.json examples[2]"),
        ],
        art.real_mcp_server_prompts,
    )
    write_parquet(pl.DataFrame(neg_rows), art.syn_negatives)
    write_json(
        art.syn_stats,
        {
            "generated": 14,
            "kept": 12,
            "dedup": {"method": "minhash", "threshold": 0.8, "removed": 1},
            "filters": [{"name": "min_words", "threshold": 5, "removed": 1}],
            "provenance": {"model": SMOLLM, "backend": "embedded"},
        },
    )

    # real: 6 ToolBench queries x 3 recalled tools; kept when the validator says so
    dec_rows, pair_rows = [], []
    for j, q in enumerate(qs[12:18]):
        for rank in (1, 2, 3):
            tool = picked[(j + rank) % len(picked)]
            passed = rank <= 2
            score = round(0.9 - 0.3 * rank + 0.05 * j, 3) if passed else None
            kept = bool(passed and score is not None and score >= 0.5)
            dec_rows.append(
                {
                    "query_id": q["query_id"],
                    "query": q["query"],
                    "group": q["group"],
                    "tool_id": tool,
                    "rank": rank,
                    "cosine": 0.7 - rank / 10,
                    "passed_recall": passed,
                    "validator_score": score,
                    "kept": kept,
                    "model": SMOLLM,
                    "prompt_version": "real-v1",
                }
            )
            if kept:
                pair_rows.append(
                    {
                        "query_id": q["query_id"],
                        "query": q["query"],
                        "group": q["group"],
                        "tool_id": tool,
                        "cosine": 0.7 - rank / 10,
                        "validator_score": score,
                        "split": "test" if j % 2 == 0 else "train",
                    }
                )
    decisions = pl.DataFrame(dec_rows, schema_overrides={"validator_score": pl.Float64})
    write_parquet(decisions, art.real_decisions)
    write_parquet(pl.DataFrame(pair_rows), art.real_pairs)
    n_passed = decisions.filter(pl.col("passed_recall")).height
    # the shape of validators.pipeline's stats: consecutive counts and the thresholds between them
    write_json(
        art.real_stats,
        {
            "queries": {"unique": 6},
            "pairs": {
                "recalled": decisions.height,
                "after_recall": n_passed,
                "after_validation": len(pair_rows),
            },
            "recall": {
                "encoder": {"name": "sentence-transformers/all-mpnet-base-v2", "weights": "packaged"},
                "top_k": 3,
                "threshold": 0.35,
            },
            "validator": {
                "model": {"name": SMOLLM, "backend": "embedded"},
                "prompt_version": "real-v1",
                "threshold": 0.5,
            },
        },
    )

    # review: 4 decisions sampled by `ecoagent review sample` itself, 3 labels (one item relabelled: the
    # last line wins)
    review_sample.run(root, get_profile("embedded"), n=4, seed=0)
    ids = pl.read_parquet(art.review_sample)["item_id"].to_list()
    art.review_labels.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"item_id": ids[0], "label": "no_match", "labeled_at": "2026-11-29T10:00:00Z"},
                {"item_id": ids[1], "label": "match", "labeled_at": "2026-11-29T10:01:00Z"},
                {"item_id": ids[0], "label": "match", "labeled_at": "2026-11-29T10:02:00Z"},
            ]
        )
    )
    write_json(art.review_report, {"labelled": 2, "agreement": 1.0, "cohen_kappa": None})
    return root


@pytest.fixture(scope="session")
def small_out(tools_source: Path, mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session artifact folder with every input of the publisher (tiny, real data)."""
    return build_small_out(tmp_path_factory.mktemp("publish_out"), tools_source, mirror)


@pytest.fixture(scope="session")
def published(small_out: Path) -> dict:
    """``publish.run`` on ``small_out`` once per session (no upload)."""
    from ecoagent.config import get_profile
    from publish.pipeline import run

    return run(small_out, get_profile("embedded"))
