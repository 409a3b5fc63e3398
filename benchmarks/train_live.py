"""A teacher pressing Train in the browser, then a class pressing it at once (the page's Train it live section)
through Gradio's REST API, on one asyncio loop.

    python -m benchmarks.train_live --json benchmarks/train_live.json   # app.py started here
    python -m benchmarks.train_live --url http://127.0.0.1:7860/ --students 30

First a teacher's page in headless Chromium (1440 × 900) presses Train on a lesson of its own, --presses times, each
on a page opened anew: the time from the click to the frame after the first frame's status and loss plot are on
screen. Then every student presses Train on the same settings and seed: one run, every watcher sees its frames; then each
presses it on settings of its own (another seed), and the lessons wait in line (the toy models' process warmed first
by one lesson, as on an app a class comes to). Meanwhile another student translates one sentence after another
(greedy, the opening models) from the press until the last watch ends, and the same translations are timed with
nothing training, in the same run. Prints the first frame's latency after Train (p50/p95/max), how many distinct
final frames the students saw, how many were told a place in line, the watches that failed, and the translations'
p95 and slowest with and without the class training (the slowest is the class's 30 presses arriving together).
BENCHMARKS.md shows the table of the committed --json (tests/test_docs.py).
"""
import argparse
import asyncio
import json
import statistics
import sys
import time
import urllib.parse
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.evaluation.timing import SENTENCES  # noqa: E402
from benchmarks.rest_load import call, p95, quantiles, request  # noqa: E402
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS, Server  # noqa: E402

LESSON = ["reverse", "bahdanau", 64, 3, 12, 0, True]  # task, attention, hidden, shortest, longest, seed, beside
# a press of Train on the page, from the click to the frame after its first frame shows: the status counting updates
# and the loss plotted
FIRST_FRAME = """async () => {
  const frame = () => new Promise(requestAnimationFrame);
  const status = () => document.querySelector("#train-status")?.innerText || "";
  const start = performance.now();
  document.querySelector("#train-start").click();
  while (!status().includes("updates") || !document.querySelector("#train-loss .js-plotly-plot")) await frame();
  await frame();
  return performance.now() - start;
}"""
TRAINED = "() => document.querySelector('#train-status').innerText.startsWith('Trained')"


def teacher_presses(url: str, presses: int, seconds: int) -> list[float]:
    """A teacher's Train, each press on the page opened anew (one browser profile, its cache warm, as a teacher's
    returning visit) once it has drawn, on a lesson of its own (seeds 1000, 1001, …, none trained yet): ms to the
    first frame."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        for k in range(presses):
            page = context.new_page()
            page.goto(f"{url}?seed={1000 + k}&seconds={seconds}#section-train", wait_until="load")
            page.locator("#train-status").filter(has_text="A shared lesson").wait_for(timeout=60_000)
            page.locator("#right-grid .js-plotly-plot").wait_for(timeout=60_000)  # the page's own work done, as a
            page.wait_for_timeout(2000)  # teacher who presses Train once it has drawn
            times.append(round(page.evaluate(FIRST_FRAME), 1))
            page.wait_for_function(TRAINED, timeout=120_000)  # this lesson done: the next press waits in no line
            page.close()
        browser.close()
    return times


async def watch(url: str, settings: list, seconds: float) -> dict:
    """One student's Train: the time to its first frame, the places in line it was told, its last status."""
    address = urllib.parse.urlsplit(url)
    started = time.perf_counter()
    reply = await call_post(url, "train_watch", *settings, seconds, False)
    if "event_id" not in reply:
        return {"first_s": None, "error": str(reply)[:160]}
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    writer.write(f"GET {address.path.rstrip('/')}/gradio_api/call/train_watch/{reply['event_id']} HTTP/1.1\r\n"
                 f"Host: {address.netloc}\r\nConnection: close\r\n\r\n".encode())
    first, event, last, places = None, None, None, 0
    try:
        while line := await reader.readline():
            line = line.decode().strip()
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event in ("generating", "complete", "error"):
                if event == "error":
                    return {"first_s": first, "error": line[:160]}
                status = json.loads(line.removeprefix("data: "))[0]
                first = first if first is not None else time.perf_counter() - started
                places += "in line" in status
                last = status
    finally:
        writer.close()
    return {"first_s": first, "last": last, "told_place": places > 0, "error": None if last else "no frame"}


async def call_post(url: str, name: str, *data) -> dict:
    status, body = await request(url, "POST", f"gradio_api/call/{name}", json.dumps({"data": list(data)}).encode())
    return json.loads(body) if status == 200 else {"status": status, "body": body[:120].decode(errors="replace")}


async def translations(url: str, sentences: list[str], picks: list[str], until: asyncio.Future | None = None) -> list[float]:
    """The sentences translated one after another, as one student's page does (one Gradio session), and round again
    until `until` is done (by default once): each one's seconds."""
    times, session = [], uuid.uuid4().hex
    while not times or (until is not None and not until.done()):
        for sentence in sentences:
            reply = await call(url, "translate", sentence, 1, False, "pieces", *picks, session=session)
            times.append(reply.seconds if reply.status == "ok" else float("inf"))
    return times


async def class_presses(url: str, lessons: list[list], seconds: float, sentences: list[str], picks) -> dict:
    watches = asyncio.gather(*(watch(url, lesson, seconds) for lesson in lessons))
    times = await translations(url, sentences, picks, until=watches)
    watches = await watches
    firsts = sorted(w["first_s"] for w in watches if w["first_s"] is not None)
    return {"students": len(lessons), "failed": sum(w["error"] is not None for w in watches),
            "first_frame_s": quantiles(firsts), "first_frame_p95_s": round(p95(firsts), 2) if firsts else None,
            "distinct_last_frames": len({w.get("last") for w in watches if w.get("last")}),
            "told_a_place": sum(w.get("told_place", False) for w in watches),
            "first_error": next((w["error"] for w in watches if w["error"]), None),
            "translation_p95_s": round(p95(sorted(times)), 3), "translation_max_s": round(max(times), 3),
            "translations": len(times)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app (by default app.py is started here)")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=5.0, help="each lesson's training time (the page's least)")
    parser.add_argument("--presses", type=int, default=5, help="the teacher's presses of Train in the browser")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = None if args.url else Server(ROOT / "app.py")
    url = args.url or server.url
    import app
    picks = list(app.OPENING_PICKS)
    sentences = list(SENTENCES.values())
    try:
        asyncio.run(watch(url, [*LESSON[:5], 99, True], args.seconds))  # the toy models' process warm, as in a class
        teacher = teacher_presses(url, args.presses, int(args.seconds))
        quiet = asyncio.run(translations(url, sentences * 2, picks))  # warm, then timed alone
        quiet = asyncio.run(translations(url, sentences * 10, picks))
        result = {"command": "python -m benchmarks.train_live " + " ".join(sys.argv[1:]),
                  "teacher_first_frame_ms": teacher, "translation_p95_alone_s": round(p95(sorted(quiet)), 3),
                  "translation_max_alone_s": round(max(quiet), 3),
                  "same_settings": asyncio.run(class_presses(url, [LESSON] * args.students, args.seconds,
                                                             sentences, picks)),
                  "own_settings": asyncio.run(class_presses(
                      url, [[*LESSON[:5], 100 + k, True] for k in range(args.students)], args.seconds,
                      sentences, picks))}
    finally:
        if server:
            server.stop()
    print(json.dumps(result, indent=1) + "\n\n" + table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


def table(result: dict) -> str:
    """The run as BENCHMARKS.md shows it: the first frame after Train, and the translations meanwhile."""
    teacher = result["teacher_first_frame_ms"]
    rows = ["| who presses Train | first frame | distinct last frames seen | told a place in line | failed | "
            "translations meanwhile: p95, slowest (count) |",
            "|---|---|---|---|---|---|",
            f"| a teacher's page, alone (Chromium, {len(teacher)} presses) | median {statistics.median(teacher):.0f} ms, "
            f"max {max(teacher):.0f} ms | – | – | – | – |"]  # a press that fails ends the run
    for name, what in (("same_settings", "the same settings"), ("own_settings", "settings of their own")):
        run = result[name]
        rows.append(f"| {run['students']} students at once (REST), {what} | {run['first_frame_s']} | "
                    f"{run['distinct_last_frames']} | {run['told_a_place']} | {run['failed']} | "
                    f"{run['translation_p95_s']:.3f} s, {run['translation_max_s']:.3f} s ({run['translations']}); alone "
                    f"{result['translation_p95_alone_s']:.3f} s, {result['translation_max_alone_s']:.3f} s |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
