"""Content fingerprints of the artifacts a stage reads, the catalog snapshot and a stage's own code.

They make up the flow's cache keys: equal bytes give equal keys (``write_parquet`` writes identical bytes
for equal data), so a rerun redoes a stage only when something it reads, its config or its code changed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

__all__ = ["code_fingerprint", "first_party_closure", "path_fingerprint", "paths_fingerprint"]

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


FIRST_PARTY = ("ecoagent", "crawlers", "generators", "validators", "rated", "flows")


def _module_file(name: str) -> Path | None:
    """The source file of a first-party module (``pkg/__init__.py`` for a package), or None."""
    if name.split(".")[0] not in FIRST_PARTY:
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _imports(file: Path, module: str) -> set[str]:
    """First-party modules ``file`` imports anywhere (lazy imports inside functions included); for
    ``from pkg import name`` both ``pkg`` and ``pkg.name`` (which may be a module) are candidates."""
    tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            parts = stem.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in FIRST_PARTY}


def first_party_closure(module: str) -> dict[str, Path]:
    """Every first-party module ``module`` imports, directly or through others: ``{name: file}``."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        file = _module_file(name)
        if file is None:
            continue
        seen[name] = file
        todo.extend(_imports(file, name) - set(seen))
    return seen


def code_fingerprint(target: str) -> str:
    """Fingerprint of the Python sources a stage's ``module:function`` runs: its module and every
    first-party module it imports, transitively (so editing ``rated/bandit.py`` or
    ``ecoagent/schemas.py`` invalidates a cached evaluation), named by module, not by absolute path.

    A change to the stage's code then invalidates its cached result, as a change of config does.
    """
    module_name = target.partition(":")[0]
    closure = first_party_closure(module_name)
    if not closure:
        return "unknown"
    digest = hashlib.sha256()
    for name in sorted(closure):
        digest.update(name.encode() + b"\0")
        _update_with_file(digest, closure[name])
        digest.update(b"\0")
    return digest.hexdigest()[:16]
