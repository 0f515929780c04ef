"""Benchmark of the Real validator on ToolBench's own labels: AUC and cost of each prompt variant.

ToolBench's (query, relevant API) vs (query, non-relevant candidate API) pairs are the only labelled
pairs available offline. This prints, for the recall encoder's cosine (the baseline, measured in the
same run) and each validator prompt, the ROC AUC, the mean yes-probability per class, the share of
pairs above the 0.85 threshold, and seconds per pair (wall and CPU).

    .venv/bin/python bench/bench_real.py --per-class 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ecoagent.config import get_profile
from ecoagent.llm import make_llm
from ecoagent.schemas import tool_document
from ecoagent.summary import print_table
from validators.prompt import validator_conversation
from validators.recall import embed
from validators.sanity import labeled_pairs, roc_auc
from validators.toolbench import load_toolbench, toolbench_root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=40)
    parser.add_argument("--profile", default="embedded")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from ecoagent.config import default_mirror

    profile = get_profile(args.profile)
    parsed = load_toolbench(toolbench_root(default_mirror()))
    pairs = labeled_pairs(parsed.queries, args.per_class, args.seed)
    labels = np.array([p.label for p in pairs])
    rows = []

    t0, c0 = time.perf_counter(), time.process_time()
    q = embed(profile.models.recall_encoder, [p.pair.query for p in pairs])
    t = embed(
        profile.models.recall_encoder, [tool_document(p.pair.tool_name, p.pair.description) for p in pairs]
    )
    cos = (q * t).sum(axis=1)
    n = len(pairs)
    rows.append(
        (
            f"cosine ({profile.models.recall_encoder.split('/')[-1]})",
            roc_auc(labels, cos),
            float(cos[labels == 1].mean()),
            float(cos[labels == 0].mean()),
            "-",
            (time.perf_counter() - t0) / n,
            (time.process_time() - c0) / n,
        )
    )
    llm = make_llm(profile.models, batch_size=8)
    for few_shot in (False, True):
        convs = [
            validator_conversation(p.pair.query, p.pair.tool_name, p.pair.description, few_shot)
            for p in pairs
        ]
        t0, c0 = time.perf_counter(), time.process_time()
        s = np.array(llm.yes_probability(convs))
        rows.append(
            (
                f"{llm.model_id.split('/')[-1]} {'few-shot' if few_shot else 'zero-shot'}",
                roc_auc(labels, s),
                float(s[labels == 1].mean()),
                float(s[labels == 0].mean()),
                float((s >= 0.85).mean()),
                (time.perf_counter() - t0) / n,
                (time.process_time() - c0) / n,
            )
        )
    print_table(
        ["scorer", "AUC", "mean relevant", "mean other", "share >= 0.85", "s/pair wall", "s/pair CPU"],
        rows,
        title=f"ToolBench ground truth, {args.per_class} relevant + {args.per_class} other pairs (seed {args.seed})",
    )


if __name__ == "__main__":
    main()
