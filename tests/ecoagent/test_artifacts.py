"""The artifact folder: atomic writes, completion markers, and clear errors for missing stages."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet


def test_markers_track_the_config_fingerprint(tmp_path: Path) -> None:
    art = ArtifactDir(tmp_path)
    fp = fingerprint({"stage": "crawl", "platforms": ["n8n"]})
    assert not art.is_done("crawl", fp)
    art.mark_done("crawl", fp, {"tools": 3})
    assert art.is_done("crawl", fp)
    # a changed config must not reuse the old output
    assert not art.is_done("crawl", fingerprint({"stage": "crawl", "platforms": ["crewai"]}))
    assert json.loads((tmp_path / ".done" / "crawl.json").read_text())["stats"] == {"tools": 3}


def test_corrupt_marker_counts_as_not_done(tmp_path: Path) -> None:
    art = ArtifactDir(tmp_path)
    art.markers.mkdir(parents=True)
    (art.markers / "syn.json").write_text("{not json")
    assert not art.is_done("syn", "abc")


def test_fingerprint_is_order_independent_and_sensitive_to_values() -> None:
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def test_require_names_the_stage_to_run(tmp_path: Path) -> None:
    art = ArtifactDir(tmp_path)
    with pytest.raises(FileNotFoundError, match="ecoagent crawl --out"):
        art.require(art.tools, "crawl")


def test_writes_are_atomic_and_parquet_is_deterministic(tmp_path: Path) -> None:
    frame = pl.DataFrame({"x": [3, 1, 2], "y": ["a", "b", "c"]})
    write_parquet(frame, tmp_path / "a" / "t.parquet")
    write_parquet(frame, tmp_path / "b" / "t.parquet")
    assert (tmp_path / "a" / "t.parquet").read_bytes() == (tmp_path / "b" / "t.parquet").read_bytes()
    write_json(tmp_path / "r.json", {"k": [1, 2]})
    assert json.loads((tmp_path / "r.json").read_text()) == {"k": [1, 2]}
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_written_files_follow_the_umask_and_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    """Published JSON must be readable by other users (a mkstemp file is 0600); a write that fails
    half-way keeps the previous file and leaves no temp behind."""
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "r.json", {"k": 1})
        write_parquet(pl.DataFrame({"x": [1]}), tmp_path / "t.parquet")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "t.parquet").stat().st_mode) == 0o644
    with pytest.raises(TypeError):
        write_json(tmp_path / "r.json", {(1, 2): "a tuple key"})  # fails inside json.dump
    assert json.loads((tmp_path / "r.json").read_text()) == {"k": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "t.parquet"]
