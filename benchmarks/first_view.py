"""A phone's first view: the time from opening the page to its first alignment grid drawn, and the bytes
on the wire until then, on a throttled phone (390 × 844, Chrome's 4× CPU slowdown, 10 Mbit/s, 40 ms),
against a bare Gradio app of the same version opening on one Plotly heatmap (bare_plot_app.py); then a
student joining a room: the time to the first English piece to tap and the bytes until then, on the
student's page (join/CODE) and on the whole page's student view (?room=CODE&full=1).

    python -m benchmarks.first_view --runs 3 --json benchmarks/first_view.json

BENCHMARKS.md shows the tables of the committed --json (tests/test_docs.py).
"""
import argparse
import json
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

from attn_demo.cli import HelpFormatter
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS, Server

ROOT = Path(__file__).resolve().parent.parent
# a grid is drawn when either renderer has painted its cells: Plotly's heatmap, or the page's own SVG grid
PLOTLY = "#left-grid .js-plotly-plot .heatmaplayer image, #left-grid .js-plotly-plot .heatmaplayer path"
APPS = {"bare": ROOT / "benchmarks" / "bare_plot_app.py", "attn-demo": ROOT / "app.py"}
# a piece to tap: a button of the student's page, or a radio label of the whole page's student view
PIECE = "#student-pieces button, #class-vote label"


def seen_at(selector: str) -> str:
    """A function for wait_for_function, polled at every animation frame: the page's clock (ms since it was opened)
    in the frame that first holds `selector`, before that frame is painted; false until then. The page's clock
    read in that frame, not after Playwright has heard of it: the round trip to a throttled page is no part of it."""
    return f"() => document.querySelector({json.dumps(selector)}) ? performance.now() : false"
# the student's page and the whole page's view of a room, as the page's links name them (ui.classroom)
JOINS = {"student's page (join/CODE)": "join/{code}", "whole page (?room=CODE&full=1)": "?room={code}&full=1#section-classroom"}


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


@contextmanager
def throttled(browser, cpu_slowdown: float, mbit: float, latency_ms: float):
    """A cold phone (a new browser context, nothing cached) on a throttled network: its page, and the bytes it
    receives (Received)."""
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
        yield page, received
    finally:
        context.close()


def first_grid(browser, url: str, cpu_slowdown: float, mbit: float, latency_ms: float) -> dict:
    """One cold visit: ms to the first grid, kB received until then, and ms to the interactive (Plotly) grid."""
    with throttled(browser, cpu_slowdown, mbit, latency_ms) as (page, received):
        page.goto(url, wait_until="commit")
        ms = page.wait_for_function(seen_at(f"{PLOTLY}, #left-grid svg.light-grid rect"), timeout=120_000,
                                    polling="raf").json_value()
        kB = received.bytes() / 1000
        interactive = page.wait_for_function(seen_at(PLOTLY), timeout=120_000, polling="raf").json_value()
        return {"ms": ms, "kB": kB, "interactive_ms": interactive}


def first_piece(browser, url: str, cpu_slowdown: float, mbit: float, latency_ms: float) -> dict:
    """One cold visit of a room's link: ms to the first English piece to tap, kB received until then, and the
    kB received by a second after the page's load event."""
    with throttled(browser, cpu_slowdown, mbit, latency_ms) as (page, received):
        page.goto(url, wait_until="commit")
        ms = page.wait_for_function(seen_at(PIECE), timeout=120_000, polling="raf").json_value()
        kB = received.bytes() / 1000
        page.wait_for_load_state("load", timeout=120_000)
        page.wait_for_timeout(1000)  # what the page's scripts fetch once loaded (the whole page polls on and on)
        return {"ms": ms, "kB": kB, "all_kB": received.bytes() / 1000}


def open_room(url: str) -> str:
    """A room opened on the app as the teacher's page does (class_open), its code."""
    from gradio_client import Client
    import app
    return Client(url, verbose=False).predict("The red car is in front of the house.", app.OPENING_PICKS[0],
                                              api_name="/class_open")[0]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="cold visits of each app, alternated")
    p.add_argument("--cpu-slowdown", type=float, default=4.0)
    p.add_argument("--mbit", type=float, default=10.0, help="download and upload, Mbit/s")
    p.add_argument("--latency-ms", type=float, default=40.0)
    p.add_argument("--json", type=Path, help="write every visit's figures here too")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright
    throttling = (args.cpu_slowdown, args.mbit, args.latency_ms)
    servers = {name: Server(script, env={"PYTHONPATH": str(ROOT)}) for name, script in APPS.items()}
    try:
        code = open_room(servers["attn-demo"].url)
        results, joins = {name: [] for name in APPS}, {name: [] for name in JOINS}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            for _ in range(args.runs):
                for name, server in servers.items():
                    results[name].append(first_grid(browser, server.url, *throttling))
                for name, path in JOINS.items():
                    joins[name].append(first_piece(browser, servers["attn-demo"].url + path.format(code=code), *throttling))
    finally:
        for server in servers.values():
            server.stop()
    run = {"command": "python -m benchmarks.first_view " + " ".join(sys.argv[1:] if argv is None else argv),
           "grids": results, "joins": joins}
    print(grid_table(results) + "\n\n" + join_table(joins))
    if args.json:
        args.json.write_text(json.dumps(run, indent=1) + "\n")


def grid_table(results: dict) -> str:
    bare = statistics.median(r["ms"] for r in results["bare"])
    rows = ["| app | first grid, median ms | runs (ms) | kB received until then | / bare | interactive grid, median ms |",
            "|---|---|---|---|---|---|"]
    for name, runs in results.items():
        median = statistics.median(r["ms"] for r in runs)
        each = ", ".join(f"{r['ms']:.0f}" for r in runs)
        interactive = statistics.median(r["interactive_ms"] for r in runs)
        rows.append(f"| {name} | {median:.0f} | {each} | {statistics.median(r['kB'] for r in runs):.0f} | "
                    f"{median / bare:.2f} | {interactive:.0f} |")
    return "\n".join(rows)


def join_table(joins: dict) -> str:
    rows = ["| a room's link opens | first piece to tap, median ms | runs (ms) | kB received until then | kB by load + 1 s |",
            "|---|---|---|---|---|"]
    for name, runs in joins.items():
        each = ", ".join(f"{r['ms']:.0f}" for r in runs)
        rows.append(f"| {name} | {statistics.median(r['ms'] for r in runs):.0f} | {each} | "
                    f"{statistics.median(r['kB'] for r in runs):.0f} | {statistics.median(r['all_kB'] for r in runs):.0f} |")
    return "\n".join(rows)

if __name__ == "__main__":
    main()
