"""LLM clients: the interface and a factory over the configured backend."""

from ecoagent.llm.base import Conversation, LLMClient, Message, SamplingParams, StopWhen
from ecoagent.llm.factory import make_llm

__all__ = ["Conversation", "LLMClient", "Message", "SamplingParams", "StopWhen", "make_llm"]
