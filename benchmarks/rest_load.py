"""The light client: a class's phones calling Gradio's documented REST API at once (POST /gradio_api/call/NAME,
then its event stream), all on one asyncio loop, so that the client costs little CPU and what is measured is the
server.

    python -m benchmarks.rest_load                          # app.py started here; 300 phones vote in one second
    python -m benchmarks.rest_load --processes 2            # two app.py sharing a redis-server started here; then
                                                            # one is killed (SIGKILL) and started again
    python -m benchmarks.rest_load --as-page                # the phones vote as the page's browser calls
    python -m benchmarks.rest_load --with-page              # each phone loads the student's page, then votes from
                                                            # it; first on bare routes (the floor), then on app.py
    python -m benchmarks.rest_load --with-page --processes 2  # on two app.py sharing Redis, one killed in the middle
    python -m benchmarks.rest_load --url http://127.0.0.1:7860/
    python -m benchmarks.rest_load --burst 60               # 60 students each translate 3 new sentences at once,
                                                            # on the echoing bare app (the floor), then on app.py
    python -m benchmarks.rest_load --press 30 --models transformer-en-fr luong-en-fr
                                                            # 30 students translate one 20-word sentence, then press
                                                            # attribution (integrated gradients) at once

Where this machine has two cores or more and the script starts the servers, they run on the first core (Redis
among them) and the client on the others; but for --press, whose work is the server's arithmetic, app.py has every
core (the client spends a few ms of CPU in all). It prints the votes counted, refused and failed, the latency of a
vote (p50/p95/max), the servers' CPU per vote, and whether the final tally holds every vote once (after the restart
too); for --press, the answers, their latency and how many distinct replies.
"""
import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.classroom.stores import READ_AGAIN_S  # noqa: E402
from attn_demo.evaluation.timing import SENTENCES  # noqa: E402
from attn_demo.ui.classroom import VOTE_RETRIES_S  # noqa: E402
from benchmarks.server import RedisServer, Server, wait_at_rest  # noqa: E402

SENTENCE = "The red car is in front of the house."
MODEL = "bahdanau-en-fr"
PICKS = ("bahdanau-en-fr", "luong-en-fr")  # the page's opening pair, as a student's page translates with


@dataclass
class Reply:
    seconds: float
    status: str  # "ok", "refused" (the server would not take the call: HTTP 503…), "error" (the call failed), or
    # "unreachable" (no process listens there: a load balancer passes the call to another at once)
    data: object  # the outputs, or the error's message


async def call(url: str, name: str, *data, cookie: str = "", session: str = "") -> Reply:
    """One REST call: the POST that queues it, then its event stream up to the result; both send `cookie` where
    one is given (a load balancer may route by it). The call is a Gradio session of its own unless `session` names
    one, as a page's calls share its session."""
    started = time.perf_counter()
    body = {"data": list(data), **({"session_hash": session} if session else {})}
    try:
        status, body = await request(url, "POST", f"gradio_api/call/{name}", json.dumps(body).encode(), cookie)
        if status != 200:
            return Reply(time.perf_counter() - started, "refused", f"HTTP {status}: {body[:120].decode(errors='replace')}")
        event_id = json.loads(body)["event_id"]
        _, stream = await request(url, "GET", f"gradio_api/call/{name}/{event_id}", cookie=cookie)
    except (OSError, ValueError, asyncio.IncompleteReadError) as error:
        return Reply(time.perf_counter() - started, "error", f"{type(error).__name__}: {error}")
    event = None
    for line in stream.decode().splitlines():
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: ") and event in ("complete", "error"):
            data = json.loads(line.removeprefix("data: "))
            return Reply(time.perf_counter() - started, "ok" if event == "complete" else "error", data)
    return Reply(time.perf_counter() - started, "error", "the event stream ended without a result")


async def page_vote(url: str, code: str, voter: str, step: int, piece: int) -> Reply:
    """One vote as the page's browser sends it: a POST to the room routes (attn_demo.ui.room_routes), outside
    Gradio's events."""
    started = time.perf_counter()
    body = json.dumps({"voter": voter, "step": step, "piece": piece}).encode()
    try:
        status, answer = await request(url, "POST", f"rooms/{code}/votes", body)
        reply = json.loads(answer)
    except ConnectionRefusedError as error:
        return Reply(time.perf_counter() - started, "unreachable", str(error))
    except (OSError, ValueError, asyncio.IncompleteReadError) as error:
        return Reply(time.perf_counter() - started, "error", f"{type(error).__name__}: {error}")
    if status != 200:
        return Reply(time.perf_counter() - started, "refused" if status == 503 else "error", reply.get("error", status))
    return Reply(time.perf_counter() - started, "ok", reply["line"])


async def page_load(url: str, code: str) -> Reply:
    """A phone opening the room's link: the student's page (attn_demo.ui.student_page), its pieces in its HTML."""
    started = time.perf_counter()
    try:
        status, page = await request(url, "GET", f"join/{code}")
    except ConnectionRefusedError as error:
        return Reply(time.perf_counter() - started, "unreachable", str(error))
    except (OSError, ValueError, asyncio.IncompleteReadError) as error:
        return Reply(time.perf_counter() - started, "error", f"{type(error).__name__}: {error}")
    ok = status == 200 and b'id="student-pieces"' in page
    return Reply(time.perf_counter() - started, "ok" if ok else "refused" if status == 503 else "error",
                 len(page) if ok else status)


async def with_retries(urls: list[str], first: int, call_at) -> Reply:
    """call_at(url) through a load balancer in front of urls, first urls[first]: a process that refuses the
    connection passes the call to the next at once, as the balancer does (deploy/nginx.conf); a call that failed
    on the way is sent again after each of the page's retry waits (VOTE_RETRIES_S)."""
    started = time.perf_counter()
    for wait in (0, *VOTE_RETRIES_S):
        await asyncio.sleep(wait)
        for k in range(len(urls)):
            reply = await call_at(urls[(first + k) % len(urls)])
            if reply.status != "unreachable":
                break
        if reply.status == "ok":
            break
    return Reply(time.perf_counter() - started, reply.status, reply.data)


async def request(url: str, method: str, path: str, body: bytes = b"", cookie: str = "") -> tuple[int, bytes]:
    """One HTTP/1.1 request on a connection of its own, read to its end (an event stream ends with its result):
    (status, body). A few lines of asyncio instead of an HTTP library, whose CPU per call would rival the server's."""
    address = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        head = (f"{method} {address.path.rstrip('/')}/{path} HTTP/1.1\r\nHost: {address.netloc}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
                + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n")
        writer.write(head.encode() + body)
        status_line = (await reader.readline()).split()
        if len(status_line) < 2:
            raise ConnectionError("the server closed the connection without answering")
        status = int(status_line[1])
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            field, _, value = line.decode().partition(":")
            headers[field.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            chunks = []
            while size := int((await reader.readline()).strip() or b"0", 16):
                chunks.append(await reader.readexactly(size))
                await reader.readline()
            return status, b"".join(chunks)
        if "content-length" in headers:
            return status, await reader.readexactly(int(headers["content-length"]))
        return status, await reader.read()
    finally:
        writer.close()


async def join_and_vote(urls: list[str], code: str, pieces: int, phones: int, within_s: float, seed: int,
                        midway=None) -> dict:
    """`phones` phones each open the student's page at a random moment of `within_s` seconds, then vote from it at
    step 1 (phone i on app i mod len(urls), retrying as the page does); midway(), where given, runs at half the
    window (a process killed). The page loads and the votes, each timed on its own."""
    rng = random.Random(seed)
    moments = [rng.uniform(0, within_s) for _ in range(phones)]

    async def phone(i: int) -> tuple[Reply, Reply]:
        await asyncio.sleep(moments[i])
        page = await with_retries(urls, i, lambda url: page_load(url, code))
        vote = await with_retries(urls, i, lambda url: page_vote(url, code, f"phone-{i:05d}", 1, i % pieces))
        return page, vote

    async def halfway():
        await asyncio.sleep(within_s / 2)
        midway()

    pairs = await asyncio.gather(*(phone(i) for i in range(phones)), *([halfway()] if midway else []))
    return {"pages": [page for page, _ in pairs[:phones]], "replies": [vote for _, vote in pairs[:phones]]}


def p95(ordered: list[float]) -> float:
    """The 95th percentile of values already sorted (the nearest rank)."""
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):.2f} s, p95 {p95(ordered):.2f} s, max {ordered[-1]:.2f} s"


async def vote_at_once(urls: list[str], phones: int, within_s: float, seed: int, as_page: bool = False) -> dict:
    """Open a room on the first app, then `phones` phones vote at step 1, each at a random moment of `within_s`
    seconds, phone i on app i mod len(urls), through the REST API or, as_page, as the page's browser calls; the
    replies and the room's tally on every app afterwards."""
    opened = await call(urls[0], "class_open", SENTENCE, MODEL)
    if opened.status != "ok":
        raise RuntimeError(f"class_open: {opened.data}")
    code, key = opened.data
    pieces = len((await call(urls[0], "class_state", code)).data[0]["english"])
    rng = random.Random(seed)

    async def phone(i: int) -> Reply:
        await asyncio.sleep(rng.uniform(0, within_s))
        ballot = (code, f"phone-{i:05d}", 1, i % pieces)
        url = urls[i % len(urls)]
        return await (page_vote(url, *ballot) if as_page else call(url, "class_vote", *ballot))

    replies = await asyncio.gather(*(phone(i) for i in range(phones)))
    tallies = [sum((await call(url, "class_tally", code)).data[0]["counts"]) for url in urls]
    return {"code": code, "key": key, "replies": replies, "tallies": tallies}


async def after_restart(urls: list[str], code: str, key: str) -> tuple[list[int], bool]:
    """The tally on every app, and whether a reveal with the teacher's key on the restarted one shows on the others
    (within READ_AGAIN_S)."""
    tallies = [sum((await call(url, "class_tally", code)).data[0]["counts"]) for url in urls]
    revealed = await call(urls[0], "class_reveal", code, key)
    await asyncio.sleep(READ_AGAIN_S)  # what one process changed shows on the others within this
    seen = all([(await call(url, "class_state", code)).data[0]["revealed"] for url in urls])
    return tallies, revealed.status == "ok" and seen


async def translate_burst(url: str, sentences: list[str], students: int) -> list[tuple[str, Reply]]:
    """`students` students at once, each translating its share of `sentences` one after another, as the page asks
    (greedy, the opening models); (sentence, reply) for each."""
    async def student(k: int) -> list:
        return [(sentence, await call(url, "translate", sentence, 1, False, "pieces", *PICKS))
                for sentence in sentences[k::students]]

    return [pair for pairs in await asyncio.gather(*(student(k) for k in range(students))) for pair in pairs]


async def press_together(url: str, students: int, sentence: str, picks, press: tuple) -> tuple[dict, object]:
    """`students` sessions translate `sentence` with the models `picks` (greedy), then all make the call `press`
    (its name and data) at once, as a class presses one button together: its latency, errors, and how many
    distinct replies (the same question of the same models: one); and the first reply's outputs."""
    sessions = [f"press-{k}-{random.getrandbits(32):08x}" for k in range(students)]
    translated = await asyncio.gather(*(call(url, "translate", sentence, 1, False, "pieces", *picks, session=session)
                                        for session in sessions))
    ready = [session for session, reply in zip(sessions, translated) if reply.status == "ok"]
    client_cpu = time.process_time()
    replies = await asyncio.gather(*(call(url, *press, session=session) for session in ready))
    answered = [reply for reply in replies if reply.status == "ok"]
    ok = sorted(reply.seconds for reply in answered)
    summary = {"students": students, "translated": len(ready), "answered": len(ok), "errors": len(replies) - len(ok),
               "distinct_replies": len({json.dumps(reply.data, sort_keys=True) for reply in answered}),
               "latency": quantiles(ok), "p95_s": round(p95(ok), 2) if ok else None,
               "client_cpu_ms": round(1000 * (time.process_time() - client_cpu), 1)}
    return summary, answered[0].data if answered else None


def carries(reply: str, pieces: list[str]) -> bool:
    """Whether a reply written as JSON holds every piece (each as JSON writes it: a quote escaped)."""
    return all(json.dumps(piece, ensure_ascii=False)[1:-1] in reply for piece in pieces)


def burst_report(replies: list[tuple[str, Reply]], cpu_s: float, pieces) -> dict:
    """Latency, errors and mixed-up replies (one that lacks a piece of its own sentence, as pieces(sentence) writes
    them: the echo returns the sentence, the app its pieces), and the server's CPU per translation."""
    ok = [(sentence, reply) for sentence, reply in replies if reply.status == "ok"]
    mixed = [s for s, reply in ok if not carries(json.dumps(reply.data, ensure_ascii=False), pieces(s))]
    ordered = sorted(reply.seconds for _, reply in ok)
    return {"translations": len(replies), "errors": len(replies) - len(ok), "mixed_up": len(mixed),
            "latency": quantiles(ordered), "p95_s": p95(ordered) if ordered else None,
            "server_cpu_ms_per_translation": round(1000 * cpu_s / len(replies), 2)}


def report(result: dict, phones: int, cpu_s: float | None) -> dict:
    replies = result["replies"]
    by_status = {status: [r for r in replies if r.status == status] for status in ("ok", "refused", "error")}
    summary = {"phones": phones, "counted": len(by_status["ok"]), "refused": len(by_status["refused"]),
               "failed": len(by_status["error"]), "tallies": result["tallies"],
               "latency": quantiles([r.seconds for r in by_status["ok"]]),
               "server_cpu_ms_per_vote": round(1000 * cpu_s / phones, 2) if cpu_s is not None else None}
    for status in ("refused", "error"):
        if by_status[status]:
            summary[f"first {status}"] = str(by_status[status][0].data)[:160]
    return summary


def set_cores_apart() -> tuple[set, set] | None:
    """(the servers' core, the client's cores) where there are two cores or more to choose from."""
    cores = sorted(os.sched_getaffinity(0))
    return ({cores[0]}, set(cores[1:])) if len(cores) >= 2 else None


def on_cores(apart: tuple[set, set] | None, start):
    """start() with the servers' core to itself (a process keeps the cores it starts on), the client back on its own."""
    if not apart:
        return start()
    os.sched_setaffinity(0, apart[0])
    try:
        return start()
    finally:
        os.sched_setaffinity(0, apart[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--url", help="a running app's address; without it, app.py is started here")
    parser.add_argument("--processes", type=int, default=1, help="app processes sharing one redis-server (2 or more)")
    parser.add_argument("--phones", type=int, default=300)
    parser.add_argument("--within", type=float, default=1.0, help="seconds in which every phone votes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--as-page", action="store_true",
                        help="the phones vote as the page's browser does (POST /rooms/CODE/votes), not through /call/")
    parser.add_argument("--with-page", action="store_true",
                        help="each phone loads the student's page, then votes from it, against bare routes first")
    parser.add_argument("--app", default="app.py", help="the app script to start (benchmarks/bare_rooms_app.py: the floor)")
    parser.add_argument("--burst", type=int, default=0, metavar="STUDENTS",
                        help="instead of votes: this many students each translating --each new sentences at once")
    parser.add_argument("--each", type=int, default=3, help="new sentences each student translates in --burst")
    parser.add_argument("--press", type=int, default=0, metavar="STUDENTS",
                        help="instead of votes: this many students translate one sentence, then press attribution at once")
    parser.add_argument("--models", nargs=2, default=PICKS, metavar=("LEFT", "RIGHT"), help="the models --press picks")
    parser.add_argument("--words", type=int, default=20, choices=sorted(SENTENCES),
                        help="the length of --press's sentence (attn_demo.evaluation.timing.SENTENCES)")
    parser.add_argument("--json", help="write the report here too")
    args = parser.parse_args()
    if args.press:
        summary = attribution_press(args)
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
        return
    if args.url:
        print(json.dumps(report(asyncio.run(vote_at_once([args.url], args.phones, args.within, args.seed, args.as_page)),
                                args.phones, None), indent=1))
        return
    apart = set_cores_apart()
    redis = on_cores(apart, RedisServer) if args.processes > 1 else None  # a server: on the servers' core
    env = {"ATTN_DEMO_ROOMS": redis.url} if redis else {}

    def start(script: str = args.app) -> Server:
        """An app process on the servers' core, once that core is at rest (wait_at_rest)."""
        server = on_cores(apart, lambda: Server(ROOT / script, env={**env, "PYTHONPATH": str(ROOT)}))
        if apart:
            wait_at_rest(apart[0])
        return server

    if args.with_page or args.burst:
        summary = lecture_hall(start, args) if args.with_page else burst(start, args)
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
        if redis:
            redis.stop()
        return
    servers = [start() for _ in range(args.processes)]
    try:
        cpu, client_cpu = sum(server.cpu_seconds() for server in servers), time.process_time()
        result = asyncio.run(vote_at_once([s.url for s in servers], args.phones, args.within, args.seed, args.as_page))
        summary = report(result, args.phones, sum(server.cpu_seconds() for server in servers) - cpu)
        summary["client_cpu_ms_per_vote"] = round(1000 * (time.process_time() - client_cpu) / args.phones, 2)
        summary["cores"] = {"servers": sorted(apart[0]), "client": sorted(apart[1])} if apart else "shared"
        if redis:
            servers[0].kill()  # a crash: SIGKILL, nothing tidied up
            servers[0] = start()
            tallies, revealed = asyncio.run(after_restart([s.url for s in servers], result["code"], result["key"]))
            summary["after_kill_and_restart"] = {"tallies": tallies, "reveal_seen_everywhere": revealed}
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.stop()
        if redis:
            redis.stop()


def attribution_press(args) -> dict:
    """--press: on --url, or on app.py started here with every core, once at rest."""
    press = ("attribute", "integrated-gradients", False, "pieces")
    summary = {"models": list(args.models), "words": args.words, "press": press[0], "method": press[1]}
    server = None if args.url else Server(ROOT / "app.py", env={"PYTHONPATH": str(ROOT)})
    try:
        if server:
            wait_at_rest(set(os.sched_getaffinity(0)))
        pressed, _ = asyncio.run(press_together(args.url or server.url, args.press, SENTENCES[args.words], args.models, press))
        return {**summary, **pressed}
    finally:
        if server:
            server.stop()


def lecture_hall(start, args) -> dict:
    """--with-page: the phones load the student's page and vote, on the floor (bare_routes_app.py), then on app.py
    (--processes of them sharing Redis, the first killed halfway through and started again); each server alone on
    the servers' core, the client on its own."""
    summary = {"phones": args.phones, "within_s": args.within}
    floor = start("benchmarks/bare_routes_app.py")
    try:
        result = asyncio.run(join_and_vote([floor.url], "ABCDEF", 4, args.phones, args.within, args.seed))
        summary["floor"] = hall_report(result)
    finally:
        floor.stop()
    servers = [start() for _ in range(args.processes)]
    try:
        opened = asyncio.run(call(servers[0].url, "class_open", SENTENCE, MODEL))
        code, key = opened.data
        pieces = len(asyncio.run(call(servers[0].url, "class_state", code)).data[0]["english"])
        midway = servers[0].kill if len(servers) > 1 else None  # a crash: SIGKILL, nothing tidied up
        cpu = sum(server.cpu_seconds() for server in servers[int(bool(midway)):])
        result = asyncio.run(join_and_vote([s.url for s in servers], code, pieces, args.phones, args.within, args.seed,
                                           midway))
        summary["app"] = hall_report(result)
        if midway:
            servers[0] = start()
            tallies, revealed = asyncio.run(after_restart([s.url for s in servers], code, key))
            summary["after_kill_and_restart"] = {"tallies": tallies, "reveal_seen_everywhere": revealed}
        else:
            summary["app"]["server_cpu_ms_per_phone"] = round(1000 * (servers[0].cpu_seconds() - cpu) / args.phones, 2)
            summary["tally"] = sum(asyncio.run(call(servers[0].url, "class_tally", code)).data[0]["counts"])
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.stop()
    for what in ("page", "vote"):
        summary[f"{what}_p95_app_over_floor"] = round(summary["app"][f"{what}_p95_s"] / summary["floor"][f"{what}_p95_s"], 2)
    return summary


def hall_report(result: dict) -> dict:
    """What the phones got: page loads and votes counted, refused and failed, and their latencies."""
    report = {}
    for what, replies in (("page", result["pages"]), ("vote", result["replies"])):
        ok = sorted(r.seconds for r in replies if r.status == "ok")
        report[f"{what}s_ok"] = len(ok)
        report[f"{what}s_refused"] = sum(r.status == "refused" for r in replies)
        report[f"{what}s_failed"] = sum(r.status in ("error", "unreachable") for r in replies)
        report[f"{what}_latency"] = quantiles(ok)
        report[f"{what}_p95_s"] = round(p95(ok), 4) if ok else None  # to 0.1 ms: a room call takes a few
    report["page_kB"] = round(max((r.data for r in result["pages"] if r.status == "ok"), default=0) / 1000, 1)
    return report


def burst(start, args) -> dict:
    """The burst on the echoing bare app (the floor), then on app.py, each server alone on the servers' core, new
    sentences for each (the app caches what it has translated)."""
    from attn_demo.data.pairs import TEST_SET, read_pairs
    from attn_demo.models.tokenizer import normalise_english
    import sentencepiece

    english = sentencepiece.SentencePieceProcessor(model_file=str(ROOT / "checkpoints" / PICKS[0] / "source.model"))
    checks = {"floor": lambda sentence: [sentence],
              "app": lambda sentence: english.encode(normalise_english(sentence), out_type=str)}
    n = args.burst * args.each
    pairs = read_pairs(TEST_SET)
    sentences = [pairs[i][0] for i in random.Random(args.seed).sample(range(len(pairs)), 2 * n)]
    summary = {"students": args.burst, "each": args.each}
    for name, script, batch in (("floor", "benchmarks/bare_app.py", sentences[:n]), ("app", "app.py", sentences[n:])):
        server = start(script)
        try:
            cpu = server.cpu_seconds()
            replies = asyncio.run(translate_burst(server.url, batch, args.burst))
            summary[name] = burst_report(replies, server.cpu_seconds() - cpu, checks[name])
        finally:
            server.stop()
    summary["p95_app_over_floor"] = round(summary["app"]["p95_s"] / summary["floor"]["p95_s"], 2)
    return summary


if __name__ == "__main__":
    main()
