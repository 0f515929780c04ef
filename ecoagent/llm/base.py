"""The LLM seam: one small interface for chat generation and yes/no scoring.

Syn generation and the Real validator talk only to ``LLMClient``; the embedded backend runs a packaged
model in-process and the openai backend talks to any OpenAI-compatible server (vLLM first of all).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
# A conversation ends with a user message, or with an assistant message whose content is a prefix that
# the completion continues (the completion returned excludes the prefix).
Conversation = list[Message]
# Called with a conversation's index and its answer so far each time the answer gains a complete line;
# True ends that answer there. A hint to save decoding, not a contract: a backend that cannot stop
# mid-answer returns the whole answer, whose first lines are the same.
StopWhen = Callable[[int, str], bool]


@dataclass(frozen=True)
class SamplingParams:
    """Decoding settings, recorded with every generated row.

    Args:
        max_new_tokens: cap on generated tokens per sample.
        temperature: 0 means greedy decoding.
        top_p: nucleus sampling mass.
        repetition_penalty: >1 discourages repeats (embedded backend; passed through where supported).
        seed: base seed; sample ``i`` of prompt ``j`` is reproducible from it.
        stop: strings that end a sample.
    """

    max_new_tokens: int = 64
    temperature: float = 0.8
    top_p: float = 0.95
    repetition_penalty: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.max_new_tokens <= 0:
            raise ValueError("max_new_tokens must be > 0")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMClient(ABC):
    """A chat model that can generate text and score yes/no judgments."""

    #: Independent calls this client serves at once (llama.cpp's slots, an HTTP client's pool). A caller
    #: with independent units of work (Syn's tools) keeps this many calls going, one unit each, rather
    #: than batching units into one call; 1 means the backend batches inside a call (transformers).
    in_flight: int = 1

    @property
    @abstractmethod
    def model_id(self) -> str:
        """The model's name as configured (e.g. ``HuggingFaceTB/SmolLM2-135M-Instruct``)."""

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Provenance recorded with every output row: backend, model id, revision or file hash."""

    def generate(self, conversations: list[Conversation], params: SamplingParams) -> list[str]:
        """One completion per conversation, in order; conversation ``i`` is sampled with seed
        ``params.seed + i`` (``generate_seeded``)."""
        return self.generate_seeded(
            conversations, params, [params.seed + i for i in range(len(conversations))]
        )

    @abstractmethod
    def generate_seeded(
        self,
        conversations: list[Conversation],
        params: SamplingParams,
        seeds: list[int],
        stop_when: StopWhen | None = None,
    ) -> list[str]:
        """One completion per conversation, conversation ``i`` sampled with ``seeds[i]``.

        The output of a conversation does not depend on what else is in the call, so resumed runs
        reproduce uninterrupted ones. ``stop_when`` (see ``StopWhen``) may end an answer at a line once
        the caller has what it needs; only the llama.cpp backend honours it.
        """

    @abstractmethod
    def yes_probability(self, conversations: list[Conversation]) -> list[float]:
        """P(answer is "yes") for each conversation, renormalized over {yes, no}."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (threads, sessions)."""
