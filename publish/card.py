"""The dataset card (README.md): Hub YAML metadata plus a datasheet built from the tables and stage stats.

Everything in the card is read from the artifact folder (row counts, filters and their removals from the
stages' stats files, the models named in the rows), never written by hand, so the card cannot drift from
the data. The only date is the day the data was produced (``citation.date_published``): equal inputs give
an identical card.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import HUB_REPO_ID
from ecoagent.summary import format_table
from publish.citation import VERSION, bibtex, dataset_url, date_published
from publish.configs import CONFIG_ORDER, N8N_LICENSE_LINK, N8N_LICENSE_NAME, Config

__all__ = ["STATS_DIR", "SUMMARY", "card_metadata", "public_stats", "render_card", "size_category"]

STATS_DIR = "stats"  # the stage reports in full (public entries), linked from the card
STAGE_FILES = {
    "crawl": "crawl_report.json",
    "syn": "syn/stats.json",
    "real": "real/stats.json",
    "review": "review/report.json",
}
MAX_FILTER_ROWS = 25  # per stage in the card; the rest is in stats/<stage>.json
REVIEW_WORDS = ("kappa", "agreement", "labeled", "labelled", "accuracy", "precision", "recall", "n_", "items")

PRETTY_NAME = "EcoAgent: reliability-aware tool retrieval"
SUMMARY = (
    "EcoAgent is a benchmark for **reliability-aware tool retrieval**: given a natural-language request, "
    "retrieve the tool (from LangChain, CrewAI, LlamaIndex, n8n and MCP servers) that serves it, where tools carry "
    "health signals (authentication, link status) and a metadata prior. It holds a crawled tool catalog, "
    "synthetic queries (EcoAgent-Syn), real requests (EcoAgent-Real: ToolBench queries the validator kept, and "
    "n8n workflow templates labelled by their own nodes), a manual check, "
    "and BEIR/MTEB-style `corpus` / `queries` / `qrels` configs."
)
LICENSE_TEXT = {
    "mit": "MIT",
    "apache-2.0": "Apache-2.0 (ToolBench / StableToolBench queries)",
    "other": f"n8n Sustainable Use License ({N8N_LICENSE_LINK})",
}
SOURCE_TEXT = {
    "langchain": "LangChain docs + langchain-community (MIT)",
    "crewai": "crewAI tools (MIT)",
    "llamaindex": "LlamaIndex tool integrations (MIT)",
    "n8n": "n8n nodes (Sustainable Use License)",
    "mcp": "MCP server registries: mcpm.sh, docker/mcp-registry, modelcontextprotocol/registry and /servers "
    "(MIT), ToolHive (Apache-2.0); each server's own licence is in the tools' `licence` column",
    "toolbench": "ToolBench / StableToolBench queries (Apache-2.0)",
    "n8n_templates": "n8n workflow templates (Zie619/n8n-workflows @ 54688735, `data/queries/`): each write-up "
    "and workflow by its n8n.io author; licence unclear (no LICENSE at that commit, MIT (c) Zie619 added later): "
    "research use, ask the authors before redistributing",
}
# words that mark a stats entry as a filter, a threshold or a removal count
FILTER_WORDS = (
    "filter",
    "remov",
    "drop",
    "threshold",
    "dedup",
    "duplicate",
    "reject",
    "fail",
    "min_",
    "max_",
    "cutoff",
    "kept",
    "skipped",
    "invalid",
    "missing",
    "error",
    "after_",
    "recalled",
    "generated",
    "yield",
    "top_k",
    "unique",
    "in_files",
)
# entries that vary from run to run or describe the build machine, not the data: left out of the card
SKIP_WORDS = ("timing", "grid", "lines", "cosine_all", "cosine_top1", "score.", "_s.", "fingerprint")
MODEL_WORDS = ("model", "encoder", "llm", "sbert", "provenance", "sha256", "prompt_version", "backend")


class _Dumper(yaml.SafeDumper):
    """A YAML dumper without anchors/aliases (the Hub's YAML parser and readers prefer plain YAML)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def size_category(n: int) -> str:
    """The Hub's size category for ``n`` examples."""
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ]
    for bound, label in bounds:
        if n < bound:
            return label
    return "10M<n<100M"


def card_metadata(configs: Mapping[str, Config], sizes: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The card's YAML header: configs with data_files, licenses, task and size categories.

    When ``qrels`` exists it is also declared as the config ``default`` (same files), so MTEB-style
    loaders that read judgements from the default config work unchanged; otherwise ``tools`` is
    marked ``default: true``.

    Args:
        configs: the dataset's configs.
        sizes: bytes of each data file (relative path). When given, ``dataset_info`` records each split's
            rows and bytes: the Hub shows them, ``load_dataset`` checks the row counts, and a rebuilt
            folder gets a new cache key (datasets hashes a local folder's YAML, not its files' mtimes).
    """
    licenses = sorted({lic for c in configs.values() for lic in c.licenses})
    named = list(configs.items())
    if "qrels" in configs:
        # MTEB reads relevance judgements from the config named `default` (the MTEB/BEIR repos' layout):
        # an alias of `qrels` over the same files
        named.append(("default", configs["qrels"]))
    meta: dict[str, Any] = {
        "pretty_name": PRETTY_NAME,
        "language": ["en"],
        "license": licenses,
    }
    if "other" in licenses:
        meta["license_name"] = N8N_LICENSE_NAME
        meta["license_link"] = N8N_LICENSE_LINK
    meta.update(
        {
            "task_categories": ["text-retrieval"],
            "task_ids": ["document-retrieval"],
            "size_categories": [size_category(max(c.rows for c in configs.values()))],
            "tags": ["tool-retrieval", "agents", "beir", "mteb", "reliability"],
            "configs": [
                {
                    "config_name": name,
                    "data_files": [{"split": s, "path": c.data_file(s)} for s in c.splits],
                    **({"default": True} if name == "tools" and "qrels" not in configs else {}),
                }
                for name, c in named
            ],
            # per-config licenses (the Hub has one `license` list per repo; this keeps which applies where)
            "config_licenses": {name: c.licenses for name, c in named},
        }
    )
    if sizes is not None:
        meta["dataset_info"] = [
            {
                "config_name": name,
                "splits": [
                    {"name": s, "num_bytes": sizes[c.data_file(s)], "num_examples": f.height}
                    for s, f in c.splits.items()
                ],
                "download_size": sum(sizes[c.data_file(s)] for s in c.splits),
            }
            for name, c in named
        ]
    return meta


def _load_json(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return None
    return data if isinstance(data, dict) else {"value": data}


def _flatten(data: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    """Dotted keys and scalar values; long lists are summarized by their length."""
    if isinstance(data, Mapping):
        for key in sorted(data, key=str):
            yield from _flatten(data[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(data, list):
        if len(data) <= 8 and all(not isinstance(v, dict | list) for v in data):
            yield prefix, json.dumps(data, default=str)
        elif data and all(isinstance(v, Mapping) for v in data) and len(data) <= 50:
            for i, v in enumerate(data):
                label = v.get("name") or v.get("filter") or v.get("stage") or i
                yield from _flatten(v, f"{prefix}[{label}]")
        else:
            yield prefix, f"list of {len(data)}"
    else:
        yield prefix, data


def _public(flat: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Drop run-specific entries (timings, grids, raw error lines) and local absolute paths."""
    out = []
    for key, value in flat:
        low = key.lower()
        if any(w in low for w in SKIP_WORDS):
            continue
        if isinstance(value, str) and value.startswith(("/", "~")):
            continue
        out.append((key, value))
    return out


def _derived_removals(stage: str, data: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Removals implied by consecutive counts (e.g. Real: recalled -> after recall -> after validation)."""
    pairs = data.get("pairs")
    if stage != "real" or not isinstance(pairs, Mapping):
        return []
    out: list[tuple[str, Any]] = []
    recalled, after_recall, kept = (pairs.get(k) for k in ("recalled", "after_recall", "after_validation"))
    recall_t = (
        (data.get("recall") or {}).get("threshold") if isinstance(data.get("recall"), Mapping) else None
    )
    valid_t = (
        (data.get("validator") or {}).get("threshold") if isinstance(data.get("validator"), Mapping) else None
    )
    if isinstance(recalled, int) and isinstance(after_recall, int):
        out.append((f"removed by the recall threshold (cosine >= {recall_t})", recalled - after_recall))
    if isinstance(after_recall, int) and isinstance(kept, int):
        out.append((f"removed by the validator (score >= {valid_t})", after_recall - kept))
    return out


def _naming_limitation(syn: Mapping[str, Any] | None) -> str:
    """A limitation line on how much of Syn's yield comes from queries that name their tool."""
    share = ((syn or {}).get("queries") or {}).get("names_tool_share")
    sbert = ((syn or {}).get("config") or {}).get("sbert")
    yields = (syn or {}).get("yield") or {}
    block = yields.get(sbert) if isinstance(sbert, str) else None
    plain = (block or {}).get("not_naming_tool") if isinstance(block, Mapping) else None
    if share is None or not isinstance(plain, Mapping) or "per_tool" not in plain:
        return ""
    return (
        f"  In this build {share:.0%} of Syn queries name their tool. The median number of queries per tool "
        f"that find their tool in the top 10 ({sbert.split('/')[-1]}) is "
        f"{block['per_tool'].get('median')} with them and {plain['per_tool'].get('median')} without them "
        f"(means {block.get('per_tool_mean')} and {plain.get('per_tool_mean')}).\n"
        f"{_yield_shape(block)}"
    )


def _yield_shape(block: Mapping[str, Any]) -> str:
    """A line with the per-tool yields themselves: their spread is what makes the median unsteady."""
    counts = block.get("tools_by_hits")
    if not isinstance(counts, Mapping) or not counts:
        return ""
    keys = sorted(counts, key=int)
    line = (
        f"  Sampled tools by how many of their queries find them (0 to {keys[-1]}): "
        f"{', '.join(str(counts[k]) for k in keys)}."
    )
    if 5 * (counts[keys[0]] + counts[keys[-1]]) >= 2 * sum(counts.values()):  # 40% or more at the ends
        line += (
            " With this many tools at the two ends, the median can fall in the gap between them and move by "
            "several queries between builds of the same settings; the mean moves less."
        )
    return line + "\n"


def _threshold_limitation(real: Mapping[str, Any] | None) -> str:
    """A limitation line on how much the size of Real rests on the calibrated validator threshold."""
    validator = (real or {}).get("validator") or {}
    sens = validator.get("threshold_sensitivity")
    calib = (validator.get("measurement") or {}).get("calibration") or {}
    if not isinstance(sens, Mapping) or not all(
        isinstance(sens.get(k), Mapping) for k in ("low", "used", "high")
    ):
        return ""
    low, used, high = sens["low"], sens["used"], sens["high"]
    return (
        f"- Real's size rests on the validator threshold {used['threshold']:.3f}, calibrated on "
        f"{calib.get('on', 'the dev pairs')}. Over bootstrap resamples of those pairs its 90% interval is "
        f"[{low['threshold']:.3f}, {high['threshold']:.3f}], where this build would keep between "
        f"{high['queries']} and {low['queries']} queries instead of {used['queries']}; Real's tables move "
        "with it.\n"
    )


def _stage_stats(art: ArtifactDir) -> dict[str, dict[str, Any] | None]:
    paths = {
        "crawl": art.crawl_report,
        "syn": art.syn_stats,
        "real": art.real_stats,
        "review": art.review_report,
    }
    return {stage: _load_json(path) for stage, path in paths.items()}


def public_stats(art: ArtifactDir) -> dict[str, dict[str, Any]]:
    """Per stage, its report's public entries as a flat ``dotted.key -> value`` mapping (``stats/*.json``)."""
    return {
        stage: dict(_public(_flatten(data))) for stage, data in _stage_stats(art).items() if data is not None
    }


def _cell(value: Any) -> str:
    text = "null" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")[:200]


def _kv_table(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = [(f"`{k}`", _cell(v)) for k, v in pairs]
    return format_table(["entry", "value"], rows) if rows else "_none recorded_"


def _counts(frame: pl.DataFrame, column: str) -> str:
    if column not in frame.columns:
        return "n/a"
    counts = frame.group_by(column).len().sort(["len", column], descending=[True, False])
    return ", ".join(f"{k}: {n}" for k, n in counts.iter_rows())


def _model_rows(name: str, frame: pl.DataFrame) -> list[tuple[str, str, int]]:
    cols = [c for c in ("model", "model_file_sha256", "prompt_version") if c in frame.columns]
    if "model" not in cols:
        return []
    grouped = frame.group_by(cols).len().sort(cols, nulls_last=True)
    rows = []
    for rec in grouped.iter_rows(named=True):
        desc = ", ".join(f"{c}={rec[c]}" for c in cols)
        rows.append((name, desc, rec["len"]))
    return rows


def _simulation_section(art: ArtifactDir) -> list[str]:
    """Table 2 in brief (``rated.evaluation.report.simulation_summary``) when the evaluation ran; an
    unreadable report counts as absent, as every stage report of the card does (``_load_json``)."""
    report = _load_json(art.root / "eval" / "report.json")
    if report is None:
        return []
    from rated.evaluation.report import simulation_summary

    text = simulation_summary(report)
    return [text] if text else []


def _live_section(art: ArtifactDir) -> list[str]:
    """The live runtime's section (``ecoagent live``, docs/live.md) when DIR/eval/live.json is there."""
    from rated.evaluation.live_report import include_if_present

    text = include_if_present(art.root)
    return [text] if text else []


def render_card(
    art: ArtifactDir,
    configs: Mapping[str, Config],
    absent: Mapping[str, str],
    sizes: Mapping[str, int] | None = None,
    *,
    repo_id: str | None = None,
    published: dt.date | None = None,
) -> str:
    """The full README.md: YAML header and the datasheet body (``sizes``: see ``card_metadata``).

    Key statistics are small tables; each stage's full report is linked (``stats/<stage>.json``, written
    by the pipeline from ``public_stats``), not pasted. ``repo_id`` names the Hub repo in the load
    examples and the citation (default ``ecoagent.config.HUB_REPO_ID``).
    """
    meta = card_metadata(configs, sizes)
    header = yaml.dump(meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)
    published = published or date_published(art)
    repo = repo_id or HUB_REPO_ID
    stats = _stage_stats(art)
    tools = configs["tools"].splits["train"]
    out: list[str] = [f"---\n{header}---\n", f"# {PRETTY_NAME}\n"]
    out.append(SUMMARY + "\n")
    out.append(
        format_table(
            ["", ""],
            [
                ("Hub", f"[{repo}]({dataset_url(repo)})"),
                ("version", f"{VERSION}, published {published.isoformat()}"),
                ("tools", tools.height),
                ("configs", ", ".join(f"`{n}`" for n in configs)),
                ("citation", "[BibTeX](#citation)"),
            ],
        )
        + "\n"
    )

    # configs
    out.append("## Configs\n")
    rows = []
    for c in configs.values():
        splits = ", ".join(f"{s} ({f.height})" for s, f in c.splits.items())
        rows.append((f"`{c.name}`", splits, c.rows, ", ".join(c.licenses)))
    out.append(format_table(["config", "splits (rows)", "rows", "license"], rows) + "\n")
    if absent:
        out.append("Configs **absent** from this build (their stage had not produced its output):\n")
        out.extend(f"- `{name}`: missing `{path}`" for name, path in absent.items())
        out.append("")
    out.append("### Columns\n")
    for c in configs.values():
        first = next(iter(c.splits.values()))
        cols = ", ".join(f"`{n}` ({dt})" for n, dt in first.schema.items())
        out.append(f"- **{c.name}**: {c.description} Columns: {cols}.")
    out.append("")

    out.append("## How to load\n")
    out.append(
        "```python\nfrom datasets import load_dataset\n\n"
        f'tools = load_dataset("{repo}", "tools", split="train")       # or a local folder path\n'
        f'syn = load_dataset("{repo}", "syn")                          # train / validation / test\n'
        f'unseen = load_dataset("{repo}", "syn_tool_split", split="test")  # tools unseen in train\n'
        f'mcp = load_dataset("{repo}", "mcp_prompts", split="test")   # MCP servers\' example prompts\n'
        f'mcp_all = load_dataset("{repo}", "mcp_server_prompts", split="test")  # all of them, server-level\n'
        f'corpus = load_dataset("{repo}", "corpus", split="corpus")\n'
        f'queries = load_dataset("{repo}", "queries", split="queries")\n'
        f'qrels = load_dataset("{repo}", "qrels", split="test")      # also syn_test, real_test\n```\n'
        "`default` is an alias of `qrels` (the MTEB layout: `corpus`, `queries`, judgements in `default`). "
        "Single-table configs (`tools`, `real_decisions`, `manual_check`) have one split, `train`; "
        "`mcp_prompts` and `mcp_server_prompts` have one split, `test`. `syn` is split by query (the paper's split: a test query's "
        "tool also has train queries); `syn_tool_split` holds the same pairs split by tool (with its "
        "cross-platform equivalents), so its test tools never occur in train. "
        "Queries' `_id`s are prefixed with their source (`syn:` / `real:`); `qrels` has one split per "
        "benchmark split (both sources) plus `syn_test` and `real_test`.\n"
    )

    # datasheet
    out.append("## Motivation\n")
    out.append(
        "Agents pick tools from large catalogs where many tools are broken, unauthenticated or poorly "
        "documented. EcoAgent measures whether a retriever finds the tool that serves a request *and* "
        "prefers tools that work. It was built to train and evaluate RATED (a dual encoder fused with a "
        "per-tool discounted LinUCB bandit and a static metadata prior).\n"
    )
    out.append("## Composition\n")
    out.append(f"- Tools: {tools.height} ({_counts(tools, 'platform')}).")
    out.append(f"- Tools by auth kind: {_counts(tools, 'auth_kind')}.")
    out.append(f"- Tools by link status: {_counts(tools, 'link_status')}.")
    for name in (n for n in CONFIG_ORDER if n not in ("tools", "corpus")):  # tools above; corpus = tools
        if name in configs:
            c = configs[name]
            per = ", ".join(f"{s}: {f.height}" for s, f in c.splits.items())
            out.append(f"- `{name}`: {c.rows} rows ({per}).")
    if "syn_negatives" in configs:
        neg = pl.concat(list(configs["syn_negatives"].splits.values()), how="diagonal_relaxed")
        out.append(f"- Syn negatives by kind: {_counts(neg, 'kind')}.")
    if "real_decisions" in configs:
        dec = configs["real_decisions"].splits["train"]
        out.append(f"- Real decisions kept: {_counts(dec, 'kept')}.")
    if "manual_check" in configs:
        mc = configs["manual_check"].splits["train"]
        out.append(f"- Manual-check labels: {_counts(mc, 'label')} (null = not labelled yet).")
    out.append("")

    out.append("## Collection\n")
    out.append(
        "Tools were crawled from a snapshot of each platform's public catalog (spec JSON, docs pages, "
        "package READMEs, n8n's generated node types) and normalized into one table; health signals come "
        "from the declared credentials and an optional link probe. Syn queries were generated per tool by "
        "an LLM, deduplicated with MinHash, and paired with SBERT-mined hard negatives and random "
        "negatives. Real queries are ToolBench/StableToolBench queries: a recall encoder proposes the top-5 "
        "tools per query and an LLM validator keeps the matching pairs. Sources:\n"
    )
    sources = sorted({s for c in configs.values() for s in c.sources})
    out.extend(f"- {SOURCE_TEXT.get(s, s)}" for s in sources)
    out.append("")

    out.append("## Filters and what they removed\n")
    out.append(
        "Read from the stages' own reports (`crawl_report.json`, `syn/stats.json`, `real/stats.json`).\n"
    )
    for stage in ("crawl", "syn", "real"):
        file = STAGE_FILES[stage]
        data = stats[stage]
        out.append(f"### {stage} (`{file}`)\n")
        if data is None:
            out.append("_not present in this build_\n")
            continue
        flat = _public(_flatten(data))
        filters = [(k, v) for k, v in flat if any(w in k.lower() for w in FILTER_WORDS)]
        derived = _derived_removals(stage, data)
        if derived:
            out.append(format_table(["filter", "removed"], derived) + "\n")
        # thresholds and removal counts first: they are what a reader checks
        filters.sort(key=lambda kv: not any(w in kv[0].lower() for w in ("threshold", "remov", "drop")))
        out.append(_kv_table(filters[:MAX_FILTER_ROWS]) + "\n")
        link = f"[`{STATS_DIR}/{stage}.json`]({STATS_DIR}/{stage}.json)"
        hidden = len(filters) - MAX_FILTER_ROWS
        lead = f"{hidden} more filter entries, and all" if hidden > 0 else "All"
        out.append(f"{lead} {len(flat)} entries of `{file}`: {link}.\n")

    out.append("## Models that produced the data\n")
    model_rows: list[tuple[str, str, int]] = []
    for name in ("syn", "real_decisions"):
        if name in configs:
            model_rows += _model_rows(
                name, pl.concat(list(configs[name].splits.values()), how="diagonal_relaxed")
            )
    if model_rows:
        out.append("From the rows' model columns:\n")
        out.append(format_table(["config", "model", "rows"], model_rows) + "\n")
    for stage in ("crawl", "syn", "real"):
        data = stats[stage]
        if data is None:
            continue
        prov = [(k, v) for k, v in _public(_flatten(data)) if any(w in k.lower() for w in MODEL_WORDS)]
        if prov:
            out.append(f"From {stage} stats:\n")
            out.append(_kv_table(prov) + "\n")
    if not model_rows and not any(stats[s] for s in ("crawl", "syn", "real")):
        out.append("_No generated configs in this build._\n")

    out.append("## Manual check\n")
    if stats["review"] is not None:
        flat = _public(_flatten(stats["review"]))
        key = [(k, v) for k, v in flat if any(w in k.lower() for w in REVIEW_WORDS) and "confusion" not in k]
        out.append(_kv_table(key[:15]) + "\n")
        out.append(f"All {len(flat)} entries: [`{STATS_DIR}/review.json`]({STATS_DIR}/review.json).\n")
    elif "manual_check" in configs:
        out.append("The sample is included; no agreement report (`review/report.json`) was present.\n")
    else:
        out.append("_not present in this build_\n")

    out.extend(_simulation_section(art))
    out.extend(_live_section(art))
    out.append("## Uses\n")
    out.append(
        "Training and evaluating tool retrievers (dense, sparse, hybrid), reliability-aware re-ranking, "
        "and bandit simulations of tool failures. The `corpus`/`queries`/`qrels` configs load directly in "
        "BEIR- and MTEB-style evaluation code.\n"
    )
    out.append("## Limitations\n")
    out.append(
        "- Syn queries are LLM-generated and may be easier or more templated than real requests; some name "
        "the tool outright (`names_tool`) or the service it belongs to (`names_service`), which helps "
        "lexical retrievers.\n"
        f"{_naming_limitation(stats['syn'])}"
        "- Real pairs rely on an automatic validator; the manual check estimates its agreement with people.\n"
        f"{_threshold_limitation(stats['real'])}"
        "- Health signals are a snapshot (catalog commit / link probe time) and drift as services change.\n"
        "- English only; the catalog covers LangChain, CrewAI, LlamaIndex, n8n and five MCP registries.\n"
    )
    out.append("## Licenses\n")
    out.append(
        "Each config carries the terms of the sources it derives from (`config_licenses` in the YAML "
        "header): LangChain, CrewAI and LlamaIndex material is MIT; n8n material is under the Sustainable "
        "Use License (`license: other`); ToolBench-derived queries are Apache-2.0.\n"
    )
    out.extend(f"- `{lic}`: {LICENSE_TEXT.get(lic, lic)}" for lic in meta["license"])
    out.append("")
    out.append("## Files\n")
    out.append(
        "- `croissant.json`: Croissant 1.0 JSON-LD metadata (one record set per config).\n"
        "- `manifest.json`: the sha256 and size of every file; the same inputs rebuild identical files.\n"
    )
    out.append(
        f"- `{STATS_DIR}/<stage>.json`: each stage's report (crawl, syn, real, review) in full, "
        "as flat `key: value` entries (run-specific timings and local paths left out).\n"
    )
    out.append("## Citation\n")
    out.append("If you use EcoAgent, please cite it:\n")
    out.append("```bibtex\n" + bibtex(repo, published, VERSION) + "\n```\n")
    out.append("## Maintenance\n")
    out.append(
        "The dataset is rebuilt by `ecoagent build` (crawl → syn → real → review → publish); each release "
        "states its catalog snapshot in the crawl report. Report problems in the EcoAgent repository's "
        "issues.\n"
    )
    return "\n".join(out).rstrip() + "\n"
