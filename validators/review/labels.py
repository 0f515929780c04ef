"""The labels file of the manual check (``review/labels.jsonl``): append-only, last label per item wins.

Each label is appended and fsynced the moment it is given, so a closed browser or a killed server
loses nothing; relabelling appends a new line instead of rewriting the file.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ecoagent.checkpoint import JsonlCheckpoint

log = logging.getLogger(__name__)

Label = Literal["match", "no_match", "unsure"]
LABELS: tuple[str, ...] = ("match", "no_match", "unsure")

_WRITE_LOCK = threading.Lock()


def append_label(path: Path, item_id: str, label: str) -> dict[str, str]:
    """Append one label line and fsync it; returns the record written.

    Raises:
        ValueError: an empty item id or a label outside ``LABELS``.
    """
    if not item_id:
        raise ValueError("label without item_id")
    if label not in LABELS:
        raise ValueError(f"item {item_id!r}: label {label!r} is not one of {LABELS}")
    record = {
        "item_id": item_id,
        "label": label,
        "labeled_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with _WRITE_LOCK:  # the shared writer: fsynced, and a torn tail is set aside before appending
        JsonlCheckpoint(Path(path)).append([record], sort_keys=True)
    return record


def read_labels(path: Path) -> dict[str, dict[str, str]]:
    """The last label of every item in a labels file (missing file: no labels).

    A final line cut short by a crash mid-write is skipped with a warning; any other bad line is an
    error that names the file and line, since someone else's labels file must not be half-read.
    """
    path = Path(path)
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out: dict[str, dict[str, str]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if number == len(lines) and not text.endswith("\n"):
                log.warning("%s:%d: skipping a torn last line", path, number)
                continue
            raise ValueError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(row, dict) or not row.get("item_id"):
            raise ValueError(f"{path}:{number}: a label needs an item_id")
        if row.get("label") not in LABELS:
            raise ValueError(
                f"{path}:{number}: item {row['item_id']!r} has label {row.get('label')!r}, not one of {LABELS}"
            )
        out[str(row["item_id"])] = row
    return out
