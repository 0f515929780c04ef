"""Query generation: prompt the LLM per tool, parse, filter, retry, and checkpoint every tool's result.

Capable models (the embedded Qwen2.5-Coder-1.5B, models behind the openai backend) get the paper's list
prompt (``list`` mode); the 135M test model, which repeats itself when asked for a list, gets one query
per sample (``single`` mode). A backend that serves several calls at once (``LLMClient.in_flight``:
llama.cpp's slots, an HTTP pool) gets one tool per call and that many tools in flight, so a slot starts
the next tool the moment its answer ends; other backends get several tools' samples in one batch. Every
sample has its own seed derived from the tool id, so a resumed run produces what an uninterrupted one
would. A list answer
is screened line by line while it is decoded and ends as soon as its tool has the queries it wants,
since the rest would be thrown away, or once ``give_up_after`` items in a row were rejected, since the
rest of a list that has fallen into repeats is rarely kept (backends that can stop mid-answer:
llama.cpp; the others screen a whole answer by the same rule). Each tool is appended
to a JSONL checkpoint (``ecoagent.checkpoint``, fsynced) the moment it finishes, and tools already there
are skipped on rerun.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ecoagent.checkpoint import JsonlCheckpoint
from ecoagent.llm import LLMClient, SamplingParams, StopWhen
from ecoagent.progress import Progress
from generators.filters import (
    FILTER_VERSION,
    MAX_WORDS,
    MIN_WORDS,
    injected_words,
    near_duplicate,
    rejection,
)
from generators.parse import is_list, parse_queries
from generators.prompts import (
    FEW_SHOT,
    PROMPT_VERSION,
    PromptMode,
    list_conversation,
    prompt_fingerprint,
    single_conversation,
)

log = logging.getLogger(__name__)

# Calls per tool in list mode: answers given up after two rejected items in a row (``give_up_after``)
# are short, so a tool makes more of them; five kept as many tools at 10 queries as three whole lists
# did, in a replay of three 100-tool checkpoints (bench/RESULTS.md, "Give up a list that repeats").
LIST_MAX_ROUNDS = 5


@dataclass(frozen=True)
class GenerationConfig:
    """How many queries to ask for and how to decode them.

    Args:
        queries_per_tool: distinct valid queries wanted per tool.
        mode: ``single`` (one query per sample; small models) or ``list`` (the paper's list prompt).
        oversample: samples drawn per wanted query in the first round (``single`` mode), or requests asked
            for per wanted query in one ``list`` call.
        max_rounds: rounds of sampling per tool; later rounds retry only what is still missing.
            ``generators.pipeline`` gives list mode ``LIST_MAX_ROUNDS`` (5): its answers end early.
        tools_per_batch: tools whose samples share one call to the LLM, for backends that batch inside a
            call (``in_flight`` 1: transformers); the others keep ``in_flight`` tools going instead.
        temperature: moderate: lower repeats itself, higher drifts off topic on the 135M model.
        top_p: nucleus mass.
        max_new_tokens: per sample (``list`` mode scales it by the number of queries).
        repetition_penalty: passed to the backend; 1.0 because transformers applies it to the prompt too,
            which would push queries away from the words of the tool's own description.
        min_words: shorter queries are rejected.
        max_words: longer queries are rejected.
        rivals: nearest tools the ``list`` prompt shows for contrast (``generators.rivals``; the tool dicts
            carry them); 0 = none. Part of the checkpoint key.
        give_up_after: a list answer ends after this many items in a row were rejected (0 = never) and
            its tool asks again in the next round: in three 100-tool checkpoints of the 1.5B model the item
            after two rejections in a row was kept 11 % of the time, after three 7 %, while the items of a
            tool's first, second and third call were kept 61, 50 and 39 % of the time
            (``bench/bench_syn_give_up.py``). Only list answers have several items.
    """

    queries_per_tool: int = 10
    mode: PromptMode = "single"
    oversample: float = 1.5
    max_rounds: int = 3
    tools_per_batch: int = 4
    temperature: float = 0.6
    top_p: float = 0.95
    max_new_tokens: int = 40
    repetition_penalty: float = 1.0
    min_words: int = MIN_WORDS
    max_words: int = MAX_WORDS
    rivals: int = 0
    give_up_after: int = 2

    def __post_init__(self) -> None:
        if self.queries_per_tool <= 0:
            raise ValueError("queries_per_tool must be > 0")
        if self.oversample < 1:
            raise ValueError("oversample must be >= 1")
        if self.max_rounds <= 0 or self.tools_per_batch <= 0:
            raise ValueError("max_rounds and tools_per_batch must be > 0")
        if not 0 < self.min_words <= self.max_words:
            raise ValueError("need 0 < min_words <= max_words")
        if self.give_up_after < 0:
            raise ValueError("give_up_after must be >= 0")
        if self.rivals < 0 or (self.rivals and self.mode != "list"):
            raise ValueError("rivals must be >= 0, and only the list prompt shows them")

    @property
    def list_size(self) -> int:
        """Requests asked for per ``list`` call: ``oversample`` x wanted, so a few rejected still leave enough."""
        return math.ceil(self.queries_per_tool * self.oversample)

    def sampling(self, seed: int) -> SamplingParams:
        tokens = self.max_new_tokens if self.mode == "single" else self.max_new_tokens * self.list_size
        stop = ("\n",) if self.mode == "single" else ()
        return SamplingParams(
            max_new_tokens=tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            repetition_penalty=self.repetition_penalty,
            seed=seed,
            stop=stop,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "prompt_version": PROMPT_VERSION,
            "prompt_sha": prompt_fingerprint(),
            "filters": FILTER_VERSION,
        }


def tool_seed(tool_id: str, seed: int) -> int:
    """A per-tool seed that depends only on the tool and the run's seed (not on batch order)."""
    digest = hashlib.sha256(f"{seed}:{tool_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x3FFFFFFF


@dataclass
class _ToolState:
    tool: Mapping[str, Any]
    base_seed: int
    queries: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    samples: int = 0
    rounds: int = 0

    def missing(self, want: int) -> int:
        return max(0, want - len(self.queries))


class QueryGenerator:
    """Generate queries for tools with one LLM client, checkpointing per tool.

    Args:
        llm: any ``LLMClient``.
        config: the generation settings.
        seed: the run's seed.
    """

    def __init__(self, llm: LLMClient, config: GenerationConfig, seed: int = 0) -> None:
        self.llm = llm
        self.config = config
        self.seed = seed
        self.generated_tokens = 0
        self.generation_seconds = 0.0
        self.generation_cpu_seconds = 0.0  # this process's CPU time in LLM calls (llama.cpp runs in-process)
        self.tools_generated = 0  # tools generated in this run, not read back from a checkpoint
        self.stopped_early = 0  # list answers ended once their tool had enough (llama.cpp backend)
        self.given_up = 0  # list answers ended after ``give_up_after`` rejected items in a row
        self._lock = threading.Lock()

    def _requests(self, state: _ToolState) -> list[tuple[Any, int]]:
        """(conversation, seed) pairs for the next round of one tool."""
        cfg = self.config
        want = state.missing(cfg.queries_per_tool)
        if cfg.mode == "list":
            n = 1
        elif state.rounds == 0:
            n = math.ceil(cfg.queries_per_tool * cfg.oversample)
        else:
            n = 2 * want
        out = []
        for k in range(n):
            index = state.samples + k
            if cfg.mode == "list":
                conv = list_conversation(state.tool, cfg.list_size)
            else:
                conv = single_conversation(state.tool, index)
            out.append((conv, state.base_seed + index))
        return out

    def _accept(self, state: _ToolState, raw: str, seed: int, prefix: str = "") -> None:
        if prefix:  # the opener was prefilled: the answer continues it
            raw = prefix + ("" if raw[:1] in (" ", ",", "?", ".", "'") else " ") + raw.lstrip("\n")
        self._screen(state.tool, raw, seed, state.queries, state.failures)

    def _screen(
        self,
        tool: Mapping[str, Any],
        raw: str,
        seed: int,
        queries: list[dict[str, Any]],
        failures: list[dict[str, Any]],
    ) -> bool:
        """Parse one answer and append its queries that pass every filter (up to the number wanted) to
        ``queries`` and the others, with their reason, to ``failures``. Returns whether the answer was
        given up: ``give_up_after`` items in a row rejected, after which its items are not screened (a
        streamed answer ends there, ``_enough``, so a whole answer is read the same way)."""
        parsed = parse_queries(raw)
        if parsed.reason:
            failures.append({"raw": raw, "reason": parsed.reason, "seed": seed})
            return False
        candidates = parsed.queries[:1] if self.config.mode == "single" else parsed.queries
        examples = [answer for _, _, answer in FEW_SHOT] if self.config.mode == "single" else []
        injected = injected_words(str(tool.get("description") or ""))
        rejected_in_a_row = 0
        for i, query in enumerate(candidates):
            # only the last item of an answer may stop at the token limit, and only when the answer
            # does not end at a line break; earlier ones ended at a newline
            last = i == len(candidates) - 1 and not raw.endswith("\n")
            reason = rejection(
                query,
                self.config.min_words,
                self.config.max_words,
                examples=examples,
                check_end=last,
                injected=injected,
            )
            if not reason and near_duplicate(query, [q["query"] for q in queries]):
                # exact repeats and near-duplicates (the dedup rule, Jaccard 1.0 for an exact repeat), so the
                # tool asks again instead of losing them at dedup
                reason = "repeats an earlier query of this tool"
            if reason:
                failures.append({"raw": raw, "query": query, "reason": reason, "seed": seed})
                rejected_in_a_row += 1
                if rejected_in_a_row == self.config.give_up_after:
                    return True
                continue
            rejected_in_a_row = 0
            if len(queries) < self.config.queries_per_tool:
                queries.append({"query": query, "seed": seed})
        return False

    def _enough(self, states: list[_ToolState], index: int, so_far: str) -> bool:
        """Whether answer ``index``'s complete lines so far already give its tool (``states[index]``) all
        the queries it wants, so the rest of the list would be thrown away, or were given up (``_screen``):
        the same screening on copies."""
        state = states[index]
        if not is_list(so_far):  # a JSON answer is judged when it closes, not line by line
            return False
        queries = list(state.queries)
        gave_up = self._screen(state.tool, so_far, 0, queries, [])
        enough = len(queries) >= self.config.queries_per_tool
        if enough or gave_up:
            with self._lock:
                if enough:
                    self.stopped_early += 1
                else:
                    self.given_up += 1
        return enough or gave_up

    def _run_batch(self, states: list[_ToolState], finished: Callable[[_ToolState], None]) -> None:
        cfg = self.config
        pending = list(states)
        while True:
            active = [s for s in states if s.missing(cfg.queries_per_tool) and s.rounds < cfg.max_rounds]
            for s in pending:
                if s not in active:
                    finished(s)  # checkpointed now, before the batch's other tools need more rounds
            pending = active
            if not active:
                return
            jobs = [(s, conv, seed) for s in active for conv, seed in self._requests(s)]
            params = cfg.sampling(0)
            # a list answer stops once its tool has enough (single-mode samples are one line each)
            stop_when = partial(self._enough, [s for s, _, _ in jobs]) if cfg.mode == "list" else None
            outputs = self._generate(
                [conv for _, conv, _ in jobs], [seed for _, _, seed in jobs], params, stop_when
            )
            for (state, conv, seed), raw in zip(jobs, outputs, strict=True):
                prefix = conv[-1]["content"] if conv[-1]["role"] == "assistant" else ""
                self._accept(state, raw, seed, prefix)
            for s in active:
                s.samples += sum(1 for st, _, _ in jobs if st is s)
                s.rounds += 1

    def _run_in_flight(
        self, states: list[_ToolState], finished: Callable[[_ToolState], None], in_flight: int
    ) -> None:
        """Each tool through all its rounds on its own, ``in_flight`` tools at a time, in order.

        Batches of tools would leave a slot idle from the moment its answer ends (early, once its tool
        has enough) until the batch's longest answer ends; here the next tool takes the slot. llama.cpp
        decodes 16 answers 1.7x faster per token than 4 on 2 cores (bench/RESULTS.md), so the slots are
        worth keeping full. The first failure stops tools not yet started and is raised.
        """
        with ThreadPoolExecutor(in_flight, thread_name_prefix="syn-tool") as pool:
            futures = [pool.submit(self._run_batch, [s], finished) for s in states]
            _, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for f in pending:
                f.cancel()
            for f in futures:
                if f.done() and not f.cancelled():
                    f.result()  # raises the first failure, after the tools in flight have finished

    def _generate(
        self,
        conversations: list[Any],
        seeds: list[int],
        params: SamplingParams,
        stop_when: StopWhen | None = None,
    ) -> list[str]:
        out = self.llm.generate_seeded(conversations, params, seeds, stop_when)
        counter = getattr(self.llm, "count_tokens", None)
        if counter is not None:
            tokens = counter(out)
            with self._lock:
                self.generated_tokens += tokens
        return out

    def run(self, tools: list[Mapping[str, Any]], checkpoint: Path) -> Iterator[dict[str, Any]]:
        """Yield one record per tool (``tool_id``, ``queries``, ``failures``, ``samples``), resuming.

        Records already in ``checkpoint`` are yielded from it without calling the LLM.
        """
        done = read_checkpoint(checkpoint)
        todo = [t for t in tools if t["tool_id"] not in done]
        if done:
            log.info("resuming: %d of %d tools already generated", len(tools) - len(todo), len(tools))
        writer = JsonlCheckpoint(checkpoint)
        bar = Progress(len(todo), "syn generation", "tools", log)

        def finished(s: _ToolState) -> None:
            record = {
                "tool_id": s.tool["tool_id"],
                "queries": s.queries,
                "failures": s.failures,
                "samples": s.samples,
            }
            with self._lock:
                writer.append([record])  # fsynced: a kill loses only the tools still in flight
                done[record["tool_id"]] = record
                self.tools_generated += 1
                bar.update()

        states = [_ToolState(t, tool_seed(t["tool_id"], self.seed), [], []) for t in todo]
        started, cpu = time.perf_counter(), time.process_time()
        in_flight = max(1, int(getattr(self.llm, "in_flight", 1)))
        if in_flight > 1 and states:
            self._run_in_flight(states, finished, in_flight)
        else:
            size = self.config.tools_per_batch
            for start in range(0, len(states), size):
                self._run_batch(states[start : start + size], finished)
        self.generation_seconds += time.perf_counter() - started
        self.generation_cpu_seconds += time.process_time() - cpu
        bar.close()
        for t in tools:
            yield done[t["tool_id"]]


def read_checkpoint(path: Path) -> dict[str, dict[str, Any]]:
    """Finished tools in a checkpoint (``ecoagent.checkpoint``: a torn last line is skipped)."""
    return {r["tool_id"]: r for r in JsonlCheckpoint(path).records() if "tool_id" in r}
