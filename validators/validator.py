"""The LLM validator: scores the functional match of (query, tool) pairs, checkpointing every batch.

The score is the model's own probability of answering "yes", renormalized over {yes, no}
(``LLMClient.yes_probability``), not a number parsed from generated text: it costs one forward pass,
is deterministic, is defined for every pair (small models often emit unparseable or constant
numbers), and is a continuous score whose threshold can be calibrated against human labels.
Scores are appended to a JSONL checkpoint after each batch, keyed by model and prompt version, so a
killed run resumes where it stopped and a rerun with the same model and prompt skips finished pairs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ecoagent.checkpoint import JsonlCheckpoint
from ecoagent.llm.base import Conversation, LLMClient
from ecoagent.progress import Progress
from validators.judgment_cache import JudgmentCache, conversation_key
from validators.prompt import PROMPT_VERSIONS, validator_conversation

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairText:
    """The texts of one pair the validator reads; ``key`` identifies it in the checkpoint.

    ``context`` says where the tool lives (platform, RapidAPI category and tool, tags) and ``arguments``
    lists what it takes (``name: description``, required ones marked): the validator sees both.
    """

    query_id: str
    tool_id: str
    query: str
    tool_name: str
    description: str
    context: str = ""
    arguments: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.query_id, self.tool_id)


def pair_conversation(pair: PairText, few_shot: bool = False) -> Conversation:
    """The chat the validator scores ``pair`` with: the one rendering the stage and the benches share."""
    return validator_conversation(
        pair.query, pair.tool_name, pair.description, few_shot, pair.context, pair.arguments
    )


class Validator:
    """Scores pairs in batches with an LLM and keeps every score in a checkpoint.

    Args:
        llm: the client (``ecoagent.llm.make_llm(profile.models)``).
        checkpoint: JSONL file that receives one line per scored pair, appended and fsynced per batch.
        batch_size: pairs per ``yes_probability`` call; must be > 0.
        few_shot: put the prompt's two worked examples before each pair (``validators.prompt``).
        cache: judgments kept across builds (``validators.judgment_cache``); a hit is written to the
            checkpoint like a scored pair, so the artifact folder stays complete on its own.

    The prompt version (stored with each score) follows from ``few_shot``; checkpoint lines of other
    versions or models are ignored. Scores in the checkpoint's shard files (``shard_checkpoint``: what
    ``validators.pipeline.judge_shard`` wrote on other workers) count as done too; new scores go to
    ``checkpoint`` only. ``scored`` counts the pairs this validator sent to the LLM, ``from_cache``
    those the cross-build cache answered.
    """

    def __init__(
        self,
        llm: LLMClient,
        checkpoint: Path,
        batch_size: int = 16,
        few_shot: bool = False,
        cache: JudgmentCache | None = None,
    ) -> None:
        if batch_size <= 0:
            raise ValueError("batch_size must be > 0")
        self.llm = llm
        self.checkpoint = Path(checkpoint)
        self._writer = JsonlCheckpoint(self.checkpoint)
        self.batch_size = batch_size
        self.few_shot = few_shot
        self.prompt_version = PROMPT_VERSIONS[few_shot]
        self.scored = 0
        self.from_cache = 0
        self.cache = cache

    @property
    def model(self) -> str:
        return self.llm.model_id

    def load_checkpoint(self) -> dict[tuple[str, str], float]:
        """Scores already computed with this model and prompt version (a torn last line is ignored)."""
        done: dict[tuple[str, str], float] = {}
        shards = sorted(
            self.checkpoint.parent.glob(f"{self.checkpoint.stem}.shard-*{self.checkpoint.suffix}")
        )
        for writer in (*(JsonlCheckpoint(path) for path in shards), self._writer):
            for row in writer.records():
                if row.get("model") == self.model and row.get("prompt_version") == self.prompt_version:
                    done[(row["query_id"], row["tool_id"])] = float(row["score"])
        return done

    def score(
        self,
        pairs: Sequence[PairText],
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[tuple[str, str], float]:
        """Scores in [0, 1] for every pair, computing only those the checkpoint lacks."""
        scores = self.load_checkpoint()
        todo = [p for p in dict.fromkeys(pairs) if p.key not in scores]
        log.info(
            "validator: %d pairs, %d from checkpoint, %d to score",
            len(pairs),
            len(pairs) - len(todo),
            len(todo),
        )
        if self.cache is not None and todo:
            keys = {p.key: conversation_key(pair_conversation(p, self.few_shot)) for p in todo}
            hits = self.cache.get(list(keys.values()))
            found = [p for p in todo if keys[p.key] in hits]
            if found:
                self._writer.append([self._row(p, hits[keys[p.key]]) for p in found], sort_keys=True)
                scores.update({p.key: hits[keys[p.key]] for p in found})
                self.from_cache += len(found)
                todo = [p for p in todo if keys[p.key] not in hits]
                log.info("validator: %d pairs from the judgment cache, %d to score", len(found), len(todo))
        bar = Progress(len(todo), "validator", "pairs", log)
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            probs = self.llm.yes_probability([pair_conversation(p, self.few_shot) for p in batch])
            if len(probs) != len(batch):
                raise RuntimeError(f"LLM returned {len(probs)} scores for {len(batch)} pairs")
            rows = []
            for pair, prob in zip(batch, probs, strict=True):
                value = float(prob)
                if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                    raise RuntimeError(f"LLM score {value!r} for pair {pair.key} is not a probability")
                scores[pair.key] = value
                rows.append(self._row(pair, value))
            self._writer.append(rows, sort_keys=True)
            if self.cache is not None:
                self.cache.put(
                    {
                        conversation_key(pair_conversation(p, self.few_shot)): r["score"]
                        for p, r in zip(batch, rows, strict=True)
                    }
                )
            self.scored += len(batch)
            done = start + len(batch)
            bar.update(len(batch))
            if progress:
                progress(done, len(todo))
        bar.close()
        return scores

    def _row(self, pair: PairText, score: float) -> dict[str, object]:
        return {
            "query_id": pair.query_id,
            "tool_id": pair.tool_id,
            "score": score,
            "model": self.model,
            "prompt_version": self.prompt_version,
        }


def shard_checkpoint(checkpoint: Path, shard: int, shards: int) -> Path:
    """The checkpoint shard ``shard`` of ``shards`` writes beside ``checkpoint`` (which reads it back)."""
    return checkpoint.with_name(f"{checkpoint.stem}.shard-{shard:03d}-of-{shards:03d}{checkpoint.suffix}")


def shard_pairs(pairs: Sequence[PairText], shard: int, shards: int) -> list[PairText]:
    """The pairs of every ``shards``-th query (in first-seen order), starting at ``shard``, in their order.

    Whole queries, not every n-th pair: a query's candidates go to one worker one after another, where
    llama.cpp reuses the slot that holds the query's request (``LlamaCppLLM.yes_probability``).
    """
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in 0..{shards - 1}")
    order = {q: i for i, q in enumerate(dict.fromkeys(p.query_id for p in pairs))}
    return [p for p in pairs if order[p.query_id] % shards == shard]
