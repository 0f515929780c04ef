"""A packaged sentence-transformers encoder run by OpenVINO's CPU runtime, for the embedding cache.

The cache (``ecoagent.embeddings``) spends minutes of every cold build encoding the 8,638-tool catalog
with all-mpnet-base-v2 and all-MiniLM-L6-v2 on 2 cores. OpenVINO compiles the same network for the CPU
it runs on (oneDNN kernels, bfloat16 where the CPU multiplies it natively): on a Zen 4 EPYC it encoded
catalog documents 1.29x faster (mpnet, batch 8) than torch's bfloat16 autocast, the cache's torch path
(``bench/bench_encode.py --backends``). The model is converted in memory from the loaded
sentence-transformers model (its own tokenizer, pooling and dense modules), in about a second, so there
is no second copy of the weights to keep in step; the vectors are L2-normalized float32 like torch's.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ecoagent.parallel import available_cores


def available() -> bool:
    """Whether the ``openvino`` runtime is installed (a default dependency; absent in trimmed envs)."""
    return importlib.util.find_spec("openvino") is not None


class OpenVINOEncoder:
    """``model`` (a ``SentenceTransformer``) compiled by OpenVINO, with the ``encode`` call the cache makes.

    Args:
        model: the loaded sentence-transformers model; its own preprocessing prepares the inputs, so
            truncation at ``max_seq_length`` is the model's.
        dtype: ``float32`` or ``bfloat16`` (OpenVINO's inference precision hint).
        threads: CPU threads (default: the cores this process may use).
    """

    def __init__(self, model: Any, dtype: str = "float32", threads: int | None = None) -> None:
        import openvino as ov
        import torch

        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype {dtype!r}: expected float32 or bfloat16")
        self.model = model
        self.dtype = dtype
        # sentence-transformers >= 5 calls it ``preprocess`` (``tokenize`` is deprecated there)
        self._prepare = getattr(model, "preprocess", None) or model.tokenize
        sample = self._prepare(["a tool", "another tool"])
        self.inputs = [k for k in _INPUTS if k in sample]
        # the trace warns that a few shape tests (padding length, causal mask, pooling's mask size) are
        # fixed at trace time; for an encoder's self-attention they hold at every shape (tested); and its
        # walk over the model's attributes reads deprecated ones, which warn (sentence-transformers and
        # transformers both): the build's log gets none of it
        with torch.no_grad(), warnings.catch_warnings(), _quiet("sentence_transformers", "transformers"):
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            warnings.simplefilter("ignore", FutureWarning)
            converted = ov.convert_model(
                _traced(model, self.inputs).eval(),
                example_input=tuple(sample[k] for k in self.inputs),
                input=[([-1, -1], ov.Type.i64)] * len(self.inputs),  # fed by position, as traced
            )
        config = {
            "INFERENCE_PRECISION_HINT": "bf16" if dtype == "bfloat16" else "f32",
            "INFERENCE_NUM_THREADS": threads or available_cores(),
            "PERFORMANCE_HINT": "LATENCY",
        }
        self.compiled = ov.Core().compile_model(converted, "CPU", config)

    def encode(
        self, texts: Sequence[str], batch_size: int = 8, normalize_embeddings: bool = True, **_: object
    ) -> np.ndarray:
        """Embeddings of ``texts`` in order, float32 (L2-normalized unless ``normalize_embeddings`` is
        False); like sentence-transformers, longest first in batches, so little of a batch is padding."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        parts = []
        for start in range(0, len(texts), batch_size):
            features = self._prepare([texts[i] for i in order[start : start + batch_size]])
            feed = [features[k].numpy().astype(np.int64) for k in self.inputs]
            parts.append(np.asarray(self.compiled(feed)[0], dtype=np.float32))
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(parts)
        if normalize_embeddings:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@contextlib.contextmanager
def _quiet(*names: str) -> Iterator[None]:
    """Only errors from the loggers ``names`` (and their children) inside."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _traced(model: Any, inputs: list[str]) -> Any:
    import torch

    class Traced(torch.nn.Module):
        """The whole sentence-transformers pipeline (transformer, pooling, dense) as tensors in, vector out."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.model(dict(zip(inputs, tensors, strict=True)))["sentence_embedding"]

    return Traced()
