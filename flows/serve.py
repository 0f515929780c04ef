"""Serve the deployment ``build-ecoagent/build-ecoagent`` from this project (``python -m flows.serve``).

The process registers the deployment with the Prefect server named by ``PREFECT_API_URL`` and runs each
flow run it is asked for (``prefect deployment run 'build-ecoagent/build-ecoagent' -p out=DIR``) in a
subprocess, until it is stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

DEPLOYMENT = "build-ecoagent"


def serve(name: str = DEPLOYMENT, parameters: dict[str, Any] | None = None, limit: int | None = None) -> None:
    """Create/update the deployment ``build-ecoagent/<name>`` and serve it (blocks).

    Args:
        name: the deployment's name.
        parameters: default parameters of its runs (e.g. ``{"out": "/data/ecoagent"}``); a run's own
            ``-p`` values override them.
        limit: run at most this many flow runs at once.
    """
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    from prefect.types.entrypoint import EntrypointType

    from flows.build import build_ecoagent

    build_ecoagent.serve(
        name=name,
        parameters=parameters or {},
        limit=limit,
        description="Build the EcoAgent benchmark: crawl, syn + real, review sample, train, evaluate, publish.",
        tags=["ecoagent"],
        # load the flow by module path, so the served process finds it wherever it was started
        entrypoint_type=EntrypointType.MODULE_PATH,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--name", default=DEPLOYMENT, help="deployment name (default: build-ecoagent)")
    parser.add_argument("--out", default=None, help="default artifact folder of the deployment's runs")
    parser.add_argument("--profile", default=None, help="default profile of the deployment's runs")
    parser.add_argument("--limit", type=int, default=None, help="flow runs at once (default: no limit)")
    args = parser.parse_args(argv)
    defaults = {k: v for k, v in {"out": args.out, "profile": args.profile}.items() if v is not None}
    serve(args.name, defaults, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
