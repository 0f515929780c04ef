"""Secrets pasted into crawled pages never reach the tool table, the crawl report or a log line."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from crawlers.pipeline import run
from ecoagent.config import get_profile


def test_a_key_pasted_into_a_real_page_is_not_written(tmp_mirror: Path, tmp_path: Path) -> None:
    page = tmp_mirror / "langchain/docs/src/oss/integrations/tools/tavily_search.md"
    secret = "tvly-" + "Z9y8X7w6" * 3
    text = page.read_text().replace("is a search engine", f"(key {secret}) is a search engine", 1)
    page.write_text(text)
    run(tmp_path / "out", get_profile("embedded"), mirror=tmp_mirror, platforms="langchain", with_prior=False)
    raw = (tmp_path / "out" / "tools.parquet").read_bytes() + (
        tmp_path / "out" / "crawl_report.json"
    ).read_bytes()
    tools = pl.read_parquet(tmp_path / "out" / "tools.parquet")
    description = tools.filter(pl.col("tool_id") == "langchain:tavily_search")["description"][0]
    assert "(key [REDACTED]) is a search engine" in description
    assert secret.encode() not in raw


def test_planted_tokens_reach_neither_table_nor_report_nor_log(
    tmp_mirror: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, planted: tuple[dict[str, str], str]
) -> None:
    secrets, text = planted
    import json
    import logging

    from ecoagent.redact import RedactingFilter

    spec_path = tmp_mirror / "crewai" / "tool.specs.json"
    spec = json.loads(spec_path.read_text())
    tool = spec["tools"][0]
    tool["description"] += f" Example: {text}"
    tool["humanized_name"] = f"{tool.get('humanized_name') or tool['name']} {secrets['github']}"
    for prop in (tool.get("run_params_schema") or {}).get("properties", {}).values():
        prop["description"] = f"{prop.get('description', '')} (key {secrets['openai']})"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "out"
    run(out, get_profile("embedded"), mirror=tmp_mirror, platforms="crewai", with_prior=False)
    raw = (out / "tools.parquet").read_bytes() + (out / "crawl_report.json").read_bytes()
    table = pl.read_parquet(out / "tools.parquet").write_ndjson()
    for value in secrets.values():
        assert value.encode() not in raw and value not in table
    assert "[REDACTED]" in table

    # and a log line that quotes a secret is redacted by the filter every entry point installs
    logger = logging.getLogger("crawlers.test_planted")
    caplog.handler.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("fetched %s with key %s", "https://x.dev", secrets["openai"])
    assert secrets["openai"] not in caplog.text and "key [REDACTED]" in caplog.text
