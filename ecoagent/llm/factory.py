"""Build the configured LLM client: the one place that maps a ``ModelConfig`` to a backend."""

from __future__ import annotations

import os

from ecoagent.config import ModelConfig
from ecoagent.llm.base import LLMClient

BACKENDS = ("llamacpp", "transformers", "openai")


def make_llm(models: ModelConfig, **options: object) -> LLMClient:
    """The LLM client of ``models.llm_backend`` for ``models.llm``.

    Args:
        models: the profile's model config (``profile.models``).
        **options: backend options (llamacpp: ``slots``, ``threads``, ``workload``; transformers:
            ``batch_size``, ``threads``; openai: ``concurrency``, ``timeout``, ``max_retries``, ``api_key``).
            llama.cpp batches over its slots, so a ``batch_size`` meant for transformers is ignored there;
            ``workload`` (``"judge"`` for the Real validator) tunes how llama.cpp loads the weights and
            means nothing to the other backends.

    Raises:
        ValueError: an unknown backend, or the openai backend without a base URL.
    """
    backend = models.llm_backend
    workload = options.pop("workload", None)
    if backend == "llamacpp":
        from ecoagent.llm.llamacpp import LlamaCppLLM

        options.pop("batch_size", None)
        if workload is not None:
            options["workload"] = workload
        return LlamaCppLLM(models.llm, **options)  # type: ignore[arg-type]
    if backend in ("transformers", "embedded"):  # "embedded" is this backend's name before llama.cpp
        from ecoagent.llm.embedded import EmbeddedLLM

        return EmbeddedLLM(models.llm, **options)  # type: ignore[arg-type]
    if backend == "openai":
        from ecoagent.llm.openai_client import OpenAILLM

        base_url = models.llm_base_url or os.environ.get("ECOAGENT_LLM_BASE_URL")
        if not base_url:
            raise ValueError(
                "llm_backend 'openai' needs llm_base_url (e.g. http://127.0.0.1:8000/v1) "
                "or $ECOAGENT_LLM_BASE_URL"
            )
        return OpenAILLM(models.llm, base_url=base_url, **options)  # type: ignore[arg-type]
    raise ValueError(f"unknown llm_backend {backend!r}; choose one of {', '.join(BACKENDS)}")
