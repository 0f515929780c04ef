"""The embedded backend on the real packaged SmolLM2 model."""

from __future__ import annotations

import pytest

from ecoagent.llm import SamplingParams
from ecoagent.llm.embedded import EmbeddedLLM
from ecoagent.models import file_sha256, smollm2_gguf

ASK = [{"role": "user", "content": "Write one question a user might ask a weather app."}]
PARAMS = SamplingParams(max_new_tokens=8, temperature=0.8, seed=7, stop=("\n",))


def test_info_records_model_and_gguf_hash(embedded_llm: EmbeddedLLM) -> None:
    info = embedded_llm.info()
    gguf = smollm2_gguf()
    assert gguf is not None
    assert info["backend"] == "embedded"
    assert info["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert info["model_file_sha256"] == file_sha256(gguf)


@pytest.mark.slow  # ~1 CPU-min each on the transformers fallback backend (llama.cpp is the default)
def test_same_seed_same_output_and_independent_of_batch(embedded_llm: EmbeddedLLM) -> None:
    three = embedded_llm.generate([ASK, ASK, ASK], PARAMS)
    again = embedded_llm.generate([ASK, ASK, ASK], PARAMS)
    assert three == again
    assert all(t.strip() for t in three)
    # conversation i is sampled with seed + i, whatever batch it runs in
    alone = embedded_llm.generate([ASK], SamplingParams(**{**PARAMS.to_dict(), "seed": PARAMS.seed + 2}))
    assert alone[0] == three[2]
    assert len(set(three)) > 1  # different seeds do sample differently


def test_stop_string_ends_the_sample(embedded_llm: EmbeddedLLM) -> None:
    conv = [{"role": "user", "content": "List three fruits, one per line."}]
    out = embedded_llm.generate([conv], SamplingParams(max_new_tokens=24, temperature=0.0, stop=("\n",)))
    assert "\n" not in out[0]


def test_yes_probability_is_renormalized_over_yes_and_no(embedded_llm: EmbeddedLLM) -> None:
    convs = [
        [{"role": "user", "content": "Answer yes or no. Is water wet?"}],
        [{"role": "user", "content": "Answer yes or no. Is a cat a kind of car?"}],
    ]
    scores = embedded_llm.yes_probability(convs)
    assert len(scores) == 2
    assert all(0.0 < s < 1.0 for s in scores)
    assert embedded_llm.yes_probability(convs) == scores  # no sampling involved


def test_bad_conversation_names_its_index(embedded_llm: EmbeddedLLM) -> None:
    with pytest.raises(ValueError, match="conversation 1"):
        embedded_llm.generate([ASK, [{"role": "system", "content": "hi"}]], PARAMS)


def test_assistant_prefix_is_continued(embedded_llm: EmbeddedLLM) -> None:
    conv = [*ASK, {"role": "assistant", "content": "Will it rain in"}]
    prompt = embedded_llm.template([conv])[0]
    assert prompt.endswith("<|im_start|>assistant\nWill it rain in")
    out = embedded_llm.generate([conv], SamplingParams(max_new_tokens=6, temperature=0.0, stop=("\n",)))
    assert out[0] and not out[0].startswith("Will it rain")


@pytest.mark.slow  # ~1 CPU-min each on the transformers fallback backend (llama.cpp is the default)
def test_shared_prefix_batch_samples_what_each_prompt_alone_samples(embedded_llm: EmbeddedLLM) -> None:
    """A tool's Syn samples share ~350 tokens; encoding them once must not change a single token."""
    from ecoagent.llm.embedded import MIN_SHARED_PREFIX, _shared_prefix
    from generators.prompts import single_conversation

    tool = {"name": "SlackSendMessage", "description": "Send a message to a Slack channel or user."}
    convs = [single_conversation(tool, i) for i in range(4)]
    ids = embedded_llm.tokenizer(embedded_llm.template(convs), add_special_tokens=False)["input_ids"]
    assert _shared_prefix(ids) >= MIN_SHARED_PREFIX  # so the batch below takes the shared-prefix path
    params = SamplingParams(max_new_tokens=12, temperature=0.8, seed=3, stop=("\n",))
    batch = embedded_llm.generate(convs, params)
    alone = [
        embedded_llm.generate([conv], SamplingParams(**{**params.to_dict(), "seed": params.seed + i}))[0]
        for i, conv in enumerate(convs)
    ]
    assert batch == alone
    assert len(set(batch)) == len(batch)


def test_shared_prefix_leaves_each_row_a_token() -> None:
    from ecoagent.llm.embedded import _shared_prefix

    assert _shared_prefix([[1, 2, 3], [1, 2, 3]]) == 2
    assert _shared_prefix([[1, 2, 3, 4], [1, 2, 5]]) == 2
    assert _shared_prefix([[7], [1, 2]]) == 0 and _shared_prefix([]) == 0


def test_shared_prefix_batch_scores_what_each_prompt_alone_scores(embedded_llm: EmbeddedLLM) -> None:
    """The validator's prompts share their system turn; encoding it once must not move P(yes)."""
    from validators.prompt import validator_conversation

    convs = [
        validator_conversation(
            "Send a message to the #ops channel on Slack", "Slack", "Post messages to channels."
        ),
        validator_conversation("What is the weather in Oslo?", "Slack", "Post messages to channels."),
        validator_conversation("Translate this sentence into French please", "DeepL", "Translates text."),
    ]
    batch = embedded_llm.yes_probability(convs)
    alone = [embedded_llm.yes_probability([conv])[0] for conv in convs]
    assert batch == pytest.approx(alone, abs=1e-4)
    assert len({round(p, 3) for p in batch}) == 3  # different pairs, different scores
