"""When to give up a Syn list answer: a replay of finished generation checkpoints.

Run: ``.venv/bin/python bench/bench_syn_give_up.py CHECKPOINT.jsonl [CHECKPOINT.jsonl ...] [--draws 20]``
(the ``syn/checkpoint/generations-*.jsonl`` of list-mode builds, generated with ``give_up_after`` 0).

Each tool's answers are rebuilt item by item from its checkpoint record (an answer with a rejection
stores its text; one without stores only its kept queries, all kept) and labelled kept or rejected.
It prints:

1. how often an item is kept after ``k`` rejected items in a row within its answer, against the items
   of a tool's first, second and third call;
2. a replay of each (``give_up_after``, ``max_rounds``) pair: each answer is cut where the rule would
   cut it, and a call the checkpoint does not hold is one of the tool's own recorded answers, drawn at
   random (``--draws`` seeds, averaged). Items decoded, calls made, tools left short of their quota and
   queries kept, per checkpoint.

What the replay does not show: a new call's items are scored as they were in the answer they come
from, so repeats of queries the tool kept in the meantime are not counted (optimistic for more calls),
and the text of the queries kept is not the text a real run would keep (yield needs real draws).
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter
from pathlib import Path

from ecoagent.summary import print_table
from generators.generate import read_checkpoint
from generators.parse import parse_queries

KEPT, REJECTED = "kept", "rejected"


def answers(record: dict) -> list[list[str]]:
    """The tool's answers in call order, each as its items' outcomes (kept / rejected)."""
    kept = {(q["seed"], q["query"]) for q in record["queries"]}
    raw: dict[int, str] = {}
    for f in record["failures"]:
        raw.setdefault(f["seed"], f["raw"])
    out = []
    for seed in sorted({q["seed"] for q in record["queries"]} | set(raw)):
        if seed not in raw:  # every item kept: only the queries are stored
            out.append([KEPT] * sum(1 for q in record["queries"] if q["seed"] == seed))
            continue
        failed = {f.get("query") for f in record["failures"] if f["seed"] == seed}
        items = []
        for query in parse_queries(raw[seed]).queries:
            if (seed, query) in kept:
                items.append(KEPT)
            elif query in failed:
                items.append(REJECTED)
            else:  # past the tool's quota: neither kept nor screened
                break
        out.append(items)
    return out


def after_rejections(tools: list[list[list[str]]], k: int) -> tuple[int, int]:
    """(items preceded by ``k`` rejected items in a row in their answer, of them kept)."""
    n = kept = 0
    for calls in tools:
        for items in calls:
            for i in range(k, len(items)):
                if all(x == REJECTED for x in items[i - k : i]):
                    n += 1
                    kept += items[i] == KEPT
    return n, kept


def replay(
    tools: list[list[list[str]]], give_up_after: int, max_rounds: int, want: int, rng: random.Random
) -> tuple[int, int, int, int]:
    """(items decoded, calls, tools short of ``want``, queries kept) under one rule."""
    items = calls = short = total = 0
    for recorded in tools:
        kept = 0
        for r in range(max_rounds):
            answer = recorded[r] if r < len(recorded) else rng.choice(recorded)
            calls += 1
            in_a_row = 0
            for outcome in answer:
                items += 1
                if outcome == KEPT:
                    kept, in_a_row = kept + 1, 0
                else:
                    in_a_row += 1
                if kept >= want or (give_up_after and in_a_row >= give_up_after):
                    break
            if kept >= want:
                break
        short += kept < want
        total += min(kept, want)
    return items, calls, short, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--want", type=int, default=10, help="queries per tool the build asked for")
    parser.add_argument("--draws", type=int, default=20)
    args = parser.parse_args()
    tools = []
    for path in args.checkpoints:
        for tool_id, record in read_checkpoint(path).items():
            try:
                tools.append(answers(record))
            except (KeyError, TypeError) as err:  # a record of another version, or hand-edited
                raise SystemExit(
                    f"{path}: tool {tool_id!r}: not a Syn checkpoint record (no {err}: needs "
                    "'queries' and 'failures', each with a 'seed')"
                ) from err
    runs = len(args.checkpoints)
    print(f"{len(tools)} tool records from {runs} checkpoint(s)\n")
    rows = []
    for k in range(6):
        n, kept = after_rejections(tools, k)
        rows.append([f"after {k} rejected in a row", n, kept, f"{kept / n:.3f}" if n else "-"])
    for r in range(3):
        items = [x for calls in tools if len(calls) > r for x in calls[r]]
        kept = sum(x == KEPT for x in items)
        rows.append(
            [f"items of call {r + 1}", len(items), kept, f"{kept / len(items):.3f}" if items else "-"]
        )
    print_table(["items", "n", "kept", "share kept"], rows)
    print()
    rows = []
    for give_up, rounds in [(0, 3)] + [(k, m) for k in (2, 3, 4) for m in (3, 4, 5, 6)]:
        results = [replay(tools, give_up, rounds, args.want, random.Random(d)) for d in range(args.draws)]
        mean = [statistics.mean(x[i] for x in results) / runs for i in range(4)]
        rows.append([give_up or "never", rounds, *(f"{v:.1f}" for v in mean)])
    print_table(
        ["give up after", "max rounds", "items decoded", "calls", "tools short", "queries kept"], rows
    )
    print(f"\nper checkpoint, mean of {args.draws} draws for calls the checkpoints do not hold")
    counts = Counter(len(calls) for calls in tools)
    print("calls per tool recorded:", dict(sorted(counts.items())))


if __name__ == "__main__":
    main()
