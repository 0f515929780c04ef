"""Fixtures of the LLM tests: the real packaged SmolLM2 model, loaded once per session."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from ecoagent.config import SMOLLM2, ModelConfig
from ecoagent.llm import make_llm
from ecoagent.llm.embedded import EmbeddedLLM


@pytest.fixture(scope="session")
def embedded_llm() -> EmbeddedLLM:
    llm = make_llm(ModelConfig(llm=SMOLLM2, llm_backend="transformers"))
    assert isinstance(llm, EmbeddedLLM)
    return llm


@pytest.fixture(scope="session")
def llm_server(embedded_llm: EmbeddedLLM) -> Iterator[str]:
    """``ecoagent.llm.server`` on a free loopback port; yields its ``/v1`` base URL."""
    from ecoagent.llm.server import serve

    server = serve(embedded_llm, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}/v1"
    server.shutdown()
    server.server_close()
