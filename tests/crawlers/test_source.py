"""The mirror source joins n8n's split parts back into the upstream array."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlers.source import MirrorSource, SourceFileMissing


def test_parts_concatenate_into_the_upstream_array(mirror: Path) -> None:
    source = MirrorSource(mirror)
    nodes = json.loads(source.read("n8n/nodes-base/types.nodes.json"))
    parts = sorted((mirror / "n8n/nodes-base").glob("types.nodes.part-*-of-03.json"))
    assert len(nodes) == sum(len(json.loads(p.read_text())) for p in parts) == 503
    assert nodes[0] == json.loads(parts[0].read_text())[0]


def test_missing_files_and_folders(mirror: Path, tmp_path: Path) -> None:
    source = MirrorSource(mirror)
    with pytest.raises(SourceFileMissing, match="nope.json is not in the mirror"):
        source.read("crewai/nope.json")
    assert "tool.specs.json" in source.list("crewai") and "docs/" in source.list("crewai")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        MirrorSource(tmp_path / "absent")
