"""Who can open the app: this computer, phones on the same network, anyone through Gradio's share link.

Gradio listens where GRADIO_SERVER_NAME says: 127.0.0.1 (this computer only) unless it is set, 0.0.0.0
for every network the computer is on. GRADIO_SHARE=True also makes a public link through Gradio's
servers, for a room without a common network. What the app prints at start comes from here, and so
does the address a shared link holds (attn_demo.ui.share).
"""
import ipaddress
import socket
from dataclasses import dataclass

NETWORK_SWITCH = "GRADIO_SERVER_NAME=0.0.0.0 python app.py"  # phones on the same network
PUBLIC_SWITCH = "GRADIO_SHARE=True python app.py"  # anywhere: a link through Gradio's servers
EVERY_NETWORK = ("0.0.0.0", "::", "")  # server names that listen on every network the computer is on
BEYOND_THIS_COMPUTER = ("10.254.254.254", 9)  # a UDP socket "connected" here picks a route and sends nothing


@dataclass(frozen=True)
class Reach:
    """Where a launched app opens: `local` on this computer, `network` on phones on the same network
    (None where it listens on this computer only, or the computer has no network address), `public`
    anywhere (Gradio's share link, None without one)."""
    server_name: str
    local: str
    network: str | None = None
    public: str | None = None

    @property
    def this_computer_only(self) -> bool:
        return is_loopback(self.server_name)


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP address, an IPv6 one with or without brackets) is this computer only."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def routed_ipv4() -> list[str]:
    """The IPv4 address packets to another computer would leave from: connecting a UDP socket only picks
    the route, nothing is sent; none without a route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(BEYOND_THIS_COMPUTER)
        except OSError:
            return []
        return [probe.getsockname()[0]]


def named_ipv4() -> list[str]:
    """The IPv4 addresses this computer's own name resolves to (usually from the hosts file); none where it resolves to none."""
    try:
        return [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        return []


def lan_ipv4() -> str | None:
    """This computer's IPv4 address on its network, found without sending anything: the one its route out
    leaves from, or else (only without a route) one its own name resolves to; None where it has only loopback."""
    for find in (routed_ipv4, named_ipv4):
        for address in find():
            if not is_loopback(address):
                return address
    return None


def url(host: str, port: int) -> str:
    """http://host:port/, an IPv6 host in brackets."""
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def reach_of(server_name: str, port: int, public: str | None = None, lan=lan_ipv4) -> Reach:
    """Where an app that Gradio listens for at server_name:port opens, with its share link if it made one;
    lan() finds the computer's network address where the app listens on every network."""
    local = url("127.0.0.1" if server_name in EVERY_NETWORK else server_name, port)
    if is_loopback(server_name):
        return Reach(server_name, local, None, public)
    host = lan() if server_name in EVERY_NETWORK else server_name
    return Reach(server_name, local, url(host, port) if host else None, public)


def start_text(reach: Reach) -> str:
    """What the app prints once it listens (as Vite and Jupyter do): the address on this computer, the
    one phones on the same network open, the public one, and for each that is off, how to turn it on."""
    if reach.network:
        network = f"{reach.network}  (phones on the same network)"
    elif reach.this_computer_only:
        network = f"off, this computer only; for phones on the same network: {NETWORK_SWITCH}"
    else:
        network = "no network address found on this computer"
    public = (f"{reach.public}  (through Gradio's servers, for up to a week)" if reach.public else
              f"off; for a room without a common network: {PUBLIC_SWITCH}  (a link through Gradio's servers)")
    return f"attn-demo is running:\n  Local:   {reach.local}\n  Network: {network}\n  Public:  {public}"
