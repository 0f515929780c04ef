"""Prefect flows: one flow per stage and the parent flow build-ecoagent; they only wire stages."""

import os

# Prefect's ephemeral API server (used when PREFECT_API_URL is unset) needs longer than its default 20 s
# to start on a busy 2-core machine. Prefect reads its settings on import, so this runs before it.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# An offline build has no use for Prefect's usage telemetry (it only logs failed lookups); opt in with
# PREFECT_SERVER_ANALYTICS_ENABLED=true.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
