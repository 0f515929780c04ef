"""Secrets pasted into pages never reach the tool table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

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


PLANTED = {
    "openai": "sk-proj-" + "Qw3rTy7Uio9PaSdF" * 2,
    "github": "ghp_" + "Ab12Cd34Ef56Gh78Ij90" * 2,
    "aws": "AKIA" + "IOSFODNN7EXAMPL3",
    "stripe": "sk_live_" + "51HxYzAbCdEfGh1234",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "assigned": "q8Zr2LmX0vTk5Nw1",  # no known shape: caught only as the value of API_KEY=
    "bearer": "d7F2kLm9Qx4Rt8Vz3Bn6",
    "url_password": "s3cr3tPassw0rd",
}


PLANTED_TEXT = (
    f"use {PLANTED['openai']} or {PLANTED['github']} / {PLANTED['aws']} / {PLANTED['stripe']}; "
    f"token {PLANTED['jwt']}; export MY_SERVICE_API_KEY={PLANTED['assigned']}; "
    f"header Authorization: Bearer {PLANTED['bearer']}; "
    f"db postgres://admin:{PLANTED['url_password']}@db.example.com/x"
)


def test_planted_values_are_redacted_and_placeholders_stay() -> None:
    clean = redact(PLANTED_TEXT)
    assert clean is not None
    for value in PLANTED.values():
        assert value not in clean
    assert "export MY_SERVICE_API_KEY=[REDACTED]" in clean and "postgres://admin:[REDACTED]@db" in clean
    for kept in (
        'api_key="YOUR_API_KEY_HERE"',
        "OPENAI_API_KEY=<your-key>",
        "token: ${GITHUB_TOKEN}",
        "api_key=os.environ['SERPER_API_KEY']",
        "password: the user's password",
        "Authorization: Bearer {token}",
        "SERPER_API_KEY=xxxxxxxxxxxx",
    ):
        assert redact(kept) == kept, kept


def test_planted_tokens_reach_neither_table_nor_report_nor_log(
    tmp_mirror: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import json
    import logging

    from crawlers.redact import RedactingFilter

    spec_path = tmp_mirror / "crewai" / "tool.specs.json"
    spec = json.loads(spec_path.read_text())
    tool = spec["tools"][0]
    tool["description"] += f" Example: {PLANTED_TEXT}"
    tool["humanized_name"] = f"{tool.get('humanized_name') or tool['name']} {PLANTED['github']}"
    for prop in (tool.get("run_params_schema") or {}).get("properties", {}).values():
        prop["description"] = f"{prop.get('description', '')} (key {PLANTED['openai']})"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "out"
    run(out, get_profile("embedded"), mirror=tmp_mirror, platforms="crewai", with_prior=False)
    raw = (out / "tools.parquet").read_bytes() + (out / "crawl_report.json").read_bytes()
    table = pl.read_parquet(out / "tools.parquet").write_ndjson()
    for value in PLANTED.values():
        assert value.encode() not in raw and value not in table
    assert "[REDACTED]" in table

    # and a log line that quotes a secret is redacted by the filter every entry point installs
    logger = logging.getLogger("crawlers.test_planted")
    caplog.handler.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("fetched %s with key %s", "https://x.dev", PLANTED["openai"])
    assert PLANTED["openai"] not in caplog.text and "key [REDACTED]" in caplog.text
