"""The address of the client behind a request, for sign-in throttling, with or without trusted proxies.

The TCP peer is the only address a client cannot forge.  Behind a reverse
proxy, though, every browser's peer is the proxy; the proxy appends the
address *it* saw to ``X-Forwarded-For``.  So the header is believed only
when the peer is a proxy named in :data:`TRUSTED_PROXIES_ENV`, and then only
from the right: each trusted proxy appended the hop to its left, and the
rightmost hop that is not a trusted proxy is the client (everything left of
it was sent by the client and may be forged).

Pure functions: the Streamlit side (``pooljudge.ui.auth.client_address``)
only reads the peer, the header lines and the environment.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

TRUSTED_PROXIES_ENV = "POOLJUDGE_TRUSTED_PROXIES"
"""Environment variable: addresses or networks of the reverse proxies in front of the app (comma or space separated)."""

LOOPBACK = "127.0.0.1"
MAX_CHARS = 64
"""Longest address kept (the ``client`` column of sessions is 64 characters)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# a hop with a port: "198.51.100.7:4711" or "[2001:db8::7]:4711"
_WITH_PORT = re.compile(r"^\[(?P<v6>[^\]]+)\](?::\d+)?$|^(?P<v4>[\d.]+):\d+$")


def parse_trusted_proxies(setting: str | None) -> tuple[Network, ...]:
    """The networks named by the trusted-proxies setting (``"127.0.0.1, 10.0.0.0/8 ::1"``); empty when unset.

    Parameters
    ----------
    setting : str or None
        The value of :data:`TRUSTED_PROXIES_ENV`.

    Returns
    -------
    tuple of IPv4Network or IPv6Network
        One network per entry (a bare address is a network of one).

    Raises
    ------
    ValueError
        If an entry is neither an address nor a network; the message names the entry.
    """
    networks = []
    for entry in (setting or "").replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"{TRUSTED_PROXIES_ENV}: {entry!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, ::1)"
            ) from None
    return tuple(networks)


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]) -> str:
    """The client's address: the peer's, or, when the peer is a trusted proxy, the rightmost untrusted hop.

    Parameters
    ----------
    peer : str or None
        The TCP peer's address; None stands for loopback (Streamlit reports
        ``127.0.0.1`` and ``::1`` as None).
    forwarded_for : sequence of str
        Every ``X-Forwarded-For`` header line of the request, in order.
    trusted : sequence of networks
        The trusted proxies (:func:`parse_trusted_proxies`).

    Returns
    -------
    str
        The address in its canonical text (IPv4-mapped IPv6 written as IPv4),
        at most :data:`MAX_CHARS` characters.
    """
    address = _parse(peer if peer is not None else LOOPBACK)
    if address is None:
        return str(peer)[:MAX_CHARS]
    if not _is_trusted(address, trusted):
        return str(address)
    hops = [hop.strip() for line in forwarded_for for hop in line.split(",") if hop.strip()]
    client = str(address)
    for hop in reversed(hops):
        parsed = _parse(hop)
        if parsed is None:  # not an address: what a trusted proxy passed on, kept as text
            return hop[:MAX_CHARS]
        client = str(parsed)
        if not _is_trusted(parsed, trusted):
            return client
    return client  # every hop is a trusted proxy: the leftmost one made the request


def _parse(text: str) -> _Address | None:
    match = _WITH_PORT.match(text)
    if match is not None:
        text = match.group("v6") or match.group("v4")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:127.0.0.1 (a dual-stack socket) is 127.0.0.1
    return address


def _is_trusted(address: _Address, trusted: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)
