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


# credential values of known shapes (and one of none) that a crawled page might paste into its prose
PLANTED_SECRETS = {
    "openai": "sk-proj-" + "Qw3rTy7Uio9PaSdF" * 2,
    "github": "ghp_" + "Ab12Cd34Ef56Gh78Ij90" * 2,
    "aws": "AKIA" + "IOSFODNN7EXAMPL3",
    "stripe": "sk_live_" + "51HxYzAbCdEfGh1234",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "assigned": "q8Zr2LmX0vTk5Nw1",  # no known shape: caught only as the value of API_KEY=
    "bearer": "d7F2kLm9Qx4Rt8Vz3Bn6",
    "url_password": "s3cr3tPassw0rd",
}


PLANTED_SECRETS_TEXT = (
    f"use {PLANTED_SECRETS['openai']} or {PLANTED_SECRETS['github']} / {PLANTED_SECRETS['aws']} / {PLANTED_SECRETS['stripe']}; "
    f"token {PLANTED_SECRETS['jwt']}; export MY_SERVICE_API_KEY={PLANTED_SECRETS['assigned']}; "
    f"header Authorization: Bearer {PLANTED_SECRETS['bearer']}; "
    f"db postgres://admin:{PLANTED_SECRETS['url_password']}@db.example.com/x"
)


@pytest.fixture
def planted() -> tuple[dict[str, str], str]:
    """``(secrets by kind, a text that pastes them all beside placeholders that hold none)``."""
    return PLANTED_SECRETS, PLANTED_SECRETS_TEXT
