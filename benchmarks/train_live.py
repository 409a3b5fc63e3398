"""A class pressing Train at once (the page's Train it live section) through Gradio's REST API, on one asyncio loop.

    python -m benchmarks.train_live                          # app.py started here
    python -m benchmarks.train_live --url http://127.0.0.1:7860/ --students 30

First every student presses Train on the same settings and seed: one run, every watcher sees its frames; then each
presses it on settings of its own (another seed), and the lessons wait in line (the toy models' process warmed first
by one lesson, as on an app a class comes to). Meanwhile other students translate
(greedy, the opening models), and the same translations are timed with nothing training, in the same run. Prints
the first frame's latency after Train (p50/p95/max), how many distinct final frames the students saw, how many were
told a place in line, the watches that failed, and the translations' p95 with and without the class training.
"""
import argparse
import asyncio
import json
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.evaluation.timing import SENTENCES  # noqa: E402
from benchmarks.rest_load import call, p95, quantiles, request  # noqa: E402
from benchmarks.server import Server  # noqa: E402

LESSON = ["reverse", "bahdanau", 64, 3, 12, 0, True]  # task, attention, hidden, shortest, longest, seed, beside


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


async def translations(url: str, sentences: list[str], picks: list[str]) -> list[float]:
    """The sentences translated one after another, as one student does: each one's seconds."""
    times = []
    for sentence in sentences:
        reply = await call(url, "translate", sentence, 1, False, "pieces", *picks)
        times.append(reply.seconds if reply.status == "ok" else float("inf"))
    return times


async def class_presses(url: str, lessons: list[list], seconds: float, sentences: list[str], picks) -> dict:
    watches, times = await asyncio.gather(asyncio.gather(*(watch(url, lesson, seconds) for lesson in lessons)),
                                          translations(url, sentences, picks))
    firsts = sorted(w["first_s"] for w in watches if w["first_s"] is not None)
    return {"students": len(lessons), "failed": sum(w["error"] is not None for w in watches),
            "first_frame_s": quantiles(firsts), "first_frame_p95_s": round(p95(firsts), 2) if firsts else None,
            "distinct_last_frames": len({w.get("last") for w in watches if w.get("last")}),
            "told_a_place": sum(w.get("told_place", False) for w in watches),
            "first_error": next((w["error"] for w in watches if w["error"]), None),
            "translation_p95_s": round(p95(sorted(times)), 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app (by default app.py is started here)")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=5.0, help="each lesson's training time (the page's least)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = None if args.url else Server(ROOT / "app.py")
    url = args.url or server.url
    import app
    picks = list(app.OPENING_PICKS)
    sentences = list(SENTENCES.values())
    try:
        asyncio.run(watch(url, [*LESSON[:5], 99, True], args.seconds))  # the toy models' process warm, as in a class
        quiet = asyncio.run(translations(url, sentences * 2, picks))  # warm, then timed alone
        quiet = asyncio.run(translations(url, sentences * 2, picks))
        result = {"translation_p95_alone_s": round(p95(sorted(quiet)), 3),
                  "same_settings": asyncio.run(class_presses(url, [LESSON] * args.students, args.seconds,
                                                             sentences * 2, picks)),
                  "own_settings": asyncio.run(class_presses(
                      url, [[*LESSON[:5], 100 + k, True] for k in range(args.students)], args.seconds,
                      sentences * 4, picks))}
    finally:
        if server:
            server.stop()
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
