"""The SSRF guard: private, loopback, link-local and metadata addresses are refused unless allowed."""

from __future__ import annotations

import pytest

from crawlers.netguard import BlockedURL, NetGuard


def fixed(*addresses: str):
    return lambda host, port: list(addresses)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.10",
        "172.16.5.4",
        "169.254.169.254",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00:ec2::254",
        "::ffff:127.0.0.1",
        "100.64.0.1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    with pytest.raises(BlockedURL, match="non-public address"):
        NetGuard(resolver=fixed(address)).check("http://tool.example/docs")


def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    with pytest.raises(BlockedURL, match="10.0.0.7"):
        NetGuard(resolver=fixed("93.184.216.34", "10.0.0.7")).check("https://rebind.example/")


def test_public_addresses_pass_and_loopback_passes_only_when_allowed() -> None:
    assert NetGuard(resolver=fixed("93.184.216.34")).check("https://docs.example/x") == ["93.184.216.34"]
    assert NetGuard(allow=["127.0.0.1/32"]).check("http://127.0.0.1:8080/") == ["127.0.0.1"]
    with pytest.raises(BlockedURL):
        NetGuard(allow=["127.0.0.1/32"]).check("http://127.0.0.2:8080/")


def test_the_system_resolver_is_used_for_names() -> None:
    with pytest.raises(BlockedURL, match="localhost resolves to non-public address"):
        NetGuard().check("http://localhost:9/")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://x/", "http:///nohost", "ftp://example.com/"])
def test_only_http_urls_with_a_host(url: str) -> None:
    with pytest.raises(BlockedURL):
        NetGuard(resolver=fixed("93.184.216.34")).check(url)
