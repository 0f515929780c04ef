"""Shared fixtures: the real catalog snapshot, a fresh Prefect home, and no internet.

Tests run on slices of ``../shared/catalogs`` and small packaged models. The network guard refuses any
connection that is not to a loopback address, so a test that reaches for the internet fails loudly.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

from ecoagent.config import default_mirror

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# float32 embeddings everywhere, on every CPU: tests compare cached with freshly computed vectors to 1e-6;
# the bfloat16 path an AMX or AVX512-BF16 machine takes in a build is tested explicitly (test_embeddings)
os.environ.setdefault("ECOAGENT_ENCODE_DTYPE", "float32")
os.environ.setdefault("ECOAGENT_ENCODE_BACKEND", "torch")  # OpenVINO's own tests set it


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost",):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # unix sockets


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block every non-loopback connection for the duration of each test."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        if not _is_loopback(address):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The real catalog snapshot (``../shared/catalogs``)."""
    return default_mirror()


@pytest.fixture(scope="session")
def crawled_out(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    """An artifact folder holding ``tools.parquet`` from the real crawl of the full snapshot (mirror mode).

    No link probe; ``auth_configured`` is computed against an empty environment so the table does not
    depend on which keys the test machine happens to have.
    """
    from crawlers.pipeline import run
    from ecoagent.config import get_profile

    out = tmp_path_factory.mktemp("crawled_out")
    run(out, get_profile("embedded"), mirror=mirror, environ={})
    return out
