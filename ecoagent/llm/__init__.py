"""LLM clients: the interface and a factory over the configured backend."""

from ecoagent.llm.base import Conversation, LLMClient, Message, SamplingParams

__all__ = ["Conversation", "LLMClient", "Message", "SamplingParams"]
