"""The whole crawl stage on the real snapshot (the session's ``crawled_out`` artifact folder)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from crawlers.pipeline import parse_platforms, run
from crawlers.report import SourceFailed
from ecoagent.artifacts import ArtifactDir
from ecoagent.config import get_profile
from ecoagent.schemas import TOOL_SCHEMA, validate_tools


@pytest.fixture(scope="module")
def tools(crawled_out: Path) -> pl.DataFrame:
    return pl.read_parquet(ArtifactDir(crawled_out).tools)


@pytest.fixture(scope="module")
def report(crawled_out: Path) -> dict:
    return json.loads(ArtifactDir(crawled_out).crawl_report.read_text())


def test_every_platform_and_thousands_of_tools(tools: pl.DataFrame, report: dict) -> None:
    validate_tools(tools)
    assert dict(tools.schema) == TOOL_SCHEMA
    counts = dict(tools.group_by("platform").len().iter_rows())
    assert (
        counts["n8n"] > 3500
        and counts["langchain"] > 200
        and counts["crewai"] > 120
        and counts["llamaindex"] > 140
    )
    assert tools.height == sum(counts.values()) == report["tools"] > 4000
    assert report["per_platform"] == dict(sorted(counts.items()))
    assert sum(report["per_auth_kind"].values()) == tools.height


def test_named_tools_carry_health_signals_and_a_prior(tools: pl.DataFrame) -> None:
    row = tools.filter(pl.col("tool_id") == "crewai:serper_dev_tool").row(0, named=True)
    assert row["requires_auth"] is True and row["auth_configured"] is False  # empty environment
    assert row["link_status"] == "unchecked"
    assert row["source_weight"] == 0.9
    assert row["prior"] == pytest.approx(0.5 * row["consistency"] + 0.3 * 0.9 + 0.2 * row["doc_quality"])
    slack = tools.filter(pl.col("tool_id") == "n8n:slack:message_post").row(0, named=True)
    assert slack["source_weight"] == 0.8 and slack["auth_names"] == ["slackApi", "slackOAuth2Api"]
    no_auth = tools.filter(pl.col("tool_id") == "n8n:if").row(0, named=True)
    assert no_auth["requires_auth"] is False and no_auth["auth_configured"] is True
    assert tools["prior"].null_count() == 0
    assert tools["consistency"].min() >= 0.0 and tools["consistency"].max() <= 1.0  # type: ignore[operator]


def test_report_counts_missing_fields_errors_and_high_priors(
    tools: pl.DataFrame, report: dict, crawled_out: Path
) -> None:
    assert set(report["missing_share"]) == {
        "description",
        "endpoints",
        "doc_url",
        "auth_names",
        "tags",
        "arguments",
    }
    assert report["missing_share"]["description"] == 0.0
    assert report["missing_share"]["doc_url"] == pytest.approx(
        tools["doc_url"].null_count() / tools.height, abs=1e-4
    )
    assert report["prior_ge_0_8"] == int((tools["prior"] >= 0.8).sum())
    assert report["errors"]["count"] == 4 and len(report["errors"]["lines"]["crewai"]) == 4
    assert {"langchain", "crewai", "llamaindex", "n8n", "total"} <= set(report["timings_s"])
    assert ArtifactDir(crawled_out).is_done("crawl", report["config"]["fingerprint"])


def test_content_hashes_are_stable_per_record(tools: pl.DataFrame) -> None:
    assert tools["content_hash"].n_unique() == tools.height
    assert tools["content_hash"].str.len_chars().unique().to_list() == [64]


def test_auth_configured_reads_the_environment(tmp_path: Path, mirror: Path) -> None:
    env = {"SERPER_API_KEY": "x"}
    run(tmp_path, get_profile("embedded"), mirror=mirror, platforms="crewai", environ=env, with_prior=False)
    tools = pl.read_parquet(tmp_path / "tools.parquet")
    serper = tools.filter(pl.col("tool_id") == "crewai:serper_dev_tool").row(0, named=True)
    assert serper["auth_configured"] is True
    assert serper["prior"] is None  # the prior was switched off


def test_bad_platform_names_and_missing_sources_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown platform\(s\) \['zapier'\]"):
        parse_platforms("crewai,zapier")
    (tmp_path / "mirror" / "crewai").mkdir(parents=True)
    with pytest.raises(
        SourceFailed, match="crawl of crewai failed: crewai: crewai/tool.specs.json is not in the mirror"
    ):
        run(
            tmp_path / "out",
            get_profile("embedded"),
            mirror=tmp_path / "mirror",
            platforms=["crewai"],
            with_prior=False,
        )
    assert not (tmp_path / "out" / "tools.parquet").exists()
