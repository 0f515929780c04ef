"""The validator on the real SmolLM2: scores in [0, 1], one checkpoint line per pair, resume skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecoagent.config import SMOLLM2, ModelConfig
from ecoagent.llm import LLMClient, make_llm
from validators.labels import build_labels, sample_labels
from validators.validator import Validator


class Counting(LLMClient):
    """The real client, counting the pairs it is asked to score (to prove the checkpoint is used)."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.scored = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def info(self):
        return self.inner.info()

    def generate_seeded(self, conversations, params, seeds, stop_when=None):
        return self.inner.generate_seeded(conversations, params, seeds, stop_when)

    def yes_probability(self, conversations):
        self.scored += len(conversations)
        return self.inner.yes_probability(conversations)


@pytest.fixture(scope="module")
def llm() -> LLMClient:
    return make_llm(ModelConfig(llm=SMOLLM2, llm_backend="transformers"), batch_size=4)


def test_scores_checkpoint_and_resume(llm: LLMClient, parsed, tmp_path: Path) -> None:
    pairs = [lp.pair for lp in sample_labels(build_labels(parsed.queries), "dev", 2)]
    checkpoint = tmp_path / "ckpt.jsonl"
    counting = Counting(llm)
    scores = Validator(counting, checkpoint, batch_size=4).score(pairs)
    assert set(scores) == {p.key for p in pairs} and counting.scored == 6
    assert all(0.0 <= s <= 1.0 for s in scores.values())
    lines = [json.loads(x) for x in checkpoint.read_text().splitlines()]
    assert len(lines) == 6
    assert {ln["model"] for ln in lines} == {"HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert {ln["prompt_version"] for ln in lines} == {"real-judge-v2"}

    # a kill mid-write leaves a torn line: it is ignored, and nothing is scored twice
    with checkpoint.open("a") as fh:
        fh.write('{"query_id": "tb-x", "tool')
    again = Validator(counting, checkpoint, batch_size=4).score(pairs)
    assert again == scores and counting.scored == 6
    # the next append starts on a line of its own: the torn fragment is set aside, no record is lost
    more = [lp.pair for lp in sample_labels(build_labels(parsed.queries), "dev", 4)]
    Validator(counting, checkpoint, batch_size=4).score(more)
    assert len(checkpoint.read_text().splitlines()) == len({p.key for p in pairs + more})
    assert set(Validator(counting, checkpoint, batch_size=4).load_checkpoint()) == {
        p.key for p in pairs + more
    }
    assert checkpoint.with_name("ckpt.jsonl.torn").read_text() == '{"query_id": "tb-x", "tool\n'

    # another prompt version does not reuse these scores
    few_shot = Validator(counting, checkpoint, batch_size=4, few_shot=True)
    assert few_shot.prompt_version == "real-judge-fewshot-v2" and few_shot.load_checkpoint() == {}


def test_batch_size_must_be_positive(llm: LLMClient, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        Validator(llm, tmp_path / "c.jsonl", batch_size=0)


def test_the_judgment_cache_answers_another_build_and_misses_on_changed_text(
    llm: LLMClient, parsed, tmp_path: Path
) -> None:
    import dataclasses

    from validators.judgment_cache import JudgmentCache, model_identity

    pairs = [lp.pair for lp in sample_labels(build_labels(parsed.queries), "dev", 2)]
    cache = JudgmentCache(tmp_path / "judgments.sqlite", model_identity(llm.info()), "real-judge-v2")
    counting = Counting(llm)
    first = Validator(counting, tmp_path / "a" / "ckpt.jsonl", batch_size=4, cache=cache).score(pairs)
    assert counting.scored == 6
    # another artifact folder: every pair comes from the cache, and lands in that folder's checkpoint
    other = Validator(counting, tmp_path / "b" / "ckpt.jsonl", batch_size=4, cache=cache)
    assert other.score(pairs) == first and counting.scored == 6 and other.from_cache == 6
    assert len((tmp_path / "b" / "ckpt.jsonl").read_text().splitlines()) == 6
    # a changed description is another chat: a miss, scored once
    changed = [dataclasses.replace(pairs[0], description=pairs[0].description + " Also sends faxes.")]
    Validator(counting, tmp_path / "c" / "ckpt.jsonl", batch_size=4, cache=cache).score(changed)
    assert counting.scored == 7
    # another model identity or prompt version shares nothing
    assert JudgmentCache(tmp_path / "judgments.sqlite", "llamacpp|other|x", "real-judge-v2").get(["a"]) == {}
    few = Validator(
        counting,
        tmp_path / "d" / "ckpt.jsonl",
        batch_size=4,
        few_shot=True,
        cache=JudgmentCache(
            tmp_path / "judgments.sqlite", model_identity(llm.info()), "real-judge-fewshot-v2"
        ),
    )
    few.score(pairs[:1])
    assert few.from_cache == 0 and counting.scored == 8
