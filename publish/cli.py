"""`ecoagent publish`: build the Hugging Face dataset folder and optionally upload it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ecoagent.cli import add_common


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "publish",
        help="write DIR/dataset/ (parquet configs, card, Croissant, manifest); upload with --repo-id",
    )
    add_common(parser)
    parser.add_argument("--repo-id", default=None, help="ORG/NAME of the Hub dataset repo (token: $HF_TOKEN)")
    parser.add_argument("--dry-run", action="store_true", help="with --repo-id: list what would be uploaded")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import sys

    from ecoagent.config import get_profile
    from publish.hub import UploadError
    from publish.pipeline import run

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    if args.dry_run and not args.repo_id:
        raise ValueError("--dry-run needs --repo-id")
    try:
        run(Path(args.out), profile, repo_id=args.repo_id, dry_run=args.dry_run)
    except UploadError as exc:  # already redacted; one line, no traceback
        print(f"ecoagent publish: error: {exc}", file=sys.stderr)
        return 1
    return 0
