"""The publish stage: build DIR/dataset/ (parquet configs, card, Croissant, manifest) and optionally upload it.

The folder is rebuilt from scratch on each run, so files of configs that vanished never linger; every
file is deterministic, so the manifest of two runs on the same inputs is identical.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet
from ecoagent.config import Profile
from ecoagent.models import file_sha256
from ecoagent.summary import print_table
from publish.card import STATS_DIR, SUMMARY, card_metadata, public_stats, render_card
from publish.citation import date_published
from publish.configs import build_configs
from publish.croissant import croissant
from publish.hub import plan_upload, upload
from publish.manifest import MANIFEST, build_manifest

__all__ = ["run"]

FORMAT_VERSION = 1


def build(out: Path, profile: Profile, repo_id: str | None = None) -> dict[str, Any]:
    """Write DIR/dataset/ and return its stats (configs, rows, bytes, absent configs, fingerprint)."""
    art = ArtifactDir(out)
    configs, absent = build_configs(art)
    folder = art.dataset
    staging = folder.with_name(".dataset.staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)

    sha: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for c in configs.values():
        for split, frame in c.splits.items():
            path = staging / c.data_file(split)
            write_parquet(frame, path)
            sha[c.data_file(split)] = file_sha256(path)
            sizes[c.data_file(split)] = path.stat().st_size
    meta = card_metadata(configs, sizes)
    published = date_published(art)
    card = render_card(art, configs, absent, sizes, repo_id=repo_id, published=published)
    (staging / "README.md").write_text(card)
    for stage, data in public_stats(art).items():  # what the card summarizes, in full
        write_json(staging / STATS_DIR / f"{stage}.json", data)
    ld = croissant(configs, meta, sha, SUMMARY, repo_id=repo_id, published=published)
    write_json(staging / "croissant.json", ld)
    # the fingerprint names the content (not the run): equal files give an equal manifest
    fp = fingerprint({"format": FORMAT_VERSION, "files": build_manifest(staging, "")["files"]})
    manifest = {**build_manifest(staging, fp), "profile": profile.name}
    write_json(staging / MANIFEST, manifest)

    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return {
        "folder": str(folder),
        "fingerprint": fp,
        "configs": {name: {s: f.height for s, f in c.splits.items()} for name, c in configs.items()},
        "licenses": {name: c.licenses for name, c in configs.items()},
        "absent": absent,
        "files": len(manifest["files"]) + 1,
        "bytes": manifest["total_bytes"] + (folder / MANIFEST).stat().st_size,
    }


def run(out: Path, profile: Profile, repo_id: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    """Build the dataset folder; with ``repo_id``, upload it (or, with ``dry_run``, list what would go).

    Args:
        out: the artifact folder.
        profile: the run's profile (its name is recorded in the manifest).
        repo_id: ``ORG/NAME`` of the Hub dataset repo to upload to; ``None`` builds only.
        dry_run: list the files an upload would send and upload nothing.

    Returns:
        The stage's stats: per config the rows of each split, licenses, absent configs, files and bytes,
        and for an upload (or a dry run) the plan and the commit.
    """
    out = Path(out)
    if repo_id and not dry_run and not os.environ.get("HF_TOKEN"):
        # fail before building: the upload would fail anyway
        raise ValueError(
            "HF_TOKEN is not set: export a Hugging Face write token to upload (or use --dry-run)"
        )
    stats = build(out, profile, repo_id)
    folder = Path(stats["folder"])
    rows = []
    for name, splits in stats["configs"].items():
        size = sum(p.stat().st_size for p in (folder / name).glob("*.parquet"))
        rows.append((name, ", ".join(f"{s}={n}" for s, n in splits.items()), sum(splits.values()), size))
    for name, missing in stats["absent"].items():
        rows.append((name, f"absent ({missing})", 0, 0))
    rows.append(
        (
            "total",
            f"{stats['files']} files incl. README.md, croissant.json, manifest.json",
            "",
            stats["bytes"],
        )
    )
    print_table(["config", "splits", "rows", "bytes"], rows, title=f"publish: {folder}")

    if repo_id:
        if dry_run:
            plan = plan_upload(folder, repo_id)
            print_table(
                ["path", "bytes"],
                [(f["path"], f["bytes"]) for f in plan["files"]],
                title=f"dry run: would upload {len(plan['files'])} files to {plan['url']}",
            )
            stats["upload"] = {**plan, "dry_run": True}
        else:
            result = upload(folder, repo_id, commit_message=f"EcoAgent dataset {stats['fingerprint']}")
            print(
                f"uploaded {len(result['files'])} files ({result['bytes']} bytes) to {result['url']}"
                f" (commit {result['commit']})"
            )
            stats["upload"] = {**result, "dry_run": False}
    ArtifactDir(out).mark_done(
        "publish", stats["fingerprint"], {k: stats[k] for k in ("configs", "absent", "files", "bytes")}
    )
    return stats
