"""A running labelling server over a sample of the session's real decisions."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ecoagent.artifacts import write_parquet
from validators.review.sample import run as sample_run
from validators.review.server import ReviewServer

# test-written hostile text: descriptions are untrusted web text, the page must show it, never run it
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b> & "quotes"'


@pytest.fixture
def hostile() -> str:
    return HOSTILE


@pytest.fixture
def review_out(real_out: tuple[Path, dict[str, Any]], test_profile, tmp_path: Path) -> Path:
    """A fresh artifact folder holding a 6-item sample of the real run; item 2's description is hostile."""
    out, _ = real_out
    sample_run(out, test_profile, n=6, seed=1)
    sample = pl.read_parquet(out / "review" / "sample.parquet")
    descriptions = sample["tool_description"].to_list()
    descriptions[1] = HOSTILE
    write_parquet(
        sample.with_columns(pl.Series("tool_description", descriptions)),
        tmp_path / "review" / "sample.parquet",
    )
    shutil.copy(out / "tools.parquet", tmp_path / "tools.parquet")  # the page shows each tool's context
    return tmp_path


@pytest.fixture
def server(review_out: Path) -> Iterator[ReviewServer]:
    srv = ReviewServer(review_out, port=0)
    srv.start()
    yield srv
    srv.stop()
