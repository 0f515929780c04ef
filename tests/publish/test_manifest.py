"""Rebuilds are byte-identical: the same inputs give the same manifest and files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ecoagent.config import get_profile
from ecoagent.models import file_sha256
from publish.pipeline import run


def test_publish_twice_gives_identical_manifest(published: dict, small_out: Path, tmp_path: Path) -> None:
    first = (small_out / "dataset" / "manifest.json").read_bytes()
    # a copy of the inputs in another folder: the path must not leak into any file
    other = tmp_path / "again"
    shutil.copytree(small_out, other, ignore=shutil.ignore_patterns("dataset", ".done"))
    stats = run(other, get_profile("embedded"))
    assert (other / "dataset" / "manifest.json").read_bytes() == first
    assert stats["fingerprint"] == published["fingerprint"]


def test_manifest_lists_every_file_with_its_hash(published: dict, small_out: Path) -> None:
    folder = small_out / "dataset"
    manifest = json.loads((folder / "manifest.json").read_text())
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk
    for rel, entry in manifest["files"].items():
        assert entry["sha256"] == file_sha256(folder / rel)
        assert entry["bytes"] == (folder / rel).stat().st_size
