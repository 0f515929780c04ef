"""Benchmark of the Real validator on ToolBench's own labels: AUC and cost of each prompt variant.

ToolBench's (query, relevant API) pairs against random negatives (an API of another query) and hard
negatives (another API of the same query's list) are the labelled pairs available offline
(``validators.labels``). This prints, per kind of negative, for the recall encoder's cosine (the baseline,
measured in the same run) and each validator prompt, the ROC AUC with its bootstrap 95% interval, the mean
yes-probability per class and seconds per pair (wall and CPU). It reads the dev part of the labels, so
prompt design never looks at the test labels the stage reports.

    .venv/bin/python bench/bench_real.py --per-kind 40

``--calibration-sizes 20,40,60,100 --targets 0.9,0.8 --real-out out`` (needs ``--per-kind`` at least the
largest size) adds how stable the calibrated threshold is: for each nested dev sample and precision target,
the threshold the Real stage would pick, its 90% bootstrap interval over resamples of those pairs
(``validators.calibration.threshold_interval``), and, from a build's ``real/decisions.parquet`` (scored
with the same model and prompt), how many Real queries each end of the interval would keep.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from ecoagent.config import get_profile
from ecoagent.llm import make_llm
from ecoagent.schemas import tool_document
from ecoagent.summary import cpu_model, print_table
from validators.calibration import bootstrap_auc, calibrate_threshold, roc_auc, threshold_interval
from validators.labels import build_labels, sample_labels
from validators.recall import embed
from validators.toolbench import load_toolbench, toolbench_root
from validators.validator import pair_conversation


def _auc(labels: np.ndarray, scores: np.ndarray) -> str:
    low, high = bootstrap_auc(labels.tolist(), scores.tolist())
    return f"{roc_auc(labels.tolist(), scores.tolist()):.3f} [{low:.3f}, {high:.3f}]"


def _rows(
    name: str, labels: np.ndarray, kinds: np.ndarray, scores: np.ndarray, wall: float, cpu: float
) -> list:
    """One row per kind of negative: AUC with its interval, class means, seconds per pair."""
    positive = labels == 1
    out = []
    for kind in ("random", "hard"):
        mask = positive | (kinds == kind)
        out.append(
            (
                name,
                kind,
                _auc(labels[mask], scores[mask]),
                float(scores[positive].mean()),
                float(scores[kinds == kind].mean()),
                wall / len(labels),
                cpu / len(labels),
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--per-kind", type=int, default=40, help="dev pairs of each kind (positive, random, hard)"
    )
    parser.add_argument("--profile", default="embedded")
    parser.add_argument(
        "--llm", action="append", help="validator model to compare (repeatable; default: the profile's llm)"
    )
    parser.add_argument("--few-shot", action="store_true", help="also score the few-shot prompt variant")
    parser.add_argument("--calibration-sizes", default="", help="nested dev sizes per kind, e.g. 20,60,100")
    parser.add_argument("--targets", default="0.9", help="precision targets of the calibration table")
    parser.add_argument("--real-out", default=None, help="a build folder whose Real decisions to count")
    args = parser.parse_args()
    from ecoagent.config import default_mirror

    profile = get_profile(args.profile)
    parsed = load_toolbench(toolbench_root(default_mirror()))
    pairs = sample_labels(build_labels(parsed.queries), "dev", args.per_kind)
    labels = np.array([p.label for p in pairs])
    kinds = np.array([p.kind for p in pairs])

    rows: list[tuple] = []
    t0, c0 = time.perf_counter(), time.process_time()
    q = embed(profile.models.recall_encoder, [p.pair.query for p in pairs])
    t = embed(
        profile.models.recall_encoder, [tool_document(p.pair.tool_name, p.pair.description) for p in pairs]
    )
    cos = (q * t).sum(axis=1)
    name = f"cosine ({profile.models.recall_encoder.split('/')[-1]})"
    rows += _rows(name, labels, kinds, cos, time.perf_counter() - t0, time.process_time() - c0)
    for model in args.llm or [profile.models.llm]:
        # loaded as the Real stage loads its judge (one slot; llama.cpp's weight layouts for judging)
        llm = make_llm(dataclasses.replace(profile.models, llm=model), batch_size=8, workload="judge")
        for few_shot in (False, True) if args.few_shot else (False,):
            convs = [pair_conversation(p.pair, few_shot) for p in pairs]
            t0, c0 = time.perf_counter(), time.process_time()
            s = np.array(llm.yes_probability(convs))
            label = f"{llm.model_id.split('/')[-1]} {'few-shot' if few_shot else 'zero-shot'}"
            rows += _rows(label, labels, kinds, s, time.perf_counter() - t0, time.process_time() - c0)
            if not few_shot and model == (args.llm or [profile.models.llm])[0]:
                zero_shot = {p.pair.key: float(v) for p, v in zip(pairs, s, strict=True)}
        del llm
    print_table(
        [
            "scorer",
            "negatives",
            "AUC [95% CI]",
            "mean positive",
            "mean negative",
            "s/pair wall",
            "s/pair CPU",
        ],
        rows,
        title=f"ToolBench dev labels: {args.per_kind} pairs per kind (positive, random, hard); "
        f"CPU {cpu_model()}",
    )

    if args.calibration_sizes:
        _calibration_table(args, build_labels(parsed.queries), zero_shot)


def _calibration_table(args: argparse.Namespace, labelled: list, scores: dict) -> None:
    """The calibrated threshold per nested dev size and target, its bootstrap interval, and the Real
    queries a build would keep at the threshold and at the interval's ends."""
    import polars as pl

    kept = None
    if args.real_out:
        decisions = pl.read_parquet(f"{args.real_out}/real/decisions.parquet").filter(pl.col("passed_recall"))
        kept = lambda t: decisions.filter(pl.col("validator_score") >= t)["query_id"].n_unique()  # noqa: E731
    rows = []
    for n in (int(x) for x in args.calibration_sizes.split(",")):
        if n > args.per_kind:
            raise SystemExit(f"--calibration-sizes {n} exceeds --per-kind {args.per_kind}")
        dev = sample_labels(labelled, "dev", n)
        y, sc = [p.label for p in dev], [scores[p.pair.key] for p in dev]
        for target in (float(x) for x in args.targets.split(",")):
            fit = calibrate_threshold(y, sc, target)
            ci = threshold_interval(y, sc, target)
            row = [n, target, f"{fit['threshold']:.3f}", f"{fit['recall']:.2f}", fit["tp"]]
            row += [f"[{ci['low']:.3f}, {ci['high']:.3f}]"]
            if kept is not None:
                row += [kept(fit["threshold"]), f"{kept(ci['high'])}-{kept(ci['low'])}"]
            rows.append(row)
    headers = ["dev pairs per kind", "precision target", "threshold", "dev recall", "dev tp", "90% interval"]
    if kept is not None:
        headers += ["Real queries kept", "kept at the interval's ends"]
    print_table(headers, rows, title="The calibrated threshold and how far it moves (zero-shot validator)")


if __name__ == "__main__":
    main()
