"""`ecoagent train`: fine-tune RATED's dual encoder on EcoAgent-Syn (heavy imports happen in the handler)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ecoagent.cli import add_common


def register_train(subparsers: Any) -> None:
    """Add the ``train`` subcommand."""
    parser = subparsers.add_parser(
        "train",
        help="fine-tune RATED's dual encoder on syn/ and write model/",
        description="Fine-tune the query and tool towers with in-batch InfoNCE on EcoAgent-Syn train.",
    )
    add_common(parser)
    parser.add_argument("--max-steps", type=int, default=None, help="cap on optimizer steps")
    parser.add_argument("--epochs", type=float, default=None, help="passes over the triples (paper: 1)")
    parser.add_argument("--batch-size", type=int, default=None, help="anchors per batch (paper: 8)")
    parser.add_argument("--learning-rate", type=float, default=None, help="peak learning rate (paper: 1e-5)")
    parser.add_argument("--max-train-examples", type=int, default=None, help="cap on training triples")
    parser.add_argument("--max-val-queries", type=int, default=None, help="Syn val queries evaluated")
    parser.add_argument(
        "--freeze-tool-tower",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="train the query tower only, the catalog's vectors stay the backbone's (embedded default: on)",
    )
    parser.add_argument("--force", action="store_true", help="retrain even if model/ is up to date")
    parser.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    from ecoagent.config import get_profile
    from ecoagent.summary import print_table
    from rated.train import excludes_zero, run

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    stats = run(
        Path(args.out),
        profile,
        force=args.force,
        max_steps=args.max_steps,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        max_train_examples=args.max_train_examples,
        max_val_queries=args.max_val_queries,
        freeze_tool_tower=args.freeze_tool_tower,
    )
    before, after = stats.get("val_before", {}), stats.get("val_after", {})
    rows: list[list[Any]] = [
        ["steps", stats.get("steps"), ""],
        ["train examples", stats.get("train_examples"), ""],
        ["train loss", stats.get("train_loss"), ""],
        ["train seconds", stats.get("train_seconds"), ""],
    ]
    for metric in ("mrr@10", "recall@1", "recall@10"):
        rows.append([f"val {metric}", before.get(metric, "-"), after.get(metric, "-")])
    # the held-out comparison: backbone in the "before" column, the fine-tuned encoder in "after"
    for name, block in (stats.get("held_out") or {}).items():
        if "backbone" in block:
            n = f"{block['distinct_queries']} q" + (", smoke test" if "smoke_test" in block else "")
            for metric in ("MRR", "nDCG@10"):
                rows.append(
                    [f"{name} {metric} ({n})", block["backbone"][metric], block["fine-tuned"][metric]]
                )
        else:
            rows.append([name, block.get("skipped", "-"), ""])
    if stats.get("fine_tuning_loses"):
        print(stats["fine_tuning_loses"])
    unclear = [
        name
        for name, block in (stats.get("held_out") or {}).items()
        if block.get("mrr_gain", 0) > 0
        and "paired_test" in block
        and not excludes_zero(block["paired_test"]["ci_low"], block["paired_test"]["ci_high"])
    ]
    if unclear:
        print(f"gain not distinguishable from none (paired 95% CI includes 0): {', '.join(unclear)}")
    title = f"train → {Path(args.out) / 'model'}" + (" (up to date, skipped)" if stats.get("skipped") else "")
    print_table(["", "value / before", "after"], rows, title=title)
    return 0
