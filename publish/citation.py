"""How the dataset is cited and found: its Hub URL, publication date and BibTeX entry.

The date is the day the published data was produced (the newest stage report it is built from, or
``SOURCE_DATE_EPOCH`` when set, as reproducible builds do), never the clock at publish time, so equal
inputs still give identical files.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import HUB_REPO_ID

TITLE = "EcoAgent: A Benchmark for Reliability-Aware Tool Retrieval"
VERSION = "1.0.0"  # the dataset's version in Croissant and the citation


def dataset_url(repo_id: str | None = None) -> str:
    """The dataset's page on the Hugging Face Hub."""
    return f"https://huggingface.co/datasets/{repo_id or HUB_REPO_ID}"


def date_published(art: ArtifactDir) -> dt.date:
    """``SOURCE_DATE_EPOCH`` if set, else the UTC day of the newest stage report the dataset reads."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return dt.datetime.fromtimestamp(int(epoch), dt.UTC).date()
    reports = [art.crawl_report, art.syn_stats, art.real_stats, art.review_report, art.tools]
    times = [Path(p).stat().st_mtime for p in reports if Path(p).exists()]
    if not times:
        raise FileNotFoundError(f"{art.tools} is missing: run `ecoagent crawl --out {art.root}` first")
    return dt.datetime.fromtimestamp(max(times), dt.UTC).date()


def bibtex(repo_id: str | None, published: dt.date, version: str) -> str:
    """The BibTeX entry of this build (``version``: the dataset's version, as in Croissant)."""
    repo = repo_id or HUB_REPO_ID
    key = "ecoagent" + str(published.year)
    return (
        f"@misc{{{key},\n"
        f"  title        = {{{{EcoAgent}}: A Benchmark for Reliability-Aware Tool Retrieval}},\n"
        f"  author       = {{{{EcoAgent contributors}}}},\n"
        f"  year         = {{{published.year}}},\n"
        f"  month        = {published.strftime('%b').lower()},\n"
        f"  howpublished = {{\\url{{{dataset_url(repo)}}}}},\n"
        f"  note         = {{Hugging Face dataset {repo}, version {version}, published {published.isoformat()}}}\n"
        f"}}"
    )
