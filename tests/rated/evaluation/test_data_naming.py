"""Syn's naming flags as the train and evaluate stages read them."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_parquet
from rated.evaluation.data import naming_queries


def test_naming_queries_reads_the_flags_and_skips_a_table_without_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    art = ArtifactDir(tmp_path)
    assert naming_queries(art) is None  # no Syn stage yet
    frame = pl.DataFrame({"query_id": ["a", "b", "c"], "names_tool": [True, False, True]})
    write_parquet(frame, art.syn_queries)
    assert naming_queries(art) == {"a", "c"}
    write_parquet(frame.drop("names_tool"), art.syn_queries)
    with caplog.at_level(logging.WARNING):
        assert naming_queries(art) is None
    assert "queries.parquet has no query_id / names_tool columns" in caplog.text
