"""The `ecoagent real` and `ecoagent review` subcommands (light: heavy imports happen in the handlers)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ecoagent.cli import add_common


def _profile(args: argparse.Namespace) -> Any:
    from ecoagent.config import get_profile

    profile = get_profile(args.profile)
    return profile.replace(seed=args.seed) if args.seed is not None else profile


def register_real(sub: Any) -> None:
    """``ecoagent real --out DIR``: ToolBench queries -> recall -> LLM validator -> real/."""
    p = sub.add_parser("real", help="build EcoAgent-Real (ToolBench queries validated against the tools)")
    add_common(p)
    p.add_argument("--mirror", type=Path, default=None, help="catalog snapshot (default ../shared/catalogs)")
    p.add_argument(
        "--floor-quantile",
        type=float,
        default=None,
        help="each recall retriever's floor: this quantile of its own top-k scores (0.97)",
    )
    p.add_argument(
        "--validator-threshold",
        type=float,
        default=None,
        help="fixed validator threshold (default: calibrated on ToolBench dev labels; paper 0.85)",
    )
    p.add_argument(
        "--min-precision",
        type=float,
        default=None,
        help="the calibrated threshold's precision target on the dev labels (0.9); lower keeps more "
        "queries with less precise labels",
    )
    p.add_argument("--top-k", type=int, default=None, help="tools each retriever proposes per query (5)")
    p.add_argument("--batch-size", type=int, default=None, help="pairs per LLM call (16)")
    p.add_argument(
        "--calibration-pairs", type=int, default=None, help="labelled dev pairs per kind for calibration"
    )
    p.add_argument(
        "--measure-pairs", type=int, default=None, help="labelled test pairs per kind for the AUCs (0 = skip)"
    )
    p.add_argument(
        "--whole-intake",
        action="store_true",
        default=None,
        help="also judge the ToolBench queries snapshotted into data/queries (StableToolBench, DRAFT)",
    )
    p.set_defaults(func=_run_real)


def _run_real(args: argparse.Namespace) -> int:
    from ecoagent.summary import print_table
    from validators.pipeline import run

    stats = run(
        Path(args.out),
        _profile(args),
        mirror=args.mirror,
        validator_threshold=args.validator_threshold,
        floor_quantile=args.floor_quantile,
        min_precision=args.min_precision,
        top_k=args.top_k,
        batch_size=args.batch_size,
        calibration_per_kind=args.calibration_pairs,
        measure_per_kind=args.measure_pairs,
        whole_intake=args.whole_intake,
    )
    pairs = stats["pairs"]
    floors = ", ".join(f"{n} {r['floor']:.3g}" for n, r in stats["recall"]["retrievers"].items())
    rows: list[tuple[str, Any]] = [
        ("queries (unique)", stats["queries"]["unique"]),
        ("duplicates removed", stats["queries"]["duplicates_removed"]),
        ("candidates (union of top-k)", pairs["recalled"]),
        (f"after recall (floors: {floors})", pairs["after_recall"]),
        (f"pairs kept (score >= {stats['validator']['threshold']:.3g})", pairs["after_validation"]),
        ("queries kept", pairs["queries_after_validation"]),
    ]
    rows += [(f"queries kept on {p}", c["queries_kept"]) for p, c in pairs["per_platform"].items()]
    rows += [
        (f"split {s} (pairs / queries)", f"{c['pairs']} / {c['queries']}")
        for s, c in pairs["per_split"].items()
    ]
    test = stats["validator"]["measurement"].get("test", {})
    for kind in ("random", "hard"):
        if kind in test:
            lo, hi = test[kind]["ci95"]
            rows.append(
                (f"validator AUC vs {kind} negatives (test)", f"{test[kind]['auc']:.3f} [{lo:.3f}, {hi:.3f}]")
            )
    rows.append(("runtime (s)", stats["timings"]["total_s"]))
    print_table(["real", "value"], rows, title=f"EcoAgent-Real -> {Path(args.out) / 'real'}")
    return 0


def register_review(sub: Any) -> None:
    """``ecoagent review [serve|sample|report] --out DIR``: the 200-item manual check."""
    p = sub.add_parser(
        "review",
        help="manual check: `review sample`, `review` (serve the labelling page), `review report`",
        description="serve (default): label review/sample.parquet in a local web page; "
        "sample: draw the stratified sample; report: agreement of labels with the validator",
    )
    p.add_argument("action", nargs="?", choices=("serve", "sample", "report"), default="serve")
    add_common(p)
    p.add_argument("--n", type=int, default=200, help="sample: items to draw")
    p.add_argument(
        "--labels", type=Path, default=None, help="report/serve: labels file (default review/labels.jsonl)"
    )
    p.add_argument("--port", type=int, default=8765, help="serve: port on 127.0.0.1 (0 = any free port)")
    p.set_defaults(func=_run_review)


def _run_review(args: argparse.Namespace) -> int:
    from ecoagent.summary import print_table

    out = Path(args.out)
    if args.action == "sample":
        from validators.review.sample import run

        stats = run(out, _profile(args), n=args.n, seed=args.seed)
        rows = [(k, v) for k, v in stats["per_stratum"].items()]
        rows += [("total", stats["items"]), ("of candidates", stats["candidates"]), ("seed", stats["seed"])]
        print_table(["stratum", "items"], rows, title=f"review sample -> {out / 'review' / 'sample.parquet'}")
        return 0
    if args.action == "report":
        from validators.review.agreement import CONFUSION_WORDS
        from validators.review.report import run as report

        r = report(out, labels=args.labels)
        o = r["overall"]
        kappa = o["cohen_kappa"]
        rows = [
            ("items / labelled / unsure", f"{r['items']} / {r['labeled']} / {r['unsure']}"),
            ("decided (match or no match)", o["n"]),
            ("percent agreement (sample)", "-" if o["n"] == 0 else f"{o['percent_agreement']:.1f}"),
            (
                "Wilson 95% interval",
                "-" if o["n"] == 0 else f"{o['wilson95'][0]:.1f} - {o['wilson95'][1]:.1f}",
            ),
            ("Cohen's kappa", "-" if kappa is None else f"{kappa:.2f}"),
        ]
        rows += [(f"  {CONFUSION_WORDS[k]}", v) for k, v in o["confusion"].items()]
        pw = r.get("population_weighted") or {}
        if pw.get("percent_agreement") is not None:
            rows.append(
                (
                    "percent agreement (re-weighted to all pairs)",
                    f"{pw['percent_agreement']:.1f} (strata covering {100 * pw['covered_share']:.0f}% of "
                    f"{pw['population_pairs']} pairs)",
                )
            )
        rec = r["recommended"]
        if rec.get("refused"):
            rows.append(("recommended thresholds", "none: " + rec["refused"]))
        if rec["validator_threshold"]:
            v = rec["validator_threshold"]
            held = v["held_out"]
            rows.append(
                (
                    "recommended validator threshold",
                    f"{v['threshold']:.3f} (fitted on {v['fitted_on']} labels; on the {held['n']} others: "
                    f"{held['percent_agreement'] or 0:.1f}% agreement vs "
                    f"{v['held_out_current']['percent_agreement'] or 0:.1f}% now)",
                )
            )
        if rec["recall_threshold"]:
            rows.append(("recommended recall threshold", f"{rec['recall_threshold']['threshold']:.3f}"))
        rows += [
            (f"  {s}", f"{g['n']} items, {g['percent_agreement']:.1f}%") for s, g in r["per_stratum"].items()
        ]
        print_table(["agreement", "value"], rows, title=f"review report -> {out / 'review' / 'report.json'}")
        if rec.get("refused"):
            print(f"warning: no thresholds recommended: {rec['refused']}", file=sys.stderr)
        if not r["labeled"]:
            print(f"no labels yet in {r['labels_file']}: label the sample with `ecoagent review --out {out}`")
        return 0
    from validators.review.server import ReviewServer

    server = ReviewServer(out, port=args.port, labels=args.labels)
    print(f"labelling page: {server.url}  (labels -> {server.state.labels_path}; Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
