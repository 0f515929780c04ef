"""Content fingerprints of the artifacts a stage reads, the catalog snapshot and a stage's own code.

They make up the flow's cache keys: equal bytes give equal keys (``write_parquet`` writes identical bytes
for equal data), so a rerun redoes a stage only when something it reads, its config or its code changed.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

__all__ = ["code_fingerprint", "path_fingerprint", "paths_fingerprint"]

_CHUNK = 1 << 20


def _update_with_file(digest: hashlib._Hash, path: Path) -> None:
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)


def path_fingerprint(path: Path) -> str:
    """sha256 of a file, or of every file under a folder (relative names and bytes); ``missing`` if absent.

    Hidden files and folders (temp files of atomic writes, caches) are left out.
    """
    path = Path(path)
    if not path.exists():
        return "missing"
    digest = hashlib.sha256()
    if path.is_file():
        _update_with_file(digest, path)
        return digest.hexdigest()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        digest.update(str(rel.as_posix()).encode() + b"\0")
        _update_with_file(digest, file)
        digest.update(b"\0")
    return digest.hexdigest()


def paths_fingerprint(root: Path, rels: Iterable[str]) -> dict[str, str]:
    """``{relative path: fingerprint}`` for each path under ``root``."""
    return {rel: path_fingerprint(Path(root) / rel)[:16] for rel in rels}


def code_fingerprint(target: str) -> str:
    """Fingerprint of the Python sources of the package holding a stage's ``module:function``.

    A change to the stage's code then invalidates its cached result, as a change of config does.
    """
    module_name = target.partition(":")[0]
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return "unknown"
    origin = Path(spec.origin)
    # the package folder of the module (a stage's helpers live beside it)
    folder = origin.parent
    digest = hashlib.sha256()
    for file in sorted(folder.rglob("*.py")):
        if "__pycache__" in file.parts:
            continue
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        _update_with_file(digest, file)
    return digest.hexdigest()[:16]
