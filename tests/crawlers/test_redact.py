"""Secrets pasted into pages never reach the tool table."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from crawlers.pipeline import run
from crawlers.redact import redact
from ecoagent.config import get_profile


def test_key_shapes_and_query_values_are_redacted_but_placeholders_stay() -> None:
    fake = "sk-" + "a1B2" * 8
    assert redact(f"export OPENAI_API_KEY={fake} then run") == "export OPENAI_API_KEY=[REDACTED] then run"
    assert (
        redact("https://api.x.com/v1?apikey=abcdef123456&q=1") == "https://api.x.com/v1?apikey=[REDACTED]&q=1"
    )
    templated = "http://api.wolframalpha.com/v1/result?appid={app_id}&i={query}"
    assert redact(templated) == templated
    assert redact("https://x.dev/api?key=${apiKey}") == "https://x.dev/api?key=${apiKey}"


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
