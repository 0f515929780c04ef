"""A tiny deterministic ``LLMClient`` for checkpoint tests: answers by the tool it is asked about.

A tool whose description contains ``mute`` gets empty answers (only the prefilled opener remains, so it
needs more rounds); with ``kill_after`` set, the client SIGKILLs its own process on that many-th request
for a ``mute`` tool, as a user's ``kill -9`` would, mid-generation.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from typing import Any

from ecoagent.llm.base import Conversation, LLMClient


class ToolEchoLLM(LLMClient):
    def __init__(self, kill_after: int | None = None) -> None:
        self.kill_after = kill_after
        self.asked: Counter[str] = Counter()  # requests per tool id (the ``id:`` word of its description)

    @property
    def model_id(self) -> str:
        return "test/tool-echo"

    def info(self) -> dict[str, Any]:
        return {"backend": "test", "model_id": self.model_id}

    def generate_seeded(self, conversations, params, seeds, stop_when=None):  # type: ignore[no-untyped-def]
        out = []
        for conv, seed in zip(conversations, seeds, strict=True):
            asked = next(m["content"] for m in reversed(conv) if m["role"] == "user")
            tool = next(w for w in asked.split() if w.startswith("id-"))
            self.asked[tool] += 1
            if "mute" in asked:
                if self.kill_after is not None and self.asked[tool] >= self.kill_after:
                    os.kill(os.getpid(), signal.SIGKILL)
                out.append("")
                continue
            out.append(f"please find the weather forecast for town number {seed} next week.")
        return out

    def yes_probability(self, conversations: list[Conversation]) -> list[float]:
        return [0.5 for _ in conversations]
