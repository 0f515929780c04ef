"""The MCP example-prompt set on the real mcpm.sh examples and a real (prior-free) MCP crawl."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from crawlers.pipeline import run
from crawlers.source import MirrorSource
from ecoagent.config import get_profile
from validators.mcp_prompts import PROMPT_SCHEMA, is_literal_call, narrow, read_prompts, write_prompts


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("mcp_crawl")
    run(out, get_profile("embedded"), mirror=mirror, platforms="mcp", environ={}, with_prior=False)
    return pl.read_parquet(out / "tools.parquet")


@pytest.fixture(scope="module")
def prompts(mcp_tools: pl.DataFrame, mirror: Path) -> list:
    return read_prompts(MirrorSource(mirror), mcp_tools)


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 4}  # skips "list", "find"


def overlap_scorer(query: str, documents: Sequence[str]) -> list[float]:
    """A stand-in for the validator's P(yes): 1.0 when the tool's name shares a content word with the query."""
    q = _words(query)
    return [
        1.0 if q & _words(doc.split(":", 1)[0].replace("-", " ").replace("_", " ")) else 0.0
        for doc in documents
    ]


def test_literal_calls_are_not_requests() -> None:
    assert is_literal_call('brave_web_search(query="example search", count=10, offset=0)')
    assert is_literal_call("getPlaceDetails({ placeId: 'ChIJN1t' });")
    assert is_literal_call("journal_create: { title: 'Implementation Pattern' }")
    assert is_literal_call('{"name": "list_users", "arguments": {}}')
    assert is_literal_call("list_dicom_nodes()")
    assert is_literal_call("Run list_tables: now", ["list_tables"])
    assert not is_literal_call("List all my Xero contacts")
    assert not is_literal_call("Find recent research papers about quantum computing (2024 or later)")


def test_prompts_of_the_snapshot_are_labelled_with_their_servers_records(prompts: list) -> None:
    # 974 example prompts on 258 servers; 104 literal calls dropped, leaving 213 servers
    assert len(prompts) == 870 and len({p.server for p in prompts}) == 213
    assert not any(p.server == "brave_search" for p in prompts)  # both Brave examples are literal calls
    xero = next(p for p in prompts if p.query == "List all my Xero contacts")
    assert xero.query_id == "mcp:xero:0" and len(xero.tool_ids) == 12
    assert "mcp:xero:list_contacts" in xero.tool_ids and xero.source.endswith(
        "xero-mcp-server.json examples[0]"
    )
    assert len({p.query_id for p in prompts}) == len(prompts)


def test_narrowing_keeps_the_tools_the_scorer_accepts(prompts: list, mcp_tools: pl.DataFrame) -> None:
    narrowed, stats = narrow(prompts, mcp_tools, overlap_scorer)
    xero = next(p for p in narrowed if p.query_id == "mcp:xero:0")
    assert set(xero.tool_ids) == {
        "mcp:xero:list_contacts",
        "mcp:xero:create_contact",
        "mcp:xero:update_contact",
    }
    assert stats["prompts"] == len(prompts) == stats["kept"] + stats["dropped"]
    assert 0 < stats["dropped"] < len(prompts) and stats["narrowed"] > 0
    assert all(
        set(p.tool_ids) <= set(next(q for q in prompts if q.query_id == p.query_id).tool_ids)
        for p in narrowed
    )
    # the scorer decides: one that says no to everything labels nothing
    none, stats = narrow(prompts[:5], mcp_tools, lambda q, docs: [0.0] * len(docs))
    assert none == [] and stats["dropped"] == 5
    with pytest.raises(ValueError, match="scorer gave 0 scores"):
        narrow(prompts[:1], mcp_tools, lambda q, docs: [])


def test_the_set_is_written_with_its_schema(prompts: list, mcp_tools: pl.DataFrame, tmp_path: Path) -> None:
    narrowed, _ = narrow(prompts, mcp_tools, overlap_scorer)
    frame = write_prompts(narrowed, tmp_path / "real" / "mcp_prompts.parquet")
    back = pl.read_parquet(tmp_path / "real" / "mcp_prompts.parquet")
    assert dict(back.schema) == PROMPT_SCHEMA and back.equals(frame) and back.height == len(narrowed)
    assert back["tool_ids"].list.len().min() >= 1  # type: ignore[operator]
    known = set(mcp_tools["tool_id"])
    assert set(back["tool_ids"].explode().to_list()) <= known


class OverlapValidator:
    """The validator's interface (``score`` of PairTexts -> P(yes) by key) with ``overlap_scorer``'s rule."""

    def __init__(self) -> None:
        self.judged: list = []

    def score(self, pairs: Sequence) -> dict:
        self.judged += list(pairs)
        return {p.key: overlap_scorer(p.query, [p.tool_name])[0] for p in pairs}


def test_the_real_stage_labels_a_capped_sample_over_the_top_candidates(
    mcp_tools: pl.DataFrame, mirror: Path, tmp_path: Path
) -> None:
    """At most `mcp_prompts_max` prompts, each judged on at most `mcp_prompt_candidates` of its server's
    tools (the closest by the recall encoder); what the validator accepts is the label."""
    from ecoagent.config import get_profile
    from validators.config import RealConfig
    from validators.pipeline import build_mcp_prompts

    cfg = RealConfig.for_profile(get_profile("embedded"), mcp_prompts_max=30)
    assert cfg.mcp_prompt_candidates == 3
    judge = OverlapValidator()
    out = tmp_path / "real" / "mcp_prompts.parquet"
    server_out = tmp_path / "real" / "mcp_server_prompts.parquet"
    stats = build_mcp_prompts(mcp_tools, mirror, cfg, judge, 0.5, out, server_out)
    frame = pl.read_parquet(out)
    assert stats["read"] == 870 and stats["sampled"] == 30 and stats["cap"] == 30
    # every prompt read, not only the sample, with all of its server's records and no judgment
    server = pl.read_parquet(server_out)
    assert server.height == 870 == stats["server_level"]["prompts"]
    assert server["server"].n_unique() == stats["server_level"]["servers"] == 213
    listed_in: dict[str, set[str]] = {}
    for tool_id, sources in mcp_tools.select("tool_id", "sources").iter_rows():
        for where in sources:
            listed_in.setdefault(where, set()).add(tool_id)
    for row in server.iter_rows(named=True):
        where = row["source"].rsplit(" examples[", 1)[0]
        assert set(row["tool_ids"]) == listed_in[where]  # every record its mcpm file lists
    per_prompt: dict[str, int] = {}
    for pair in judge.judged:
        per_prompt[pair.query_id] = per_prompt.get(pair.query_id, 0) + 1
    assert len(per_prompt) == 30 and max(per_prompt.values()) <= 3
    assert stats["judged_pairs"] == len(judge.judged) and 0 < frame.height == stats["kept"] <= 30
    server_of = dict(zip(mcp_tools["tool_id"], mcp_tools["server"], strict=True))
    judged = {(p.query_id, p.tool_id) for p in judge.judged}
    for row in frame.iter_rows(named=True):
        assert row["tool_ids"] and all(server_of[t] == row["server"] for t in row["tool_ids"])
        assert all((row["query_id"], t) in judged for t in row["tool_ids"])
    # a tool table without MCP records gives an empty set that says why
    empty = build_mcp_prompts(
        mcp_tools.with_columns(pl.lit("n8n").alias("platform")), mirror, cfg, judge, 0.5, out, server_out
    )
    assert empty["prompts"] == 0 and "no MCP records" in empty["empty"] and pl.read_parquet(out).height == 0
    assert empty["server_level"]["prompts"] == 0 and pl.read_parquet(server_out).height == 0
