"""``ecoagent crawl`` end to end through the real console entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecoagent.cli import main


def test_crawl_command_writes_the_table_and_prints_the_summary(
    tmp_path: Path, mirror: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["crawl", "--out", str(out), "--mirror", str(mirror), "--platforms", "llamaindex"]) == 0
    printed = capsys.readouterr().out
    assert "| llamaindex" in printed and "prior >= 0.8" in printed and "share missing" in printed
    report = json.loads((out / "crawl_report.json").read_text())
    assert report["per_platform"] == {"llamaindex": 151}


def test_bad_input_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "--out", str(tmp_path), "--platforms", "zapier"]) == 1
    assert "ecoagent crawl: error: unknown platform(s) ['zapier']" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["crawl", "--out", str(tmp_path), "--mirror", str(empty), "--platforms", "n8n"]) == 1
    assert "crawl of n8n failed" in capsys.readouterr().err
