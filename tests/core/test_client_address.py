"""The client address used for sign-in throttling, behind trusted proxies or not (issue 21, finding 2)."""

from __future__ import annotations

import ipaddress
from types import SimpleNamespace

import pytest

from core.client_address import TRUSTED_PROXIES_ENV, client_address, parse_trusted_proxies

PROXIES = parse_trusted_proxies("127.0.0.1, ::1 10.0.0.0/8")


def test_the_setting_lists_addresses_and_networks():
    assert PROXIES == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("10.0.0.0/8"),
    )
    assert parse_trusted_proxies("") == () and parse_trusted_proxies(None) == ()


@pytest.mark.parametrize("bad", ["10.0.0.300", "proxy.example", "10.0.0.0/33"])
def test_a_bad_entry_is_named_with_the_variable(bad):
    with pytest.raises(ValueError) as err:
        parse_trusted_proxies(f"127.0.0.1, {bad}")
    assert str(err.value) == (
        f"{TRUSTED_PROXIES_ENV}: {bad!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, ::1)"
    )


def test_without_trusted_proxies_the_peer_is_the_client_and_x_forwarded_for_is_ignored():
    assert client_address("203.0.113.5", ["198.51.100.1"], ()) == "203.0.113.5"
    assert client_address("203.0.113.5", ["198.51.100.1"], PROXIES) == "203.0.113.5"  # peer not a proxy


def test_ipv4_mapped_and_loopback_peers_are_written_one_way():
    assert client_address("::ffff:127.0.0.1", [], ()) == "127.0.0.1"
    assert client_address(None, [], ()) == "127.0.0.1"  # Streamlit hides a loopback peer as None
    assert client_address("2001:DB8::0:1", [], ()) == "2001:db8::1"


def test_behind_a_trusted_proxy_the_rightmost_untrusted_hop_is_the_client():
    # the browser sent a forged header; the proxy appended the address it saw
    assert client_address("127.0.0.1", ["6.6.6.6, 198.51.100.7"], PROXIES) == "198.51.100.7"
    # two proxies: the outer one (10.1.2.3, trusted) appended the browser, the inner one the outer
    assert client_address("::ffff:127.0.0.1", ["198.51.100.7, 10.1.2.3"], PROXIES) == "198.51.100.7"
    # repeated header lines are one list, in order
    assert client_address(None, ["6.6.6.6", "198.51.100.7"], PROXIES) == "198.51.100.7"
    # ports and IPv6 brackets some proxies add
    assert client_address("10.0.0.1", ["[2001:db8::7]:4711"], PROXIES) == "2001:db8::7"
    assert client_address("10.0.0.1", ["198.51.100.7:4711"], PROXIES) == "198.51.100.7"


def test_a_trusted_peer_without_a_usable_header_is_the_client():
    assert client_address("10.0.0.1", [], PROXIES) == "10.0.0.1"
    assert client_address("10.0.0.1", ["", " , "], PROXIES) == "10.0.0.1"
    assert client_address("10.0.0.1", ["10.0.0.2, 10.0.0.3"], PROXIES) == "10.0.0.2"  # every hop trusted
    # garbage the proxy passed on stands for itself (truncated), it never reaches past the untrusted hop
    assert client_address("10.0.0.1", ["<script>" * 20], PROXIES) == ("<script>" * 20)[:64]


def test_the_app_reads_the_peer_the_header_and_the_setting(monkeypatch):
    import streamlit as st

    from pooljudge.ui import auth

    class Headers(dict):
        def get_all(self, key):
            return self.get(key.lower(), [])

    context = SimpleNamespace(ip_address=None, headers=Headers({"x-forwarded-for": ["6.6.6.6, 198.51.100.7"]}))
    monkeypatch.setattr(st, "context", context)
    monkeypatch.delenv(TRUSTED_PROXIES_ENV, raising=False)
    assert auth.client_address() == "127.0.0.1"
    monkeypatch.setenv(TRUSTED_PROXIES_ENV, "127.0.0.1")
    assert auth.client_address() == "198.51.100.7"
