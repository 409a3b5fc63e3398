"""A Gradio app script run as a server on a free loopback port, the gradio_client user and the headless Chromium that
visit it, and the Redis server rooms may be kept in: how the benchmarks and the tests start app.py, the bare apps and
Redis, and call them."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"  # Debian's; driven by Playwright (a dev requirement)
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"  # Debian's (apt-get install redis-server)
# a benchmark's client waits for an answer as a browser does: gradio_client's own requests give up after httpx's
# 5 s, which a loaded machine's queue can take to answer, and a slow answer is a figure to report, not an error
WAIT_S = 60
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gradio_user(url: str):
    """A gradio_client user of the app at `url` (a page shows the link: nothing is downloaded) that waits WAIT_S."""
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, httpx_kwargs={"timeout": WAIT_S})


class Server:
    """A Gradio app script run on a free loopback port."""

    def __init__(self, script: Path, log: Path | None = None, env: dict | None = None):
        """Start `script` (with `env` added to the environment) and wait until it answers HTTP;
        its output goes to `log` (or nowhere)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = log
        env = {**os.environ, **(env or {}), "GRADIO_SERVER_PORT": str(self.port), "GRADIO_SERVER_NAME": "127.0.0.1",
               "GRADIO_ANALYTICS_ENABLED": "False"}
        self.started = time.perf_counter()
        with open(log or os.devnull, "w") as out:
            self.process = subprocess.Popen([sys.executable, str(script)], env=env, stdout=out, stderr=subprocess.STDOUT)
        self.startup_s = self._wait()

    def _wait(self) -> float:
        deadline = time.perf_counter() + 300
        while time.perf_counter() < deadline:
            try:
                urllib.request.urlopen(self.url, timeout=5)
                return time.perf_counter() - self.started
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.url} exited with code {self.process.returncode}{self._log_text()}")
                time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"{self.url} did not answer within 300 s{self._log_text()}")

    def _log_text(self) -> str:
        return f":\n{self.log.read_text()}" if self.log else ""

    def rss_mb(self, field="VmRSS") -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field):
                return round(int(line.split()[1]) / 1024, 1)
        return float("nan")

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (all its threads)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)

    def kill(self):
        """SIGKILL: the process ends mid-request, as in a crash, with no chance to tidy up."""
        self.process.kill()
        self.process.wait(timeout=30)


def busy_fraction(cores: set, window_s: float) -> float:
    """The share of `window_s` seconds that the CPU cores `cores` spent working, by every process (/proc/stat)."""
    def ticks() -> tuple[int, int]:
        busy = total = 0
        for line in Path("/proc/stat").read_text().splitlines():
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
                numbers = [int(field) for field in fields[:8]]
                total, busy = total + sum(numbers), busy + sum(numbers) - numbers[3] - numbers[4]  # idle, iowait
        return busy, total

    (busy_0, total_0), _ = ticks(), time.sleep(window_s)
    busy_1, total_1 = ticks()
    return (busy_1 - busy_0) / max(total_1 - total_0, 1)


def wait_at_rest(cores: set, below: float = 0.1, window_s: float = 1.0, timeout_s: float = 60.0) -> float:
    """Wait until the cores `cores` are at rest (busy under `below` of a window: an app started answers HTTP while it
    still warms up, the toy models' process among it) and return the seconds waited; a class arrives at an app at rest."""
    started = time.perf_counter()
    while busy_fraction(cores, window_s) >= below and time.perf_counter() - started < timeout_s:
        pass
    return time.perf_counter() - started


class RedisServer:
    """Debian's redis-server on a free loopback port, keeping nothing on disk: its data lives as long as it does."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen([REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                         "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.perf_counter() + 10
        while not self._answers():
            if self.process.poll() is not None or time.perf_counter() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
