"""A labelled MCP query set from mcpm.sh's ``examples[].prompt``: requests server authors wrote for their server.

Each prompt is labelled with its server's records in the crawled tool table (every tool of the server, or
the server-level record when no source lists its tools). Prompts that are literal calls rather than
requests (``brave_web_search(query="...")``, ``journal_create: {...}``, raw JSON, code) are dropped.
``narrow`` then keeps, per prompt, the server tools an injected scorer accepts: in production the LLM
validator's P(yes) (``validators.validator``), in tests any callable with the same shape.

    prompts = read_prompts(MirrorSource(mirror), tools)            # all candidates of each prompt
    prompts, stats = narrow(prompts, tools, scorer, threshold=0.5)  # the right tool(s) of each
    write_prompts(prompts, out / "real" / "mcp_prompts.parquet")
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from crawlers.mcp import MCPM, Malformed, load_document
from crawlers.report import CrawlErrors
from crawlers.source import Source
from ecoagent.artifacts import write_parquet
from ecoagent.schemas import tool_document

PROMPT_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),  # mcp:<server>:<example index>
    "query": pl.String(),
    "tool_ids": pl.List(pl.String()),  # the records that serve it (after narrowing: the right ones)
    "server": pl.String(),  # the tool table's server key
    "source": pl.String(),  # mcpm file and example index
}

# Scorer(query, tool documents) -> one P(yes) per document
Scorer = Callable[[str, Sequence[str]], Sequence[float]]

_CALL = re.compile(r"\b[A-Za-z_][\w.]*\s*\(\s*(?:[\w-]+\s*[=:]|[\"'{\[]|\))")
_LABELLED_PAYLOAD = re.compile(r"^[A-Za-z_][\w.]*\s*:\s*[{\[]")
_CODE = re.compile(r"```|^\s*(?:import|from|def|class|const|let)\s", re.M)


@dataclass(frozen=True)
class McpPrompt:
    """One example prompt and the tool records it is labelled with."""

    query_id: str
    query: str
    tool_ids: tuple[str, ...]
    server: str
    source: str


def is_literal_call(prompt: str, tool_names: Sequence[str] = ()) -> bool:
    """True for a prompt that spells out a call (``f(x=1)``, ``f: {...}``, JSON, code), not a request."""
    text = prompt.strip()
    if not text or text.startswith(("{", "[")) or _CALL.search(text) or _LABELLED_PAYLOAD.match(text):
        return True
    if _CODE.search(text):
        return True
    for name in tool_names:
        if len(name) >= 3 and re.search(rf"(?<![\w-]){re.escape(name)}\s*[(:]", text):
            return True
    return False


def _records_by_mcpm_file(tools: pl.DataFrame) -> dict[str, tuple[str, list[str], list[str]]]:
    """mcpm file -> (server key, tool-level ids, their names), or the server-level id when it has none."""
    out: dict[str, tuple[str, list[str], list[str]]] = {}
    rows = tools.filter(pl.col("platform") == "mcp").select(
        "tool_id", "name", "server", "granularity", "sources"
    )
    for row in rows.iter_rows(named=True):
        for where in row["sources"]:
            if where.startswith(f"{MCPM}/") and where.endswith(".json"):
                server, ids, names = out.setdefault(where, (row["server"], [], []))
                ids.append(row["tool_id"])
                names.append(row["name"] if row["granularity"] == "tool" else "")
    return out


def read_prompts(source: Source, tools: pl.DataFrame, errors: CrawlErrors | None = None) -> list[McpPrompt]:
    """Every request-like mcpm example prompt, labelled with all records of its server.

    ``tools`` is the crawled tool table; a prompt whose server has no record there is skipped.
    """
    errors = errors or CrawlErrors()
    by_file = _records_by_mcpm_file(tools)
    out = []
    for file in source.list(MCPM):
        path = f"{MCPM}/{file}"
        where = source.describe(path)
        if not file.endswith(".json") or where not in by_file:
            continue
        try:
            doc = load_document(source, path)
        except Malformed as exc:
            errors.add("mcp", where, str(exc))
            continue
        server, ids, names = by_file[where]
        examples = doc.get("examples") if isinstance(doc, dict) else None
        for i, example in enumerate(examples if isinstance(examples, list) else []):
            prompt = example.get("prompt") if isinstance(example, dict) else None
            if not isinstance(prompt, str) or is_literal_call(prompt, [n for n in names if n]):
                continue
            out.append(
                McpPrompt(
                    query_id=f"mcp:{server}:{i}",
                    query=" ".join(prompt.split()),
                    tool_ids=tuple(ids),
                    server=server,
                    source=f"{where} examples[{i}]",
                )
            )
    return out


def narrow(
    prompts: Sequence[McpPrompt], tools: pl.DataFrame, scorer: Scorer, threshold: float = 0.5
) -> tuple[list[McpPrompt], dict[str, int]]:
    """Keep, per prompt, the candidate tools the scorer accepts (P(yes) >= threshold).

    A single-candidate prompt still needs the scorer's yes; a prompt no candidate passes is dropped (no
    confident label). Returns the narrowed prompts and counts (kept, dropped, narrowed, candidates, kept ids).
    """
    docs = {
        r["tool_id"]: tool_document(r["name"], r["description"], r["tags"])
        for r in tools.select("tool_id", "name", "description", "tags").iter_rows(named=True)
    }
    kept: list[McpPrompt] = []
    stats = {"prompts": len(prompts), "kept": 0, "dropped": 0, "narrowed": 0, "candidates": 0, "labels": 0}
    for p in prompts:
        scores = list(scorer(p.query, [docs[t] for t in p.tool_ids]))
        if len(scores) != len(p.tool_ids):
            raise ValueError(f"scorer gave {len(scores)} scores for {len(p.tool_ids)} tools of {p.query_id}")
        right = tuple(t for t, s in zip(p.tool_ids, scores, strict=True) if s >= threshold)
        stats["candidates"] += len(p.tool_ids)
        if not right:
            stats["dropped"] += 1
            continue
        stats["kept"] += 1
        stats["narrowed"] += len(right) < len(p.tool_ids)
        stats["labels"] += len(right)
        kept.append(replace(p, tool_ids=right))
    return kept, stats


def to_frame(prompts: Sequence[McpPrompt]) -> pl.DataFrame:
    rows = [
        {
            "query_id": p.query_id,
            "query": p.query,
            "tool_ids": list(p.tool_ids),
            "server": p.server,
            "source": p.source,
        }
        for p in prompts
    ]
    return pl.DataFrame(rows, schema=PROMPT_SCHEMA, orient="row")


def write_prompts(prompts: Sequence[McpPrompt], path: Path) -> pl.DataFrame:
    """``real/mcp_prompts.parquet`` (``PROMPT_SCHEMA``); ids are unique, every prompt has a label."""
    frame = to_frame(prompts)
    if frame["query_id"].n_unique() != frame.height:
        raise ValueError("duplicate query ids in the MCP prompt set")
    write_parquet(frame, Path(path))
    return frame


def top_candidates(
    prompts: Sequence[McpPrompt],
    tools: pl.DataFrame,
    cosine: Callable[[list[str], list[str]], list[list[float]]],
    k: int,
) -> list[McpPrompt]:
    """Each prompt's server tools cut to the ``k`` with the highest cosine (ties by tool id), so the
    validator judges at most ``k`` pairs per prompt. ``cosine(queries, documents)`` -> one row per query."""
    docs = {
        r["tool_id"]: tool_document(r["name"], r["description"], r["tags"])
        for r in tools.select("tool_id", "name", "description", "tags").iter_rows(named=True)
    }
    todo = [p for p in prompts if len(p.tool_ids) > k]
    if not todo:
        return list(prompts)
    ids = sorted({t for p in todo for t in p.tool_ids})
    col = {t: i for i, t in enumerate(ids)}
    matrix = cosine([p.query for p in todo], [docs[t] for t in ids])
    cut = {}
    for p, row in zip(todo, matrix, strict=True):
        ranked = sorted(p.tool_ids, key=lambda t: (-row[col[t]], t))
        cut[p.query_id] = replace(p, tool_ids=tuple(ranked[:k]))
    return [cut.get(p.query_id, p) for p in prompts]


def sample_prompts(prompts: Sequence[McpPrompt], cap: int | None, seed: int) -> list[McpPrompt]:
    """At most ``cap`` prompts, a seeded sample kept in query-id order (all when ``cap`` is None)."""
    import numpy as np

    ordered = sorted(prompts, key=lambda p: p.query_id)
    if cap is None or len(ordered) <= cap:
        return ordered
    pick = np.sort(np.random.default_rng([seed, 0x3C9]).choice(len(ordered), size=cap, replace=False))
    return [ordered[int(i)] for i in pick]
