"""Who can open the app: loopback addresses, this computer's network address, and what it prints at start."""
import ipaddress

import pytest

from attn_demo.serving import reach
from attn_demo.serving.reach import NETWORK_SWITCH, PUBLIC_SWITCH, is_loopback, lan_ipv4, reach_of, start_text, url


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.1.1", "localhost", "LOCALHOST", "app.localhost", "::1", "[::1]"])
def test_this_computers_own_addresses_are_loopback(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["192.168.1.23", "10.0.0.5", "0.0.0.0", "fe80::1", "owner-attn-demo.hf.space", ""])
def test_other_addresses_are_not(host):
    assert not is_loopback(host)


def test_the_network_address_is_found_on_this_computer_or_is_none():
    address = lan_ipv4()
    assert address is None or (ipaddress.ip_address(address).version == 4 and not is_loopback(address))


def test_the_route_out_comes_first_and_the_computers_name_only_without_one(monkeypatch):
    monkeypatch.setattr(reach, "routed_ipv4", lambda: ["192.168.1.23"])
    monkeypatch.setattr(reach, "named_ipv4", lambda: pytest.fail("its name was resolved although a route was found"))
    assert lan_ipv4() == "192.168.1.23"
    monkeypatch.setattr(reach, "routed_ipv4", lambda: [])
    monkeypatch.setattr(reach, "named_ipv4", lambda: ["127.0.1.1", "10.0.0.5"])  # Debian names itself 127.0.1.1
    assert lan_ipv4() == "10.0.0.5"
    monkeypatch.setattr(reach, "named_ipv4", lambda: ["127.0.1.1"])
    assert lan_ipv4() is None


def test_where_the_app_opens_follows_the_server_name():
    here = reach_of("127.0.0.1", 7860, lan=lambda: pytest.fail("no network address is needed on this computer only"))
    assert here.local == "http://127.0.0.1:7860/" and here.network is None and here.this_computer_only
    everywhere = reach_of("0.0.0.0", 7861, lan=lambda: "192.168.1.23")
    assert (everywhere.local, everywhere.network) == ("http://127.0.0.1:7861/", "http://192.168.1.23:7861/")
    assert not everywhere.this_computer_only
    assert reach_of("0.0.0.0", 7860, lan=lambda: None).network is None  # no network: nothing to offer phones
    assert reach_of("192.168.1.23", 7860).network == "http://192.168.1.23:7860/"  # one address named: that one
    assert url("fe80::1", 7860) == "http://[fe80::1]:7860/"


def test_at_start_it_prints_where_it_opens_and_how_to_serve_the_room():
    lines = start_text(reach_of("127.0.0.1", 7860)).splitlines()
    assert lines[1:3] == ["  Local:   http://127.0.0.1:7860/",
                          f"  Network: off, this computer only; for phones on the same network: {NETWORK_SWITCH}"]
    assert PUBLIC_SWITCH in lines[3] and "Gradio's servers" in lines[3]
    text = start_text(reach_of("0.0.0.0", 7860, "https://0123abcd.gradio.live", lan=lambda: "192.168.1.23"))
    assert "  Network: http://192.168.1.23:7860/  (phones on the same network)" in text
    assert "  Public:  https://0123abcd.gradio.live  (through Gradio's servers" in text
