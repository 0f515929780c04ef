"""The crawl stage: five platform crawlers -> one validated tool table with health signals and the prior.

``run`` is what ``ecoagent crawl`` and the Prefect flow call. A malformed file or entry becomes an error
line in ``crawl_report.json`` and the crawl goes on; only a platform whose whole source is unreadable
fails the stage (``SourceFailed``, naming the platform and the reason).
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from crawlers import crewai, langchain, llamaindex, mcp, n8n
from crawlers.health import auth_configured, requires_auth
from crawlers.injection import instruction_spans, looks_like_instruction
from crawlers.prior import PriorWeights, consistency, doc_quality, metadata_prior
from crawlers.record import ToolRecord, identifier_words
from crawlers.report import CrawlErrors, SourceFailed
from crawlers.source import MirrorSource, Source
from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet
from ecoagent.config import Profile, default_mirror
from ecoagent.redact import redact
from ecoagent.schemas import (
    AUTH_KINDS,
    CATALOG_STATUSES,
    GRANULARITIES,
    PLATFORMS,
    TOOL_SCHEMA,
    rows_to_frame,
    validate_tools,
)

log = logging.getLogger(__name__)

CRAWLERS: dict[str, Callable[[Source, CrawlErrors], list[ToolRecord]]] = {
    "langchain": langchain.crawl,
    "crewai": crewai.crawl,
    "llamaindex": llamaindex.crawl,
    "n8n": n8n.crawl,
    "mcp": mcp.crawl,
}
# licences of the framework catalogs (../shared/catalogs/README.md); MCP records carry their own
CATALOG_LICENCES: dict[str, str] = {
    "langchain": "MIT",
    "crewai": "MIT",
    "llamaindex": "MIT",
    "n8n": "Sustainable Use License",
}
# platforms without live routes yet (crawlers/live.py): a live crawl leaves them out by default
MIRROR_ONLY: tuple[str, ...] = ("mcp",)
MISSING_FIELDS = ("description", "endpoints", "doc_url", "auth_names", "tags", "arguments")
HIGH_PRIOR = 0.8


@dataclass(frozen=True)
class CrawlConfig:
    """What decides the crawl's output (its fingerprint names a finished crawl)."""

    platforms: tuple[str, ...] = PLATFORMS
    mode: str = "mirror"
    probe_links: bool = False
    sbert: str = "sentence-transformers/all-MiniLM-L6-v2"
    prior: PriorWeights = field(default_factory=PriorWeights)


def parse_platforms(platforms: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"crewai,n8n"`` or a list -> a checked tuple in catalog order."""
    if platforms is None:
        return PLATFORMS
    names = [
        p.strip() for p in (platforms.split(",") if isinstance(platforms, str) else platforms) if p.strip()
    ]
    unknown = sorted(set(names) - set(PLATFORMS))
    if unknown:
        raise ValueError(f"unknown platform(s) {unknown}; choose from {list(PLATFORMS)}")
    if not names:
        raise ValueError("no platform given")
    return tuple(p for p in PLATFORMS if p in names)


def crawl_records(
    source: Source, platforms: Sequence[str], errors: CrawlErrors
) -> tuple[list[ToolRecord], dict[str, float]]:
    """Run each platform's crawler; a whole-source failure raises ``SourceFailed`` naming the platform."""
    records: list[ToolRecord] = []
    timings: dict[str, float] = {}
    for platform in platforms:
        start = time.perf_counter()
        try:
            found = CRAWLERS[platform](source, errors)
        except (OSError, ValueError) as exc:
            raise SourceFailed(f"crawl of {platform} failed: {exc}") from exc
        if not found:
            raise SourceFailed(f"crawl of {platform} failed: its source yielded no tools")
        timings[platform] = round(time.perf_counter() - start, 3)
        log.info("%s: %d tools in %.1fs", platform, len(found), timings[platform])
        records.extend(found)
    return records, timings


def to_frame(
    records: Sequence[ToolRecord],
    weights: PriorWeights,
    encoder: Any | None,
    environ: Mapping[str, str],
    link_status: Mapping[str, str] | None = None,
    cache: Any | None = None,
) -> pl.DataFrame:
    """The tool table: records + health signals + prior (``encoder`` None leaves the prior null)."""
    rows = []
    for r in records:
        row = r.to_row()
        row["description"] = redact(row["description"])
        row["endpoints"] = [redact(u) for u in row["endpoints"]]
        row["doc_url"] = redact(row["doc_url"])
        for arg in row["arguments"]:
            arg["description"] = redact(arg["description"])
        row["name"] = redact(row["name"])
        row["injection_flag"] = any(
            looks_like_instruction(t)
            for t in [row["name"], row["description"], *(a["description"] for a in row["arguments"])]
        )
        row["requires_auth"] = requires_auth(r)
        row["auth_configured"] = auth_configured(r, environ)
        row["link_status"] = (link_status or {}).get(r.tool_id, "unchecked")
        row["licence"] = row["licence"] or CATALOG_LICENCES.get(r.platform)
        rows.append(row)
    if encoder is not None and rows:
        names = [identifier_words(r.given_name or r.name) for r in records]
        cons = consistency(names, [r.description for r in records], encoder, cache=cache)
        quality = doc_quality([r.description for r in records], [", ".join(r.tags) for r in records], weights)
        lists = ["official" if r.is_official else r.platform for r in records]
        source, prior = metadata_prior(cons, lists, quality, weights)
        for i, row in enumerate(rows):
            row.update(
                consistency=float(cons[i]),
                source_weight=float(source[i]),
                doc_quality=float(quality[i]),
                prior=float(prior[i]),
            )
    return validate_tools(rows_to_frame(rows, TOOL_SCHEMA))


def summarize(frame: pl.DataFrame, errors: CrawlErrors, timings: Mapping[str, float]) -> dict[str, Any]:
    """Counts per platform and auth kind, share missing per field, high-prior share, errors, timings."""
    n = frame.height
    missing = {}
    for column in MISSING_FIELDS:
        col = pl.col(column)
        empty = (
            col.is_null() | (col.list.len() == 0)
            if isinstance(frame.schema[column], pl.List)
            else col.is_null() | (col.str.strip_chars() == "")
        )
        missing[column] = round(frame.select(empty.sum()).item() / n, 4) if n else 0.0
    prior = frame["prior"].drop_nulls()
    high = int((prior >= HIGH_PRIOR).sum())
    mcp_rows = frame.filter(pl.col("platform") == "mcp")
    per_source: Counter[str] = Counter()
    for sources in mcp_rows["sources"].to_list():
        per_source.update({s for s in map(mcp.source_of, sources) if s})
    flagged = frame.filter(pl.col("injection_flag"))
    return {
        "tools": n,
        "per_platform": dict(sorted(Counter(frame["platform"].to_list()).items())),
        "per_auth_kind": {k: int((frame["auth_kind"] == k).sum()) for k in AUTH_KINDS},
        "per_link_status": dict(sorted(Counter(frame["link_status"].to_list()).items())),
        "per_granularity": {g: int((frame["granularity"] == g).sum()) for g in GRANULARITIES},
        "per_catalog_status": {s: int((frame["catalog_status"] == s).sum()) for s in CATALOG_STATUSES},
        "per_transport": dict(sorted(Counter(str(t) for t in mcp_rows["transport"].to_list()).items())),
        "mcp": {
            "servers": mcp_rows["server"].n_unique(),
            "records_per_source": dict(sorted(per_source.items())),
            "official": int(mcp_rows["is_official"].sum()),
        },
        "requires_auth": int(frame["requires_auth"].sum()),
        "auth_configured": int(frame["auth_configured"].sum()),
        "missing_share": missing,
        "prior_ge_0_8": high,
        "prior_ge_0_8_share": round(high / prior.len(), 4) if prior.len() else None,
        "prior_mean": round(float(prior.mean()), 4) if prior.len() else None,  # type: ignore[arg-type]
        "prior_per_platform": prior_distribution(frame),
        "injection_flagged": {
            "count": flagged.height,
            "tools": {
                row["tool_id"]: instruction_spans(row["description"])
                for row in flagged.select("tool_id", "description").iter_rows(named=True)
            },
        },
        "errors": {
            "count": errors.count(),
            "per_platform": {p: len(v) for p, v in errors.lines.items()},
            "lines": errors.lines,
        },
        "timings_s": dict(timings),
    }


def prior_distribution(frame: pl.DataFrame) -> dict[str, dict[str, float | int]]:
    """Per platform: tools with a prior, the share >= 0.8, mean and quantiles of the prior."""
    out: dict[str, dict[str, float | int]] = {}
    for platform in sorted(set(frame["platform"].to_list())):
        p = frame.filter(pl.col("platform") == platform)["prior"].drop_nulls()
        if not p.len():
            continue
        out[platform] = {
            "tools": p.len(),
            "ge_0_8_share": round(float((p >= HIGH_PRIOR).mean()), 4),  # type: ignore[arg-type]
            "mean": round(float(p.mean()), 4),  # type: ignore[arg-type]
            **{f"p{q}": round(float(p.quantile(q / 100, "linear")), 4) for q in (0, 10, 25, 50, 75, 90, 100)},  # type: ignore[arg-type]
        }
    return out


def make_source(mirror: Path | None, live: bool, cache: Path, live_config: Any = None) -> Source:
    """The mirror folder, or the live upstream (``crawlers.live``) with its on-disk cache."""
    if live:
        from crawlers.live import LiveConfig, LiveSource

        return LiveSource(live_config or LiveConfig(), cache_dir=cache)
    return MirrorSource(Path(mirror) if mirror is not None else default_mirror())


def run(
    out: Path,
    profile: Profile,
    mirror: Path | None = None,
    live: bool = False,
    probe_links: bool = False,
    platforms: str | Sequence[str] | None = None,
    *,
    weights: PriorWeights | None = None,
    live_config: Any = None,
    probe_config: Any = None,
    environ: Mapping[str, str] | None = None,
    with_prior: bool = True,
    embedding_cache: Path | None | bool = True,
) -> dict[str, Any]:
    """Crawl the catalogs into ``out/tools.parquet`` and ``out/crawl_report.json``; returns the report.

    Args:
        mirror: a folder laid out like ``../shared/catalogs`` (default: ``ecoagent.config.default_mirror()``).
        live: fetch from the upstream URLs instead (``live_config`` sets base URLs, rate limits, retries);
            platforms in ``MIRROR_ONLY`` (mcp) are left out, and naming one is an error.
        probe_links: check each tool's doc URL and first endpoint (``probe_config`` sets the guard).
        platforms: a subset of ``langchain, crewai, llamaindex, n8n, mcp`` (comma string or list).
        environ: where ``auth_configured`` looks (default ``os.environ``).
        with_prior: False skips the SBERT prior (its columns stay null); the benchmark's baseline.
        embedding_cache: True keeps SBERT embeddings in ``ecoagent.models.cache_dir()/embeddings.sqlite``
            (a path puts them there; False encodes every text afresh).
    """
    started = time.perf_counter()
    art = ArtifactDir(out)
    chosen = parse_platforms(platforms)
    if live:
        if platforms is not None and set(chosen) & set(MIRROR_ONLY):
            raise ValueError(f"platform(s) {[p for p in chosen if p in MIRROR_ONLY]} have no live routes yet")
        if set(chosen) & set(MIRROR_ONLY):
            log.info("live crawl: leaving out %s (no live routes yet; crawl it from the mirror)", MIRROR_ONLY)
        chosen = tuple(p for p in chosen if p not in MIRROR_ONLY)
    weights = weights or PriorWeights()
    config = CrawlConfig(
        platforms=chosen,
        mode="live" if live else "mirror",
        probe_links=probe_links,
        sbert=profile.models.sbert,
        prior=weights,
    )
    source = make_source(mirror, live, art.cache, live_config)
    errors = CrawlErrors()
    try:
        records, timings = crawl_records(source, chosen, errors)
    finally:
        for platform, line in getattr(source, "failures", []):
            errors.add(platform, line.split(": ", 1)[0], "unreachable: " + line.split(": ", 1)[-1])

    link_status = None
    if probe_links:
        from crawlers.probe import LinkProbe, ProbeConfig

        t = time.perf_counter()
        link_status = LinkProbe(probe_config or ProbeConfig(), cache_dir=art.cache).check_records(records)
        timings["probe"] = round(time.perf_counter() - t, 3)

    encoder = cache = None
    if with_prior:
        from ecoagent.embeddings import CACHE_FILE, EmbeddingCache, encoder_key
        from ecoagent.models import cache_dir, load_encoder

        t = time.perf_counter()
        encoder = load_encoder(profile.models.sbert)
        timings["model_load"] = round(time.perf_counter() - t, 3)
        if embedding_cache:
            path = cache_dir() / CACHE_FILE if embedding_cache is True else Path(embedding_cache)
            cache = EmbeddingCache(path, encoder_key(encoder, profile.models.sbert))
    t = time.perf_counter()
    frame = to_frame(
        records, weights, encoder, os.environ if environ is None else environ, link_status, cache
    )
    timings["table_and_prior"] = round(time.perf_counter() - t, 3)
    timings["total"] = round(time.perf_counter() - started, 3)

    report = summarize(frame, errors, timings)
    if report["injection_flagged"]["count"]:
        log.warning(
            "%d tools carry instruction-like text (injection_flag): %s",
            report["injection_flagged"]["count"],
            ", ".join(report["injection_flagged"]["tools"]),
        )
    report["config"] = {**asdict(config), "fingerprint": fingerprint(asdict(config))}
    if isinstance(source, MirrorSource):
        report["source"] = str(source.root)
    else:
        report["source"] = "live"
        report["http"] = dict(source.client.stats)  # type: ignore[attr-defined]
    write_parquet(frame, art.tools)
    write_json(art.crawl_report, report)
    art.mark_done("crawl", fingerprint(asdict(config)), {"tools": frame.height, "errors": errors.count()})
    return report
