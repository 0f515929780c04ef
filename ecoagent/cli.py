"""The `ecoagent` console command: one subcommand per stage, all sharing `--out DIR`.

Each stage package owns a light ``cli`` module with ``register(subparsers)``; heavy imports (torch,
transformers) happen only inside the chosen command, so ``ecoagent --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

# subcommand -> "module:register function"; modules are imported lazily and only if present.
COMMANDS: dict[str, str] = {
    "crawl": "crawlers.cli:register",
    "syn": "generators.cli:register",
    "real": "validators.cli:register_real",
    "review": "validators.cli:register_review",
    "train": "rated.cli:register_train",
    "evaluate": "rated.evaluation.cli:register",
    "publish": "publish.cli:register",
    "build": "flows.cli:register",
    "live": "live.cli:register",  # real MCP servers (live/, docs/live.md)
}


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every stage takes: the artifact folder, the profile and the seed."""
    parser.add_argument("--out", required=True, help="the artifact folder shared by all stages")
    parser.add_argument(
        "--profile", default="embedded", help="embedded (packaged models, 2 CPU cores) or paper"
    )
    parser.add_argument("--seed", type=int, default=None, help="override the profile's seed")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ecoagent", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for target in COMMANDS.values():
        module_name, func_name = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that stage is not part of this install
            raise
        getattr(module, func_name)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from ecoagent.logs import setup_logging

    setup_logging(args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        if getattr(args, "out", None) is not None:
            from ecoagent.artifacts import ArtifactDir

            ArtifactDir(Path(args.out)).check_writable()  # before any work: a bad --out costs nothing
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        # bad input or a missing earlier stage: one clear line, no traceback
        print(f"ecoagent {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
