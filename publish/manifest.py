"""The manifest (manifest.json): sha256 and size of every file of the dataset folder.

Two builds from the same inputs and config give the same manifest, which is how a rebuild is checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecoagent.models import file_sha256

__all__ = ["MANIFEST", "build_manifest", "dataset_files"]

MANIFEST = "manifest.json"


def dataset_files(folder: Path) -> list[Path]:
    """Every file of the dataset folder except the manifest and hidden temp files, sorted by path."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != MANIFEST
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def build_manifest(folder: Path, fingerprint: str) -> dict[str, Any]:
    """The manifest dict: config fingerprint, and per file (relative POSIX path) its sha256 and bytes."""
    files = {
        p.relative_to(folder).as_posix(): {"sha256": file_sha256(p), "bytes": p.stat().st_size}
        for p in dataset_files(folder)
    }
    return {
        "fingerprint": fingerprint,
        "files": files,
        "total_bytes": sum(f["bytes"] for f in files.values()),
    }
