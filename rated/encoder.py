"""The semantic module: a dual encoder with separate query and tool towers (a sentence-transformers Router).

Queries and tool documents are different kinds of text (a short request vs. a name, description and
tags), so each gets its own tower; both end in L2 normalization so the score is a dot product.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ecoagent.artifacts import write_json
from ecoagent.embeddings import (
    BATCH_SIZE,
    CACHE_FILE,
    EmbeddingCache,
    embed,
    key_for,
    shipped_encoder,
    static_encoder_key,
)
from ecoagent.models import cache_dir, canonical, folder_sha256, resolve_encoder, weights_id

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

# Files at a saved dual encoder's top level that shape the tool tower (``saved_key``).
TOWER_FILES = ("modules.json", "router_config.json")
# Beside a saved dual encoder whose tool tower is still its backbone (``record_backbone_tower``).
BACKBONE_TOWER_FILE = "tool_tower.json"

# Backbones trained with the [CLS] vector as the embedding; every other plain HF model gets mean pooling.
CLS_BACKBONES = (
    "facebook/dragon-plus-query-encoder",
    "facebook/dragon-plus-context-encoder",
    "facebook/dragon",
)


def pooling_for(name: str, pooling: str = "auto") -> str | None:
    """The pooling a backbone expects: ``cls`` for the DRAGON family, ``None`` = keep the folder's own.

    A sentence-transformers folder (e.g. all-MiniLM-L6-v2) ships its pooling, which ``auto`` keeps; a
    plain Hugging Face model would otherwise get sentence-transformers' default (mean), which is wrong
    for DRAGON+, trained on [CLS].
    """
    if pooling != "auto":
        return pooling
    return "cls" if canonical(name).startswith(CLS_BACKBONES) else None


def _tower(name: str, pooling: str, max_seq_length: int, device: str | None) -> list:
    """The modules of one tower (transformer + pooling), without the final normalization."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling

    model = SentenceTransformer(resolve_encoder(name), device=device)
    modules = [m for m in model.children() if not isinstance(m, Normalize)]
    mode = pooling_for(name, pooling)
    if mode is not None:
        pools = [k for k, m in enumerate(modules) if isinstance(m, Pooling)]
        if not pools:
            raise ValueError(f"backbone {name!r} has no pooling module to set to {mode!r}")
        modules[pools[0]] = Pooling(modules[pools[0]].get_embedding_dimension(), pooling_mode=mode)
    modules[0].max_seq_length = max_seq_length
    return modules


class DualEncoder:
    """Query and tool towers behind one ``SentenceTransformer`` (Router + Normalize).

    Build it from two backbones with ``from_backbones`` (each tower a separate copy, so fine-tuning
    moves them apart), or ``load`` a saved one. ``encode_queries`` / ``encode_tools`` return float32,
    L2-normalized rows.

    Args:
        model: a SentenceTransformer whose first module is a Router with ``query`` and ``document`` routes.
        tools_key: identity of the tool tower's weights (``from_backbones`` and ``load`` set it). When
            given and the encoder is frozen, ``encode_tools`` reads and fills the shared embedding cache
            (``ecoagent.embeddings``): the train stage's held-out comparison and every evaluation run
            encode the catalog with a tower once per machine, and an untrained tower reads the vectors
            the crawl computed with the same packaged encoder.

    Example:
        >>> enc = DualEncoder.from_backbones("sentence-transformers/all-MiniLM-L6-v2")  # doctest: +SKIP
        >>> enc.encode_queries(["convert a pdf to text"]).shape  # doctest: +SKIP
        (1, 384)
    """

    def __init__(self, model: SentenceTransformer, tools_key: str | None = None) -> None:
        self.model = model
        self.tools_key = tools_key
        dim = model.get_embedding_dimension()
        if dim is None:  # a backbone whose modules do not declare it: measure once
            dim = int(self.encode_queries(["probe"]).shape[1])
        self.dim = int(dim)

    @classmethod
    def from_backbones(
        cls,
        query_encoder: str,
        tool_encoder: str | None = None,
        pooling: str = "auto",
        max_seq_length: int = 256,
        device: str | None = None,
    ) -> DualEncoder:
        """Two towers from backbone names (hub ids, packaged aliases or paths), not yet fine-tuned.

        Args:
            query_encoder: backbone of the query tower.
            tool_encoder: backbone of the tool tower (default: a separate copy of ``query_encoder``).
            pooling: ``auto`` (see ``pooling_for``), ``cls`` or ``mean``.
            max_seq_length: tokens kept per text.
            device: torch device (default: sentence-transformers' choice).
        """
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize, Router

        tool_encoder = tool_encoder or query_encoder
        router = Router.for_query_document(
            query_modules=_tower(query_encoder, pooling, max_seq_length, device),
            document_modules=_tower(tool_encoder, pooling, max_seq_length, device),
        )
        return cls(
            SentenceTransformer(modules=[router, Normalize()], device=device),
            backbone_key(tool_encoder, pooling, max_seq_length),
        )

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> DualEncoder:
        """A dual encoder saved by ``save`` (a sentence-transformers folder)."""
        from sentence_transformers import SentenceTransformer

        path = Path(path)
        if not (path / "modules.json").exists():
            raise FileNotFoundError(f"{path} is not a saved dual encoder (no modules.json)")
        return cls(SentenceTransformer(str(path), device=device), saved_key(path))

    def save(self, path: str | Path) -> None:
        self.model.save(str(path))

    def freeze(self) -> DualEncoder:
        """Inference mode: eval(), and no parameter requires gradients (safe to share across threads)."""
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        return self

    @property
    def frozen(self) -> bool:
        """No parameter takes gradients: the weights are those ``tools_key`` names (a tower being
        fine-tuned in place is never served from the cache)."""
        return not any(p.requires_grad for p in self.model.parameters())

    def encode_queries(self, queries: Sequence[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Query-tower embeddings, float32, L2-normalized, shape (len(queries), dim)."""
        out = self.model.encode_query(
            list(queries),
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)

    def encode_tools(self, documents: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        """Tool-tower embeddings of tool documents (``ecoagent.schemas.tool_document``), through the
        shared embedding cache when the tower's weights have a ``tools_key`` (in the cache's precision and
        batch, ``ecoagent.embeddings``; float32 in batches of ``BATCH_SIZE`` otherwise)."""
        if self.tools_key is None or not documents or not self.frozen:
            return self._encode_documents(list(documents), batch_size or BATCH_SIZE)
        shipped = shipped_encoder(self.tools_key)
        if shipped is not None:  # the packaged model as it ships: what the other stages embed, and how
            return np.ascontiguousarray(embed(shipped, list(documents), batch_size))
        store = EmbeddingCache(cache_dir() / CACHE_FILE, self.tools_key, backend="torch")
        return np.ascontiguousarray(store.encode(list(documents), _DocumentTower(self), batch_size))

    def _encode_documents(self, documents: list[str], batch_size: int) -> np.ndarray:
        out = self.model.encode_document(
            documents,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)


class _DocumentTower:
    """The tool tower with the ``encode`` signature ``EmbeddingCache`` calls."""

    def __init__(self, encoder: DualEncoder) -> None:
        self.encoder = encoder

    def encode(self, texts: list[str], batch_size: int, **_: object) -> np.ndarray:
        return self.encoder._encode_documents(texts, batch_size)


def backbone_key(name: str, pooling: str = "auto", max_seq_length: int = 256) -> str:
    """Cache identity of an untrained tool tower. A tower that is the packaged sentence-transformers
    model as it ships (its own pooling and max length; the final normalization is the same) computes
    what ``ecoagent.embeddings.embed`` computes, so it shares that key and reads the crawl's vectors."""
    mode = pooling_for(name, pooling)
    shared = static_encoder_key(name)
    if mode is None and shared == key_for(name, max_seq_length):
        return shared
    return f"tower|{canonical(name)}|{weights_id(name)}|pooling={mode}|max_seq_length={max_seq_length}"


def _tower_file(rel: Path) -> bool:
    top = rel.parts[0]
    return top.startswith("document_") or top.endswith("_Normalize") or top in TOWER_FILES


def saved_key(path: str | Path) -> str:
    """Cache identity of a saved dual encoder's tool tower: the sha256 of the files that make it (the
    ``document_*`` modules' weights, configs and tokenizer, the normalization, ``modules.json`` and the
    router's config). A retrained tower is a new key, never a stale hit; the query tower, the model card
    and the files the train stage adds beside them (``metrics.json``) do not change it.

    A tower the train stage kept frozen (``record_backbone_tower``) keeps its backbone's key while its
    files are the ones recorded, so it reads the catalog vectors its untrained backbone computed (the
    crawl's, where that is the packaged model as it ships) instead of encoding the catalog again (about
    25 s of the train stage for MiniLM on 2 cores); any change to those files falls back to the key above.
    """
    path = Path(path)
    digest = folder_sha256(path, _tower_file)
    record = path / BACKBONE_TOWER_FILE
    if record.exists():
        try:
            kept = json.loads(record.read_text())
        except ValueError as err:
            raise ValueError(f"{record}: not JSON ({err})") from err
        if not isinstance(kept, dict) or not isinstance(kept.get("tools_key"), str):
            raise ValueError(f"{record}: expected an object with a string 'tools_key'")
        if kept.get("tower_sha256") == digest:
            return kept["tools_key"]
        log.info("%s: the tool tower's files changed since it was recorded as the backbone's", record)
    return f"dual-encoder-tools|{digest}"


def record_backbone_tower(path: str | Path, tools_key: str) -> None:
    """Record beside a saved dual encoder that its tool tower is the untrained backbone ``tools_key``
    names (the train stage calls it only after checking the tower's tensors did not change), with the
    digest of the tower's saved files, so ``saved_key`` can return that key while the files match."""
    path = Path(path)
    record = {"tools_key": tools_key, "tower_sha256": folder_sha256(path, _tower_file)}
    write_json(path / BACKBONE_TOWER_FILE, record)


def route_digest(model: SentenceTransformer, route: str) -> str:
    """sha256 of one Router route's tensors (names, dtypes, shapes and bytes): a check that a frozen
    tower left training bit-identical."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model[0].sub_modules[route].state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}".encode())
        digest.update(data.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
