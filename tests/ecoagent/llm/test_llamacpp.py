"""The llama.cpp backend on the packaged SmolLM2 GGUF: prefill, stops, batching, P(yes), joined weights."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ecoagent.config import SMOLLM2, ModelConfig
from ecoagent.llm import SamplingParams, make_llm
from ecoagent.llm.embedded import EmbeddedLLM
from ecoagent.llm.llamacpp import (
    JUDGE_SLOTS,
    LlamaCppLLM,
    amx_patched,
    busy_elsewhere,
    cpu_features,
    free_cores,
    judge_extra_buffers,
    resolve_gguf,
    uses_openmp,
)
from ecoagent.models import PackagedGGUF, join_parts
from ecoagent.summary import _field

pytest.importorskip("xllamacpp")

TOOL_CHAT = [
    {"role": "system", "content": "You write short requests that users send to an assistant."},
    {"role": "user", "content": "Write one request for a weather forecast tool."},
]


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    client = LlamaCppLLM(SMOLLM2, threads=1, slots=2)
    yield client
    client.close()


def test_prefilled_answer_continues_the_prefix_and_stops(llm: LlamaCppLLM) -> None:
    conv = [*TOOL_CHAT, {"role": "assistant", "content": "Can you"}]
    params = SamplingParams(max_new_tokens=30, temperature=0.0, stop=("\n",))
    [text] = llm.generate_seeded([conv], params, [0])
    assert text and not text.startswith("Can you")  # the prefix is not returned twice
    assert "\n" not in text
    assert llm.count_tokens([text]) > 0


def test_greedy_text_does_not_depend_on_the_batch(llm: LlamaCppLLM) -> None:
    convs = [TOOL_CHAT, [*TOOL_CHAT[:1], {"role": "user", "content": "Write one request for a map tool."}]]
    params = SamplingParams(max_new_tokens=20, temperature=0.0)
    alone = llm.generate_seeded(convs[:1], params, [0])
    together = llm.generate_seeded(convs, params, [0, 1])
    assert together[0] == alone[0]
    assert together[1] != together[0]


FRUITS = [{"role": "user", "content": "Write a numbered list of 20 different fruits, one per line."}]


def test_stop_when_ends_an_answer_at_a_line_and_keeps_what_the_whole_answer_began_with(
    llm: LlamaCppLLM,
) -> None:
    params = SamplingParams(max_new_tokens=120, temperature=0.0)
    [whole] = llm.generate_seeded([FRUITS], params, [0])
    whole_tokens = llm.count_tokens([whole])
    assert whole.count("\n") > 4  # enough lines to stop inside
    seen: list[tuple[int, str]] = []

    def three_lines(index: int, so_far: str) -> bool:
        seen.append((index, so_far))
        return so_far.count("\n") >= 3

    [cut] = llm.generate_seeded([FRUITS], params, [0], stop_when=three_lines)
    assert cut == "".join(whole.splitlines(keepends=True)[:3])  # the whole answer's first three lines
    assert [so_far.count("\n") for _, so_far in seen] == [1, 2, 3] and {i for i, _ in seen} == {0}
    assert 0 < llm.count_tokens([cut]) < whole_tokens  # decoding really ended there


def test_an_error_in_stop_when_reaches_the_caller(llm: LlamaCppLLM) -> None:
    def broken(index: int, so_far: str) -> bool:
        raise KeyError("no such tool")

    with pytest.raises(KeyError, match="no such tool"):
        llm.generate_seeded([FRUITS], SamplingParams(max_new_tokens=60, temperature=0.0), [0], broken)
    [text] = llm.generate_seeded([TOOL_CHAT], SamplingParams(max_new_tokens=10, temperature=0.0), [0])
    assert text  # the server still answers after the cancelled request


def test_yes_probability_agrees_with_transformers_on_the_same_weights(llm: LlamaCppLLM) -> None:
    # the same GGUF through two runtimes: the yes/no read-out of top log-probs must match the full softmax
    convs = [
        [{"role": "user", "content": "Is Paris the capital of France? Answer yes or no."}],
        [{"role": "user", "content": "Is the sea made of sand? Answer yes or no."}],
        [
            {"role": "system", "content": "Answer with yes or no."},
            {"role": "user", "content": "Is 2 + 2 = 4?"},
        ],
    ]
    ours = llm.yes_probability(convs)
    reference = EmbeddedLLM(SMOLLM2, batch_size=4, threads=1).yes_probability(convs)
    assert all(0.0 < p < 1.0 for p in ours)
    assert ours == pytest.approx(reference, abs=0.12)


def test_neighbouring_judgments_share_their_prompt_and_keep_their_order(llm: LlamaCppLLM) -> None:
    # two requests, each judged against two tools, in the order the Real stage sends a query's
    # candidates: each slot judges a contiguous run, so a request's second pair finds system turn and
    # request in its slot's cache. Spread one by one, both pairs of a request ran at once on two slots.
    requests = [
        "I run a bakery in Porto and need to send the weekly order list to our flour supplier by email, "
        "then put the delivery date in the shared calendar and tell the whole team on our chat channel.",
        "Our hiking club wants the weather forecast for the Serra da Estrela next weekend, a map of the "
        "trail from Manteigas to the Torre, and the price of the bus tickets from Lisbon for twelve people.",
    ]
    convs = [
        [
            {"role": "system", "content": "Answer yes or no."},
            {"role": "user", "content": f"Request: {request}\nTool: {tool}"},
        ]
        for request in requests
        for tool in ("send an email", "convert a currency")
    ]
    alone = [llm.yes_probability([conv])[0] for conv in convs]
    for other in ("Is the sea blue?", "Is ice cold?"):  # both slots now hold unrelated prompts
        llm.yes_probability([[{"role": "user", "content": f"{other} Answer yes or no."}]])
    cached = llm.cached_prompt_tokens
    together = llm.yes_probability(convs)
    # same answers, in the input order. A prefix read from the slot's cache rounds differently from one
    # computed afresh: within 0.02 on PyPI's AVX2 wheel, up to 0.062 on SmolLM2 with a build compiled
    # for an AVX-512 CPU (scripts/setup.sh), so each answer is checked against its own and the others.
    tolerance = 0.08 if "AVX512" in cpu_features() else 0.02
    assert together == pytest.approx(alone, abs=tolerance)
    for i, p in enumerate(together):
        assert abs(p - alone[i]) <= min([abs(p - q) for j, q in enumerate(alone) if j != i] + [tolerance]), (
            together,
            alone,
        )
    assert llm.cached_prompt_tokens - cached >= 80  # each request's second pair reused its ~50 tokens


def test_two_judges_score_the_same_pairs_to_the_bit() -> None:
    """A rebuild must give Real the same scores: with 4 judge slots llama.cpp batched neighbouring pairs'
    tokens together as they arrived and P(yes) moved by up to 0.067 between two builds (bench/RESULTS.md),
    so a judge scores one pair at a time (``JUDGE_SLOTS``). On SmolLM2's short prompts here 4 slots also
    agreed, so the pin on ``JUDGE_SLOTS`` is what catches a return to batched judging."""
    assert JUDGE_SLOTS == 1
    subjects = ["Paris in France", "the sun a planet", "two plus two four", "ice hot", "Rome in Italy"]
    pairs = [[{"role": "user", "content": f"Is {s}? Answer yes or no."}] for s in subjects] * 2
    scores = []
    for _ in range(2):
        judge = make_llm(ModelConfig(llm=SMOLLM2, llm_backend="llamacpp"), threads=1, workload="judge")
        try:
            assert judge.slots == 1
            scores.append(judge.yes_probability(pairs))
        finally:
            judge.close()
    assert scores[0] == scores[1]


def test_conversation_must_end_with_the_user(llm: LlamaCppLLM) -> None:
    with pytest.raises(ValueError, match="end with a user message"):
        llm.yes_probability([[{"role": "system", "content": "hello"}]])


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="neither a packaged model"):
        resolve_gguf("no/such-model")


def test_free_cores_is_at_least_one() -> None:
    assert 1 <= free_cores() <= len(os.sched_getaffinity(0))


def test_a_spinning_process_is_busy_and_our_own_work_is_not() -> None:
    """Another process's spinning core counts; this process's own busy thread does not."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        assert busy_elsewhere(0.5) >= 0.6
        if len(os.sched_getaffinity(0)) <= 2:
            assert free_cores() == 1
    finally:
        child.kill()
        child.wait()
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    background = busy_elsewhere(0.5)  # what other jobs on this machine use (0 on an idle CI runner)
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        before = busy_elsewhere(0.5)
    finally:
        stop.set()
        spinner.join()
    # our own spinning thread is not "elsewhere": counted, it would add a whole core to the background
    assert background is not None and before is not None and before < background + 0.5


def test_split_weights_are_joined_and_checked(tmp_path: Path) -> None:
    parts = [tmp_path / f"part{i}" for i in range(3)]
    for i, p in enumerate(parts):
        p.write_bytes(bytes([i]) * 1000)
    data = b"".join(p.read_bytes() for p in parts)
    good = PackagedGGUF("m.gguf", ("a", "b", "c"), len(data), hashlib.sha256(data).hexdigest(), "test", "MIT")
    target = join_parts(good, parts, tmp_path / "m.gguf")
    assert target.read_bytes() == data
    bad = PackagedGGUF("n.gguf", ("a", "b", "c"), len(data), "0" * 64, "test", "MIT")
    with pytest.raises(ValueError, match="does not match the published checksum"):
        join_parts(bad, parts, tmp_path / "n.gguf")
    assert not (tmp_path / "n.gguf").exists() and not list(tmp_path.glob("n.gguf.*"))  # nothing half-written
    short = PackagedGGUF("o.gguf", ("a", "b"), len(data) + 1, good.sha256, "test", "MIT")
    with pytest.raises(ValueError, match="expected"):
        join_parts(short, parts, tmp_path / "o.gguf")


# llama.cpp's names for its CPU features, and the /proc/cpuinfo flag each needs
CPUINFO_FLAG = {
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="reads /proc/cpuinfo")
def test_the_build_uses_only_what_this_cpu_has_and_says_so(llm: LlamaCppLLM) -> None:
    """A native build (scripts/setup.sh on an AVX-512 CPU) carried to another CPU would die of an illegal
    instruction mid-run: every feature llama.cpp was compiled for must be a flag of this CPU."""
    features = cpu_features()
    assert "AVX2" in features  # the wheel's floor, and every native build here
    flags = set((_field(Path("/proc/cpuinfo").read_text(), "flags") or "").split())
    assert all(CPUINFO_FLAG.get(name, name.lower()) in flags for name in features), (features, flags)
    assert llm.info()["runtime_cpu_features"] == " ".join(features)


@pytest.mark.skipif(shutil.which("ldd") is None, reason="reads the extension's links with ldd")
def test_the_openmp_flag_says_whether_the_extension_links_libgomp(llm: LlamaCppLLM) -> None:
    """setup.sh's build has no OpenMP and the wheel has it; stats files tell them apart by this flag."""
    import xllamacpp

    extension = next(Path(xllamacpp.__file__).parent.glob("xllamacpp*.so"))
    links = subprocess.run(["ldd", str(extension)], capture_output=True, text=True, check=True).stdout
    assert uses_openmp() == ("libgomp" in links)
    assert llm.info()["runtime_openmp"] is uses_openmp()


def test_a_build_with_unpatched_amx_kernels_loads_without_extra_buffer_types(llm: LlamaCppLLM) -> None:
    """ggml's AMX kernels as shipped died of SIGILL while loading any model on an Intel Xeon VM that lists
    amx_int8 (upstream llama.cpp PR #26954). setup.sh patches them and marks the build; an unmarked build
    with them (one compiled elsewhere) must load with extra buffer types off, which is where those kernels
    run, and say so. On an AMX machine with setup.sh's build this loads and runs the patched kernels."""
    unsafe = "AMX_INT8" in cpu_features() and not amx_patched()
    assert llm.info()["runtime_extra_buffers"] is not unsafe
    assert llm.info()["runtime_amx_patched"] is amx_patched()
    assert llm.generate([[{"role": "user", "content": "Say hello."}]], SamplingParams(max_new_tokens=4))[0]


def test_amx_patched_reads_the_mark_setup_leaves_beside_the_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "xllamacpp"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "xllamacpp", raising=False)
    assert not amx_patched()
    (package / "ECOAGENT_AMX_PATCH").write_text("scripts/patches/ggml-amx-tile-config.patch\n")
    assert amx_patched()


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="reads /proc/cpuinfo")
def test_a_native_build_on_an_amx_cpu_has_the_patched_amx_kernels() -> None:
    """setup.sh patches ggml's AMX kernels before compiling for the CPU, and falls back to a build without
    them when the patch no longer applies (a new xllamacpp): on an AMX CPU that fallback must not pass
    unnoticed, since it costs 1.18-1.29x per judgment there (bench/RESULTS.md)."""
    flags = set((_field(Path("/proc/cpuinfo").read_text(), "flags") or "").split())
    features = cpu_features()
    if "AVX512" not in features or "amx_int8" not in flags:
        pytest.skip("not setup.sh's native build on an AMX CPU")
    assert "AMX_INT8" in features and amx_patched()


def test_a_judge_loads_without_repacked_weights_only_on_an_avx512_build(llm: LlamaCppLLM) -> None:
    """The Real validator's judgments are prefill-bound: on an AVX-512 build they ran 1.25x cheaper without
    llama.cpp's repacked weights, while AVX2 builds judged as fast or faster with them (bench/RESULTS.md)."""
    assert judge_extra_buffers(["AVX", "AVX2", "F16C", "FMA"])
    assert not judge_extra_buffers(["AVX", "AVX2", "AVX512", "AVX512_VNNI"])
    assert judge_extra_buffers(["AVX", "AVX2", "AVX512", "AVX512_VNNI", "AMX_INT8"])  # AMX runs there
    features = cpu_features()
    safe = "AMX_INT8" not in features or amx_patched()
    judge = make_llm(ModelConfig(llm=SMOLLM2, llm_backend="llamacpp"), threads=1, slots=1, workload="judge")
    try:
        assert judge.info()["runtime_extra_buffers"] is (safe and judge_extra_buffers(features))
        assert judge.info()["runtime_workload"] == "judge" and llm.info()["runtime_workload"] == "generate"
        assert llm.info()["runtime_extra_buffers"] is safe  # a generator keeps them
        # the same model judges the same way either way (kernels differ, so not bit for bit)
        pairs = [[{"role": "user", "content": "Is Paris in France? Answer yes or no."}]]
        assert judge.yes_probability(pairs)[0] == pytest.approx(llm.yes_probability(pairs)[0], abs=0.05)
    finally:
        judge.close()
    with pytest.raises(ValueError, match="workload"):
        LlamaCppLLM(SMOLLM2, workload="score")  # type: ignore[arg-type]
