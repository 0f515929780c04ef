"""RATED fixtures: a small slice of the real crawled catalog and one frozen, packaged encoder."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from rated_testdata import sample_tools

from ecoagent.config import MINILM

N_TOOLS = 120


@pytest.fixture(scope="session")
def catalog(crawled_out: Path) -> pl.DataFrame:
    """The full real tool table of the crawl."""
    return pl.read_parquet(crawled_out / "tools.parquet")


@pytest.fixture(scope="session")
def small_tools(catalog: pl.DataFrame) -> pl.DataFrame:
    """``N_TOOLS`` real tools, stratified by platform."""
    return sample_tools(catalog, N_TOOLS)


@pytest.fixture(scope="session")
def dual_encoder():
    """The packaged all-MiniLM-L6-v2 as two towers (not fine-tuned), frozen; 128 tokens keep it quick."""
    from rated.encoder import DualEncoder

    return DualEncoder.from_backbones(MINILM, max_seq_length=128).freeze()
