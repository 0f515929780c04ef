"""The probe's SSRF guard: a URL is contacted only if every address its host resolves to is public.

Tool metadata is untrusted input: a doc URL or a redirect can point at ``127.0.0.1``, a LAN host or the
cloud metadata service (``169.254.169.254``). The guard resolves the host and refuses private, loopback,
link-local, multicast, reserved and unspecified addresses unless a network is explicitly allowed (tests
allow ``127.0.0.1/32``). The probe calls it again for every redirect target.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]

# metadata endpoints that are not covered by the address classes on every platform
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)


class BlockedURL(ValueError):
    """The URL may not be contacted: bad scheme, unresolvable host, or a non-public address."""


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BlockedURL(f"host {host!r} does not resolve ({exc.strerror})") from None
    return sorted({str(info[4][0]) for info in infos})


def is_public(ip: IPAddress) -> bool:
    """True for a globally routable unicast address."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip in METADATA_ADDRESSES
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


class NetGuard:
    """Checks URLs against the address policy.

    Args:
        allow: networks that may be contacted although not public (e.g. ``["127.0.0.1/32"]`` in tests).
        resolver: ``(host, port) -> addresses``; the system resolver by default.
    """

    def __init__(self, allow: Iterable[str] = (), resolver: Resolver | None = None) -> None:
        self.allow: tuple[IPNetwork, ...] = tuple(ipaddress.ip_network(a, strict=False) for a in allow)
        self.resolver = resolver or system_resolver

    def check(self, url: str) -> list[str]:
        """The resolved addresses of an allowed URL; ``BlockedURL`` saying why otherwise."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise BlockedURL(f"{url!r}: scheme {parts.scheme!r} is not http(s)")
        host = parts.hostname
        if not host:
            raise BlockedURL(f"{url!r}: no host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise BlockedURL(f"{url!r}: bad port") from None
        addresses = self.resolver(host, port)
        if not addresses:
            raise BlockedURL(f"{url!r}: host resolves to no address")
        for raw in addresses:
            ip = ipaddress.ip_address(raw.split("%", 1)[0])
            if is_public(ip) or any(ip in net for net in self.allow if net.version == ip.version):
                continue
            raise BlockedURL(f"{url!r}: {host} resolves to non-public address {ip}")
        return addresses
