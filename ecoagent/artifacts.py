"""The one artifact folder (`--out DIR`) that every stage reads from and writes to.

Each stage writes only its own sub-paths and reads earlier stages' outputs through this class, so the
layout lives in one place and the README's description of it can be checked against the code.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class OutDirError(ValueError):
    """``--out`` names something a stage cannot write into (a file, an unwritable folder)."""


@dataclass(frozen=True)
class ArtifactDir:
    """Paths of the shared artifact folder.

    Args:
        root: the folder given as ``--out``; created on first write.
    """

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    # crawl
    @property
    def tools(self) -> Path:
        return self.root / "tools.parquet"

    @property
    def crawl_report(self) -> Path:
        return self.root / "crawl_report.json"

    @property
    def cache(self) -> Path:
        """HTTP cache and other resumable state of the live crawl and link probe."""
        return self.root / "cache"

    # syn
    @property
    def syn(self) -> Path:
        return self.root / "syn"

    @property
    def syn_queries(self) -> Path:
        return self.syn / "queries.parquet"

    @property
    def syn_positives(self) -> Path:
        return self.syn / "positives.parquet"

    @property
    def syn_negatives(self) -> Path:
        return self.syn / "negatives.parquet"

    @property
    def syn_stats(self) -> Path:
        return self.syn / "stats.json"

    # real
    @property
    def real(self) -> Path:
        return self.root / "real"

    @property
    def real_decisions(self) -> Path:
        return self.real / "decisions.parquet"

    @property
    def real_pairs(self) -> Path:
        return self.real / "pairs.parquet"

    @property
    def real_stats(self) -> Path:
        return self.real / "stats.json"

    @property
    def real_mcp_prompts(self) -> Path:
        """The MCP example-prompt query set (``validators.mcp_prompts.PROMPT_SCHEMA``)."""
        return self.real / "mcp_prompts.parquet"

    @property
    def real_mcp_server_prompts(self) -> Path:
        """Every request-like MCP example prompt, labelled with all records of its server (no LLM)."""
        return self.real / "mcp_server_prompts.parquet"

    # review
    @property
    def review(self) -> Path:
        return self.root / "review"

    @property
    def review_sample(self) -> Path:
        return self.review / "sample.parquet"

    @property
    def review_labels(self) -> Path:
        return self.review / "labels.jsonl"

    @property
    def review_report(self) -> Path:
        return self.review / "report.json"

    # train / evaluate / publish
    @property
    def model(self) -> Path:
        return self.root / "model"

    @property
    def eval(self) -> Path:
        return self.root / "eval"

    @property
    def dataset(self) -> Path:
        return self.root / "dataset"

    @property
    def markers(self) -> Path:
        """Completion markers: one JSON file per finished stage, holding its config fingerprint."""
        return self.root / ".done"

    def check_writable(self) -> None:
        """Fail at once, in one line, when ``--out`` cannot hold the stage's outputs.

        Called by every entry point (``ecoagent <stage>``, the Prefect flow) before any work, so a typo
        does not cost a crawl first. Creates the folder (as the stage would) and writes a probe file in it.

        Raises:
            OutDirError: ``root`` (or a parent) is a file, or the folder cannot be created or written.
        """
        root = self.root
        blocker = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            what = "is a file" if blocker == root else f"is inside {blocker}, which is a file"
            raise OutDirError(f"--out {root} {what}, not a folder: give a folder path")
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=root, prefix=".write-probe-")
        except OSError as exc:
            raise OutDirError(
                f"--out {root} is not writable ({exc.strerror or exc}): give a folder you can write"
            ) from None
        os.close(fd)
        os.unlink(probe)

    def require(self, path: Path, produced_by: str) -> Path:
        """Return ``path`` if it exists, else fail with a message naming the stage that makes it."""
        if not path.exists():
            raise FileNotFoundError(
                f"{path} is missing: run `ecoagent {produced_by} --out {self.root}` first"
            )
        return path

    def mark_done(self, stage: str, fingerprint: str, stats: dict[str, Any] | None = None) -> None:
        """Record that ``stage`` finished with the config whose fingerprint is given."""
        write_json(self.markers / f"{stage}.json", {"fingerprint": fingerprint, "stats": stats or {}})

    def is_done(self, stage: str, fingerprint: str) -> bool:
        """True when ``stage`` already finished with exactly this config."""
        path = self.markers / f"{stage}.json"
        if not path.exists():
            return False
        try:
            return json.loads(path.read_text())["fingerprint"] == fingerprint
        except (ValueError, KeyError):
            return False


def _temp_beside(path: Path) -> Path:
    """A temp name in ``path``'s folder that no other process or thread picks (pid and a random part),
    so writers of one file never share a half-written temp; created later with the umask's mode (a
    ``mkstemp`` file is 0600, which would make published JSON unreadable to other users)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename) so a killed run never leaves half a file."""
    tmp = _temp_beside(path)
    try:
        with tmp.open("x") as fh:
            json.dump(data, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_parquet(frame: Any, path: Path) -> None:
    """Write a polars frame atomically, with fixed settings so equal data gives identical bytes."""
    tmp = _temp_beside(path)
    try:
        frame.write_parquet(tmp, compression="zstd", statistics=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def fingerprint(obj: Any) -> str:
    """A short stable hash of a JSON-able config, used to name outputs and detect stale artifacts."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
