"""The embedded LLM backends side by side: llama.cpp (``xllamacpp``) against transformers, same model,
same prompts, one run; and the Syn generator choices by yield per CPU-second.

Run: ``.venv/bin/python bench/bench_llm.py [--tools out/tools.parquet] [--model Qwen/Qwen2.5-Coder-1.5B-Instruct]
[--threads 1] [--requests 8] [--slots 4] [--warmup 4] [--judgments 16] [--real-pairs PATH] [--yield-tools 8]
[--transformers-batches 1,8]
[--skip-transformers] [--openvino]``. Prints Markdown
tables (copied into ``bench/results/llm.md``).

- Requests: the Syn few-shot prompt of real crawled tools (~370 tokens), 40 new tokens, temperature 0.6.
  ``--warmup`` requests (other tools, same shared prefix) run untimed first on every backend, so the timed
  ones measure the steady state of a long Syn run, where llama.cpp's slots already hold the shared
  prefix; ``--warmup 0`` times the cold start.
- Judgments: the pairs the Real stage's validator judged in the build beside ``--tools``
  (``real/validator_checkpoint.jsonl``, or ``--real-pairs``), rendered as the stage renders them (the
  crawled tool's platform, tags and arguments), one token out, in the order the stage judged them (a
  query's pairs one after another); without that file, ToolBench's labelled pairs as the stage's
  measurement renders them. Until 2026-12-06 the bench rendered ToolBench APIs without context or
  arguments: 86 uncached tokens per judgment against the stage's 130-136, which flattered the prompt cache.
  ``--warmup`` judgments run untimed first too, so llama.cpp's slots hold the judge's system turn, as
  they do after the first few judgments of a Real run. The judge's row prints its prompt tokens per
  judgment and how many came from the cache: a prefill-bound judgment costs about what it cannot take
  from the cache, while transformers prefills the whole prompt, so their ratio follows that share.
- llama.cpp runs twice, as Syn loads it (``workload="generate"``) and as Real's validator loads it
  (``workload="judge"``: without repacked weights on an AVX-512 build); the ratios compare requests with
  the first and judgments with the second, and P(yes) agreement is measured against the judge.
  ``--slots`` (default 4) is the generator's: Syn runs it with 16 tools in flight
  (``ecoagent.llm.llamacpp.GENERATE_SLOTS``), which only ``--requests`` of 16 or more fill; the judge
  keeps its own (``JUDGE_SLOTS``: 1 since 2026-12-05, 4 in the runs recorded before).
- transformers runs at batch 1 and batch 8 by default (``--transformers-batches``), each with its own ratio
  row. Batch 1 is the issue's baseline (``../shared/MODELS.md`` compares 22.7 CPU-s per request at batch 1
  with llama.cpp's 4 slots, and has no batched figure for the 1.5B); batch 8 was transformers' cheaper
  setting on both CPUs where both were measured (an AVX2 EPYC and a Zen 4), so its ratio is the stricter one.
  Report both.
- CPU-seconds are ``time.process_time()`` of this process (all its threads), so they do not count the
  waiting a busy machine adds; wall seconds are printed beside them.
- P(yes) agreement: each backend's judgments against llama.cpp's on the same pairs (mean and largest
  absolute difference, Spearman's rank correlation), since a faster judge is only a substitute if it
  ranks the pairs the same way.
- ``--openvino`` adds OpenVINO GenAI (``openvino-genai``, not a dependency of the project: install it
  into the venv first) reading the same GGUF: ``LLMPipeline`` with its prefix cache, requests in groups of
  4 prompts per ``generate`` (one seed per group), judgments one at a time as a one-token beam search of 20
  beams, whose scores are the first token's top-20 log-probs (``LLMPipeline`` returns no top log-probs).
  It is a probe for choosing a runtime, not a backend of the pipeline.
- Yield table: per generator choice, queries kept after the filters per tool and how many retrieve their
  own tool in the MiniLM top 10 among all tools, per CPU-second of generation.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.config import MINILM, QWEN_CODER_0_5B, QWEN_CODER_1_5B, ModelConfig
from ecoagent.llm import SamplingParams, make_llm
from ecoagent.llm.llamacpp import JUDGE_SLOTS
from ecoagent.summary import cpu_model, print_table


def llamacpp_build() -> str:
    """Which ``xllamacpp`` ran: the PyPI wheel (AVX2) or a build for this CPU (``scripts/setup.sh``)."""
    try:
        import xllamacpp

        from ecoagent.llm.llamacpp import cpu_features
    except ImportError:
        return "not installed"
    return f"xllamacpp {xllamacpp.__version__} from {Path(xllamacpp.__file__).parent}: {' '.join(cpu_features())}"


ROLES = {"generate": "Syn's generator", "judge": "Real's judge"}


def sample_tools(tools: pl.DataFrame, per_platform: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    picks: list[dict[str, Any]] = []
    for platform in sorted(tools["platform"].unique()):
        part = tools.filter(pl.col("platform") == platform).sort("tool_id")
        n = min(per_platform, part.height)
        picks += [part.row(int(i), named=True) for i in rng.choice(part.height, n, replace=False)]
    return picks


def judgment_prompts(n: int, real_pairs: Path, tools: pl.DataFrame) -> tuple[list[Any], str]:
    """``n`` yes/no prompts as the Real stage renders them, and where they came from.

    The pairs the Real stage's validator judged in a build (``real/validator_checkpoint.jsonl``, in the
    order it judged them), each rendered from the crawled tool as the stage renders it (platform, tags,
    arguments: ``validators.pipeline.tool_pair``). Without that file, ToolBench's labelled pairs as the
    stage's measurement renders them (category, arguments: ``validators.labels.api_pair``). A judge's cost
    is the prompt it cannot take from its cache, so a prompt shorter than the stage's would flatter it.
    """
    from ecoagent.checkpoint import JsonlCheckpoint
    from ecoagent.config import default_mirror
    from validators.labels import api_pair
    from validators.pipeline import tool_pair
    from validators.toolbench import load_toolbench, toolbench_root
    from validators.validator import pair_conversation

    queries = load_toolbench(toolbench_root(default_mirror())).queries
    pairs = []
    if real_pairs.is_file():
        text = {q.query_id: q.query for q in queries}
        by_id = {r["tool_id"]: r for r in tools.iter_rows(named=True)}
        for row in JsonlCheckpoint(real_pairs).records()[:n]:
            if row["query_id"] not in text or row["tool_id"] not in by_id:
                raise SystemExit(
                    f"{real_pairs}: the pair of query {row['query_id']} and tool {row['tool_id']} is not in "
                    "this ToolBench snapshot or --tools: give the tools.parquet of the same build"
                )
            pair = {"query_id": row["query_id"], "tool_id": row["tool_id"], "query": text[row["query_id"]]}
            pairs.append(tool_pair(pair, by_id[row["tool_id"]]))
        source = f"the Real stage's validator pairs ({real_pairs})"
    else:
        for q in queries:
            pairs += [api_pair(q, api) for api in q.apis if api.description][:2]
            if len(pairs) >= n:
                break
        source = "ToolBench's labelled pairs (no Real stage output beside --tools)"
    if len(pairs) < n:
        raise SystemExit(f"{source}: {len(pairs)} pairs, {n} wanted (--judgments + --warmup)")
    return [pair_conversation(p) for p in pairs[:n]], source


def timed(fn: Any) -> tuple[Any, float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def bench_backends(
    args: argparse.Namespace, table: pl.DataFrame, tools: list[dict[str, Any]]
) -> list[list[Any]]:
    from generators.prompts import single_conversation

    convs = [single_conversation(t, i) for i, t in enumerate(tools[: args.requests])]
    convs += [single_conversation(tools[0], i) for i in range(args.requests - len(convs))]
    # other tools than the timed ones: a warm-up on the same prompt would hand llama.cpp its whole cache
    warm = [
        single_conversation(t, i) for i, t in enumerate(tools[args.requests : args.requests + args.warmup])
    ]
    params = SamplingParams(max_new_tokens=40, temperature=0.6, stop=("\n",))
    seeds = list(range(len(convs)))
    real_pairs = Path(args.real_pairs or Path(args.tools).parent / "real" / "validator_checkpoint.jsonl")
    judge_all, source = judgment_prompts(args.judgments + args.warmup, real_pairs, table)
    print(f"judgments: {source}")
    judge, judge_warm = judge_all[: args.judgments], judge_all[args.judgments :]
    rows: list[list[Any]] = []
    judged: dict[str, list[float]] = {}
    backends = [] if args.skip_transformers else [("transformers", b, "") for b in args.batches]
    # llama.cpp twice: as Syn loads it (a generator) and as Real's validator loads it (a judge: on an AVX-512
    # build without repacked weights); requests are compared on the first, judgments on the second
    for backend, batch, workload in [*backends, ("llamacpp", 0, "generate"), ("llamacpp", 0, "judge")]:
        models = ModelConfig(llm=args.model, llm_backend=backend)  # type: ignore[arg-type]
        options: dict[str, Any] = {"threads": args.threads}
        if backend == "transformers":
            options["batch_size"] = batch
        else:
            options |= {"workload": workload, "slots": args.slots if workload == "generate" else JUDGE_SLOTS}
        if backend == "transformers":
            from ecoagent.llm.llamacpp import resolve_gguf

            models = ModelConfig(llm=str(resolve_gguf(args.model)), llm_backend="transformers")
        client, load_cpu, load_wall = timed(lambda m=models, o=options: make_llm(m, **o))
        if warm:
            client.generate_seeded(warm, params, [1000 + i for i in range(len(warm))])
        _, gen_cpu, gen_wall = timed(lambda c=client: c.generate_seeded(convs, params, seeds))
        if judge_warm:
            client.yes_probability(judge_warm)
        tokens = getattr(client, "prompt_tokens", None), getattr(client, "cached_prompt_tokens", None)
        p_yes, judge_cpu, judge_wall = timed(lambda c=client: c.yes_probability(judge))
        name = f"{backend} (batch {batch})" if batch else f"{backend} {workload}"
        if None not in tokens:
            total = client.prompt_tokens - tokens[0]
            cached = client.cached_prompt_tokens - tokens[1]
            print(
                f"{name}: {total / len(judge):.0f} prompt tokens per judgment, "
                f"{cached / len(judge):.0f} of them from the prompt cache"
            )
        judged[name] = p_yes
        rows.append(
            [
                f"{backend} (batch {batch})"
                if batch
                else f"llamacpp loaded as {ROLES[workload]} ({client.slots} slots, prompt cache; repacked weights "
                f"{'on' if client.info()['runtime_extra_buffers'] else 'off'})",
                round(load_cpu, 1),
                round(gen_cpu / len(convs), 2),
                round(gen_wall / len(convs), 2),
                round(judge_cpu / len(judge), 3),
                round(judge_wall / len(judge), 3),
            ]
        )
        client.close()
        del client
        gc.collect()
    if args.openvino:
        row, p_yes = bench_openvino(args, convs, warm, params, seeds, judge, judge_warm)
        rows.insert(len(rows) - 2, row)
        judged["openvino"] = p_yes
    generator, judge_row = rows[-2], rows[-1]
    for base in rows[:-2]:
        rows.append(
            [
                f"{base[0]} / llamacpp (CPU-s: requests as a generator, judgments as a judge)",
                "",
                round(base[2] / generator[2], 2),
                "",
                round(base[4] / judge_row[4], 2),
                "",
            ]
        )
    reference = judged.pop("llamacpp judge")
    for name, p_yes in judged.items():
        print(f"P(yes) of {name} against llamacpp on {len(judge)} judgments: {agreement(p_yes, reference)}")
    return rows


def agreement(p_yes: list[float], reference: list[float]) -> str:
    """Mean and largest absolute difference, and Spearman's rho, of two backends' P(yes) on the same pairs."""
    from scipy.stats import spearmanr

    a, b = np.asarray(p_yes), np.asarray(reference)
    rho = spearmanr(a, b).statistic if len(a) > 2 else float("nan")
    return f"mean |diff| {np.abs(a - b).mean():.3f}, max {np.abs(a - b).max():.3f}, Spearman {rho:.3f}"


def bench_openvino(
    args: argparse.Namespace,
    convs: list[Any],
    warm: list[Any],
    params: SamplingParams,
    seeds: list[int],
    judge: list[Any],
    judge_warm: list[Any],
) -> tuple[list[Any], list[float]]:
    """OpenVINO GenAI on the same GGUF, prompts and threads: the row of the table and its P(yes)."""
    import openvino_genai as ov_genai

    from ecoagent.llm.llamacpp import resolve_gguf
    from ecoagent.llm.yes_no import yes_share

    gguf = str(resolve_gguf(args.model))
    pipe, load_cpu, _ = timed(lambda: ov_genai.LLMPipeline(gguf, "CPU", INFERENCE_NUM_THREADS=args.threads))
    tokenizer = pipe.get_tokenizer()

    def render(conv: list[dict[str, str]]) -> str:
        # a final assistant message is a prefix the answer continues, as llama.cpp's prefill_assistant
        prefix = conv[-1]["content"] if conv[-1]["role"] == "assistant" else ""
        body = conv[:-1] if prefix else conv
        return tokenizer.apply_chat_template(body, add_generation_prompt=True) + prefix

    def generate(batch: list[Any], seed: int) -> list[str]:
        config = ov_genai.GenerationConfig()
        config.apply_chat_template = False
        config.max_new_tokens = params.max_new_tokens
        config.do_sample = True
        config.temperature = params.temperature
        config.top_p = params.top_p
        config.rng_seed = seed
        config.stop_strings = set(params.stop)
        return list(pipe.generate([render(c) for c in batch], config).texts)

    def p_yes(conv: list[dict[str, str]]) -> float:
        config = ov_genai.GenerationConfig()
        config.apply_chat_template = False
        config.max_new_tokens = 1
        config.num_beams = config.num_return_sequences = 20
        result = pipe.generate([render(conv)], config)
        share = yes_share(zip(result.texts, result.scores, strict=True))
        return 0.5 if share is None else share

    def requests() -> None:
        for i in range(0, len(convs), 4):
            generate(convs[i : i + 4], seeds[i])

    if warm:
        generate(warm, 1000)
    _, gen_cpu, gen_wall = timed(requests)
    for conv in judge_warm:
        p_yes(conv)
    judged, judge_cpu, judge_wall = timed(lambda: [p_yes(c) for c in judge])
    row = [
        "openvino (LLMPipeline, prefix cache)",
        round(load_cpu, 1),
        round(gen_cpu / len(convs), 2),
        round(gen_wall / len(convs), 2),
        round(judge_cpu / len(judge), 3),
        round(judge_wall / len(judge), 3),
    ]
    return row, judged


def bench_yield(
    args: argparse.Namespace, tools_table: pl.DataFrame, tools: list[dict[str, Any]]
) -> list[list[Any]]:
    from ecoagent.models import load_encoder
    from ecoagent.schemas import tool_documents
    from generators.generate import GenerationConfig, QueryGenerator

    encoder = load_encoder(MINILM)
    tool_emb = encoder.encode(tool_documents(tools_table), batch_size=128, normalize_embeddings=True)
    index = {t: i for i, t in enumerate(tools_table["tool_id"])}
    rows: list[list[Any]] = []
    for model, mode in ((QWEN_CODER_1_5B, "list"), (QWEN_CODER_0_5B, "list"), (QWEN_CODER_1_5B, "single")):
        llm = make_llm(ModelConfig(llm=model), threads=args.threads)
        # one whole answer per tool, as the model was chosen: a list given up early would keep fewer
        config = GenerationConfig(queries_per_tool=10, mode=mode, max_rounds=1, give_up_after=0)  # type: ignore[arg-type]
        gen = QueryGenerator(llm, config, seed=0)
        ckpt = Path(args.scratch) / f"yield-{model.split('/')[-1]}-{mode}.jsonl"
        ckpt.unlink(missing_ok=True)
        records, cpu, wall = timed(lambda g=gen, c=ckpt: list(g.run(tools, c)))
        kept, hits = [], []
        for record in records:
            texts = [q["query"] for q in record["queries"]]
            kept.append(len(texts))
            if texts:
                emb = encoder.encode(texts, normalize_embeddings=True)
                scores = emb @ tool_emb.T
                own = scores[:, index[record["tool_id"]]]
                hits.append(int(((scores > own[:, None]).sum(1) + 1 <= 10).sum()))
            else:
                hits.append(0)
        rejected: dict[str, int] = {}
        for record in records:
            for f in record["failures"]:
                key = f["reason"].split(" (")[0]
                rejected[key] = rejected.get(key, 0) + 1
        rows.append(
            [
                f"{model.split('/')[-1]} {mode}",
                len(records),
                round(cpu / len(records), 1),
                float(np.median(kept)),
                float(np.median(hits)),
                round(sum(hits) / cpu, 3),
                ", ".join(f"{k} {v}" for k, v in sorted(rejected.items())) or "-",
            ]
        )
        llm.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="out/tools.parquet")
    parser.add_argument("--model", default=QWEN_CODER_1_5B)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--slots", type=int, default=4, help="llama.cpp's generator slots (Syn: 16)")
    parser.add_argument(
        "--warmup",
        type=int,
        default=4,
        help="untimed requests and judgments first (0: time the cold start)",
    )
    parser.add_argument("--judgments", type=int, default=16)
    parser.add_argument(
        "--real-pairs",
        default=None,
        help="the Real stage's validator checkpoint to take the judged pairs from "
        "(default: real/validator_checkpoint.jsonl beside --tools)",
    )
    parser.add_argument("--yield-tools", type=int, default=8, help="tools for the yield table (0: skip it)")
    parser.add_argument("--skip-transformers", action="store_true")
    parser.add_argument(
        "--transformers-batches",
        default="1,8",
        help="batch sizes of the transformers rows (default 1,8: the issue's baseline and transformers' cheaper setting)",
    )
    parser.add_argument("--skip-backends", action="store_true")
    parser.add_argument(
        "--openvino",
        action="store_true",
        help="add OpenVINO GenAI (pip install openvino-genai) on the same GGUF",
    )
    parser.add_argument("--scratch", default="/tmp")
    args = parser.parse_args()
    try:
        args.batches = [int(b) for b in str(args.transformers_batches).split(",") if b.strip()]
    except ValueError:
        parser.error(
            f"--transformers-batches takes batch sizes such as 1,8, not {args.transformers_batches!r}"
        )
    if any(b <= 0 for b in args.batches):
        parser.error(f"--transformers-batches: batch sizes must be > 0, not {args.transformers_batches!r}")
    os.environ.setdefault("ECOAGENT_LLM_THREADS", str(args.threads))
    table = pl.read_parquet(args.tools)
    platforms = table["platform"].n_unique()
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; threads {args.threads}"
    )
    print(f"llama.cpp build: {llamacpp_build()}")
    if not args.skip_backends:
        tools = sample_tools(table, max(1, (args.requests + args.warmup) // platforms + 1))
        print_table(
            [
                "backend",
                "load CPU-s",
                "CPU-s / request",
                "wall s / request",
                "CPU-s / judgment",
                "wall s / judgment",
            ],
            bench_backends(args, table, tools),
            title=(
                f"{args.model}: {args.requests} Syn requests (40 new tokens) after {args.warmup} untimed, "
                f"{args.judgments} yes/no judgments"
            ),
        )
    if args.yield_tools:
        tools = sample_tools(table, max(1, args.yield_tools // platforms))
        print_table(
            [
                "generator",
                "tools",
                "CPU-s / tool",
                "kept / tool (median)",
                "yield / tool (median)",
                "yield per CPU-s",
                "rejected",
            ],
            bench_yield(args, table, tools),
            title=f"Syn generator choices on {len(tools)} real tools (10 wanted per tool, one round, MiniLM top 10)",
        )
    print(f"load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
