"""The shared append-only checkpoint: fsynced appends, torn tails set aside before the next append."""

from __future__ import annotations

import json
from pathlib import Path

from ecoagent.checkpoint import JsonlCheckpoint


def test_append_then_read_back(tmp_path: Path) -> None:
    ckpt = JsonlCheckpoint(tmp_path / "deep" / "c.jsonl")
    assert ckpt.records() == []
    ckpt.append([{"a": 1}, {"a": 2}])
    ckpt.append([])
    JsonlCheckpoint(ckpt.path).append([{"a": 3}])
    assert ckpt.records() == [{"a": 1}, {"a": 2}, {"a": 3}]


def test_torn_tail_is_set_aside_and_the_next_record_survives(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    full = b"".join(json.dumps({"i": i, "pad": "x" * 40_000}).encode() + b"\n" for i in range(3))
    path.write_bytes(full[: len(full) - 17])  # the third record cut short, longer than one read block
    ckpt = JsonlCheckpoint(path)
    assert [r["i"] for r in ckpt.records()] == [0, 1]
    ckpt.append([{"i": 3}])
    assert [r["i"] for r in JsonlCheckpoint(path).records()] == [0, 1, 3]
    assert ckpt.torn_path.read_bytes() == full[2 * (len(full) // 3) : len(full) - 17] + b"\n"
    assert path.read_bytes().endswith(b'}\n{"i": 3}\n')


def test_a_whole_record_missing_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"i": 0}\n{"i": 1}')
    ckpt = JsonlCheckpoint(path)
    assert ckpt.repair() is False
    ckpt.append([{"i": 2}])
    assert [r["i"] for r in ckpt.records()] == [0, 1, 2]
    assert not ckpt.torn_path.exists()


def test_a_file_that_is_only_a_fragment(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"i": ')
    ckpt = JsonlCheckpoint(path)
    assert ckpt.repair() is True and path.read_bytes() == b""
    ckpt.append([{"i": 0}])
    assert ckpt.records() == [{"i": 0}]
