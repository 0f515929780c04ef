"""Progress off a terminal: few log lines with counts and a real ETA; the logging set-up keeps noise out."""

from __future__ import annotations

import logging
import time

import pytest

from ecoagent.logs import setup_logging
from ecoagent.progress import Progress
from flows.build import headline


def test_log_lines_carry_counts_rate_and_eta(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("validators.test_progress")
    with (
        caplog.at_level(logging.INFO, logger="validators.test_progress"),
        Progress(4, "validator", "pairs", log, every_s=0.0, terminal=False) as bar,
    ):
        for _ in range(4):
            time.sleep(0.05)
            bar.update()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    first, last = lines[0], lines[-1]
    assert first.startswith("validator: 1/4 pairs (25%), ") and "ETA 00:00" in first
    assert last.startswith("validator: 4/4 pairs (100%)") and last.endswith("ETA -")


def test_lines_are_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("validators.test_progress")
    with caplog.at_level(logging.INFO, logger="validators.test_progress"):
        bar = Progress(1000, "syn generation", "tools", log, every_s=3600, terminal=False)
        for _ in range(1000):
            bar.update()
    assert [r.getMessage().split(",")[0] for r in caplog.records] == [
        "syn generation: 1000/1000 tools (100%)"
    ]


def test_setup_logging_quiets_library_chatter() -> None:
    setup_logging(verbose=False)
    assert not logging.getLogger("datasets").isEnabledFor(logging.INFO)
    assert not logging.getLogger("dill").isEnabledFor(logging.INFO)
    assert not logging.getLogger("sentence_transformers.evaluation").isEnabledFor(logging.INFO)
    assert logging.getLogger("crawlers.pipeline").isEnabledFor(logging.INFO)


def test_stage_end_line_has_headline_numbers() -> None:
    stats = {"tools": 4253, "prior_mean": 0.73512, "errors": {"count": 4}, "ok": True, "config": {"a": 1}}
    assert headline(stats) == ": tools 4253, prior_mean 0.7351, errors 4"
    assert headline("done") == ""
