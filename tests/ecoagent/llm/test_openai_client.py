"""The openai backend against a real OpenAI-compatible HTTP server on 127.0.0.1 (``ecoagent.llm.server``)."""

from __future__ import annotations

import pytest

from ecoagent.config import SMOLLM2, ModelConfig
from ecoagent.llm import SamplingParams, make_llm
from ecoagent.llm.embedded import EmbeddedLLM
from ecoagent.llm.openai_client import OpenAILLM

ASK = [{"role": "user", "content": "Write one question a user might ask a calendar tool."}]
JUDGE = [{"role": "user", "content": "Answer yes or no. Is Paris in France?"}]


@pytest.fixture()
def client(llm_server: str) -> OpenAILLM:
    llm = make_llm(
        ModelConfig(llm=SMOLLM2, llm_backend="openai", llm_base_url=llm_server), concurrency=4, timeout=300
    )
    assert isinstance(llm, OpenAILLM)
    return llm


def test_generation_matches_the_embedded_backend(client: OpenAILLM, embedded_llm: EmbeddedLLM) -> None:
    params = SamplingParams(max_new_tokens=8, temperature=0.8, seed=3, stop=("\n",))
    # the client sends seed + i per conversation, as the embedded backend samples them
    assert client.generate([ASK, ASK], params) == embedded_llm.generate([ASK, ASK], params)
    assert client.info()["model_file_sha256"] == embedded_llm.info()["model_file_sha256"]


def test_yes_probability_from_top_logprobs(client: OpenAILLM, embedded_llm: EmbeddedLLM) -> None:
    remote = client.yes_probability([JUDGE])[0]
    local = embedded_llm.yes_probability([JUDGE])[0]
    # top-20 logprobs hold nearly all of the yes/no mass; the rest is what the server left out
    assert remote == pytest.approx(local, abs=0.02)


def test_unknown_model_is_a_clear_error(llm_server: str) -> None:
    llm = OpenAILLM("no-such-model", base_url=llm_server)
    with pytest.raises(ValueError, match="does not serve 'no-such-model'"):
        llm.info()


def test_openai_backend_needs_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ECOAGENT_LLM_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="llm_base_url"):
        make_llm(ModelConfig(llm_backend="openai"))
