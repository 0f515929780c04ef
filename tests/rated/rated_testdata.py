"""Small syn-like data built from real tools, shared by the RATED tests (the conftest's fixtures use it).

Queries are taken from the tools' own descriptions (a sentence of the description is a request the tool
serves), so the tests run on real text at a size that fits the default test budget.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from ecoagent.schemas import tool_documents


def sample_tools(tools: pl.DataFrame, n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` tools, stratified by platform (the same share of each), deterministic."""
    rng = np.random.default_rng(seed)
    parts = []
    for _platform, group in sorted(tools.group_by("platform"), key=lambda g: str(g[0])):
        take = max(1, round(n * group.height / tools.height))
        parts.append(group.sort("tool_id")[np.sort(rng.choice(group.height, min(take, group.height), False))])
    return pl.concat(parts).head(n)


def first_sentence(text: str) -> str:
    """The first sentence of a description (markdown and code marks dropped), as a user request."""
    text = re.sub(r"[`*#>\[\]]", " ", text)
    sentence = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    return " ".join(sentence.split())[:200]


def syn_like(tools: pl.DataFrame, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``syn/positives`` and ``syn/negatives`` tables in the Syn schema, from the tools' own text.

    Each tool gets one query (its description's first sentence), split 80/20 train/val by tool. The hard
    negative is the most similar other tool by TF-IDF over tool documents, the random one is seeded.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    ids = tools["tool_id"].to_list()
    queries = [first_sentence(d) or n for d, n in zip(tools["description"], tools["name"], strict=True)]
    rng = np.random.default_rng(seed)
    split = np.where(rng.random(len(ids)) < 0.8, "train", "val")
    positives = pl.DataFrame(
        {"query_id": [f"q{k:04d}" for k in range(len(ids))], "query": queries, "tool_id": ids, "split": split}
    )
    tfidf = TfidfVectorizer().fit(tool_documents(tools))
    sim = (tfidf.transform(queries) @ tfidf.transform(tool_documents(tools)).T).toarray()
    np.fill_diagonal(sim, -1.0)
    rows = []
    for k, tool in enumerate(ids):
        hard = int(np.argmax(sim[k]))
        rand = int(rng.choice([j for j in range(len(ids)) if j not in (k, hard)]))
        for j, kind in ((hard, "hard"), (rand, "random")):
            rows.append((f"q{k:04d}", queries[k], ids[j], tool, float(sim[k, j]), kind, split[k]))
    negatives = pl.DataFrame(
        rows,
        schema=["query_id", "query", "tool_id", "positive_tool_id", "score", "kind", "split"],
        orient="row",
    )
    return positives, negatives
