"""The openai backend: any OpenAI-compatible chat server (vLLM first of all, or ``ecoagent.llm.server``).

Requests go out through the official ``openai`` client from a bounded thread pool, each with a timeout
and retries, so a full-catalog Syn run keeps a vLLM server busy without flooding it.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ecoagent.llm.base import Conversation, LLMClient, SamplingParams, StopWhen
from ecoagent.llm.yes_no import yes_share

log = logging.getLogger(__name__)


class OpenAILLM(LLMClient):
    """Chat completions from an OpenAI-compatible server.

    Args:
        model: the served model name (``vllm serve google/gemma-3-1b-it`` serves ``google/gemma-3-1b-it``).
        base_url: the server's ``/v1`` URL.
        concurrency: requests in flight at once (the thread pool's size).
        timeout: seconds per request before it is retried.
        max_retries: retries per request (the openai client backs off exponentially).
        api_key: vLLM accepts any key unless started with ``--api-key``.
        top_logprobs: candidates per position asked for when scoring yes/no (vLLM allows up to 20).
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        concurrency: int = 32,
        timeout: float = 120.0,
        max_retries: int = 3,
        api_key: str = "EMPTY",
        top_logprobs: int = 20,
    ) -> None:
        if concurrency <= 0:
            raise ValueError("concurrency must be > 0")
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        from openai import OpenAI

        self._model_id = model
        self.base_url = base_url
        self.top_logprobs = top_logprobs
        self._client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)
        self.in_flight = concurrency
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm")
        self._served: dict[str, Any] | None = None

    @property
    def model_id(self) -> str:
        return self._model_id

    def _served_model(self) -> dict[str, Any]:
        """The server's ``/v1/models`` entry for our model (vLLM names the weights in ``root``)."""
        if self._served is None:
            entries = [m.model_dump() for m in self._client.models.list().data]
            match = [m for m in entries if m.get("id") == self._model_id]
            if not match:
                served = ", ".join(m.get("id", "?") for m in entries) or "none"
                raise ValueError(
                    f"server {self.base_url} does not serve {self._model_id!r} (it serves {served})"
                )
            self._served = match[0]
        return self._served

    def info(self) -> dict[str, Any]:
        served = self._served_model()
        return {
            "backend": "openai",
            "model": self._model_id,
            "base_url": self.base_url,
            "revision": served.get("revision") or served.get("root"),
            "model_file_sha256": served.get("model_file_sha256"),
        }

    def _complete(self, conversation: Conversation, params: SamplingParams, seed: int) -> str:
        extra: dict[str, Any] = {}
        if params.repetition_penalty != 1.0:
            extra["repetition_penalty"] = params.repetition_penalty  # vLLM's sampling extension
        if conversation and conversation[-1].get("role") == "assistant":
            # a final assistant message is a prefix to continue (vLLM's chat-template options)
            extra.update(continue_final_message=True, add_generation_prompt=False)
        response = self._client.chat.completions.create(
            model=self._model_id,
            messages=conversation,  # type: ignore[arg-type]
            max_tokens=params.max_new_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            seed=seed,
            stop=list(params.stop) or None,
            extra_body=extra or None,
        )
        return response.choices[0].message.content or ""

    def generate_seeded(
        self,
        conversations: list[Conversation],
        params: SamplingParams,
        seeds: list[int],
        stop_when: StopWhen | None = None,
    ) -> list[str]:
        """Whole answers: ``stop_when`` is a hint this backend does not use (``LLMClient``)."""
        if len(seeds) != len(conversations):
            raise ValueError(f"{len(conversations)} conversations but {len(seeds)} seeds")
        futures = [
            self._pool.submit(self._complete, c, params, s) for c, s in zip(conversations, seeds, strict=True)
        ]
        return [f.result() for f in futures]

    def _score(self, conversation: Conversation) -> float:
        response = self._client.chat.completions.create(
            model=self._model_id,
            messages=conversation,  # type: ignore[arg-type]
            max_tokens=1,
            temperature=0.0,
            logprobs=True,
            top_logprobs=self.top_logprobs,
        )
        content = response.choices[0].logprobs.content if response.choices[0].logprobs else None
        if not content:
            raise ValueError(f"server {self.base_url} returned no logprobs; it must support top_logprobs")
        candidates = {c.token: c.logprob for c in content[0].top_logprobs}
        share = yes_share(candidates)
        if share is None:
            log.debug("neither yes nor no among the top %d tokens: %s", self.top_logprobs, list(candidates))
            return 0.5
        return share

    def yes_probability(self, conversations: list[Conversation]) -> list[float]:
        """P(yes) renormalized over {yes, no} from the first position's top logprobs (0.5 if neither)."""
        return list(self._pool.map(self._score, conversations))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()
