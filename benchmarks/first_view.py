"""A phone's first view: the time from opening the page to its first alignment grid drawn, and the bytes
on the wire until then, on a throttled phone (390 × 844, Chrome's 4× CPU slowdown, 10 Mbit/s, 40 ms),
against a bare Gradio app of the same version opening on one Plotly heatmap (bare_plot_app.py).

    python -m benchmarks.first_view --runs 3
"""
import argparse
import statistics
from pathlib import Path

from attn_demo.cli import HelpFormatter
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS, Server

ROOT = Path(__file__).resolve().parent.parent
# a grid is drawn when either renderer has painted its cells: Plotly's heatmap, or the page's own SVG grid
PLOTLY = "#left-grid .js-plotly-plot .heatmaplayer image, #left-grid .js-plotly-plot .heatmaplayer path"
DRAWN = f"() => !!document.querySelector('{PLOTLY}, #left-grid svg.light-grid rect')"
INTERACTIVE = f"() => !!document.querySelector('{PLOTLY}')"
APPS = {"bare": ROOT / "benchmarks" / "bare_plot_app.py", "attn-demo": ROOT / "app.py"}


class Received:
    """Bytes received per request, counted as they arrive: the page's grid is drawn from the HTML while the
    HTML itself may still be loading, so a response still in flight counts what has come of it so far."""

    def __init__(self):
        self.so_far, self.total = {}, {}

    def chunk(self, event):
        # a chunk's bytes on the wire; some Chromium builds leave encodedDataLength 0 until the load finishes
        size = event["encodedDataLength"] or event["dataLength"]
        self.so_far[event["requestId"]] = self.so_far.get(event["requestId"], 0) + size

    def finished(self, event):
        self.total[event["requestId"]] = event["encodedDataLength"]

    def bytes(self) -> int:
        return sum(self.total.get(request, self.so_far.get(request, 0)) for request in {*self.so_far, *self.total})


def first_grid(browser, url: str, cpu_slowdown: float, mbit: float, latency_ms: float) -> dict:
    """One cold visit (a new browser context, nothing cached): ms to the first grid, kB received until then,
    and ms to the interactive (Plotly) grid."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": latency_ms,
                                                      "downloadThroughput": mbit * 1e6 / 8, "uploadThroughput": mbit * 1e6 / 8})
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})
        received = Received()
        cdp.on("Network.dataReceived", received.chunk)
        cdp.on("Network.loadingFinished", received.finished)
        page.goto(url, wait_until="commit")
        page.wait_for_function(DRAWN, timeout=120_000, polling="raf")
        ms, kB = page.evaluate("() => performance.now()"), received.bytes() / 1000
        page.wait_for_function(INTERACTIVE, timeout=120_000, polling="raf")
        return {"ms": ms, "kB": kB, "interactive_ms": page.evaluate("() => performance.now()")}
    finally:
        context.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="cold visits of each app, alternated")
    p.add_argument("--cpu-slowdown", type=float, default=4.0)
    p.add_argument("--mbit", type=float, default=10.0, help="download and upload, Mbit/s")
    p.add_argument("--latency-ms", type=float, default=40.0)
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright
    servers = {name: Server(script, env={"PYTHONPATH": str(ROOT)}) for name, script in APPS.items()}
    try:
        results = {name: [] for name in APPS}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            for _ in range(args.runs):
                for name, server in servers.items():
                    results[name].append(first_grid(browser, server.url, args.cpu_slowdown, args.mbit, args.latency_ms))
    finally:
        for server in servers.values():
            server.stop()
    bare = statistics.median(r["ms"] for r in results["bare"])
    print("| app | first grid, median ms | runs (ms) | kB received until then | / bare | interactive grid, median ms |\n"
          "|---|---|---|---|---|---|")
    for name, runs in results.items():
        median = statistics.median(r["ms"] for r in runs)
        each = ", ".join(f"{r['ms']:.0f}" for r in runs)
        interactive = statistics.median(r["interactive_ms"] for r in runs)
        print(f"| {name} | {median:.0f} | {each} | {statistics.median(r['kB'] for r in runs):.0f} | {median / bare:.2f} "
              f"| {interactive:.0f} |")


if __name__ == "__main__":
    main()
