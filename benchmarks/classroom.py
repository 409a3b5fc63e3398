"""Load test of "Predict, then reveal": one room, a class of phones voting, a projector polling, as their browsers call.

    python benchmarks/classroom.py                   # starts app.py on a free port, 60 phones
    python benchmarks/classroom.py --url http://127.0.0.1:7860/ --students 30
    python benchmarks/classroom.py --translators 60  # and others translating while the room votes

The teacher's client (gradio_client) opens a room on a sentence. Each phone (an HTTP client posting as the page's
browser does, BrowserSession) polls class_state every --phone-poll
seconds (as a phone's page does) and votes once at a random moment of the --within window; a --change share of
them changes its vote once. The projector's client polls class_tally every --poll seconds (as the teacher's
page does). Then the teacher reveals. The clients run on this machine: where it is the server's, they share its
CPU. It prints:

  - whether every vote was counted once (the final tally against the votes sent, changes replacing);
  - vote → projector: for each vote, from sending it to the return of the first projector poll sent after
    the vote was answered (an upper bound on when the projector showed it), p50/p95/max;
  - reveal → phones: from sending the reveal to each phone's first state showing it, p50/p95/max;
  - the calls' own round trips, and the server's CPU time per call (when this script started the server);
  - errors, by message;
  - with --translators: gradio_client users each translating --per-translator new test sentences from the
    moment the phones start, first against the echoing bare app (benchmarks/bare_app.py, the framework's
    floor) while the room runs on the app, then against the app itself while a second room runs on it; their
    p95 against the floor's (when this script started the server);
  - memory: a room with its votes, measured in this process (tracemalloc) at the bounds of
    attn_demo.classroom.rooms (MAX_ROOMS rooms of MAX_VOTERS phones), and the server's RSS before and after
    opening --rooms more rooms (when this script started the server).
"""
import argparse
import asyncio
import itertools
import random
import secrets
import statistics
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.classroom import rooms as classroom  # noqa: E402
from attn_demo.classroom.stores import MemoryStore  # noqa: E402
from attn_demo.data.pairs import TEST_SET, read_pairs  # noqa: E402
from benchmarks.server import WAIT_S, Server, gradio_user  # noqa: E402
from attn_demo.ui.classroom import PHONE_POLL_S, POLL_S  # noqa: E402

SENTENCE = "The red car is in front of the house."
PICKS = ("bahdanau-en-fr", "luong-en-fr")  # the translators' two models (the page's opening pair)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    return (f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {p95(values) * 1000:.0f} ms, "
            f"max {max(values) * 1000:.0f} ms (n={len(values)})")


class BrowserSession:
    """One page in a browser, as the app sees it: its own session and connection, calling the activity's
    endpoints as the page's browser does: a phone's poll and vote to the room routes, the projector's calls one POST
    each to run/predict (outside the queue). A phone costs the benchmark a small HTTP client rather than a
    gradio_client, which would load its machine more than the app's (gradio_client always queues)."""

    def __init__(self, url: str, config: dict):
        self.prefix = url.rstrip("/") + config.get("api_prefix", "/gradio_api") + "/"
        self.address = url.rstrip("/") + "/"
        self.fn_index = {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_name")}
        self.session_hash, self.http = secrets.token_hex(8), httpx.Client(timeout=WAIT_S)

    def room(self, code: str) -> dict:
        """A phone's poll, as the page sends it to the room routes (attn_demo.ui.room_routes)."""
        return self.answer(self.http.get(f"{self.address}rooms/{code}"))["room"]

    def vote(self, code: str, voter: str, step: int, piece: int) -> str:
        """A phone's vote, as the page sends it to the room routes."""
        body = {"voter": voter, "step": step, "piece": piece}
        return self.answer(self.http.post(f"{self.address}rooms/{code}/votes", json=body))["line"]

    @staticmethod
    def answer(reply) -> dict:
        if reply.status_code != 200:
            raise RuntimeError(reply.json().get("error") or reply.status_code)
        return reply.json()

    def predict(self, *data, api_name: str):
        body = {"data": list(data), "event_data": None, "fn_index": self.fn_index[api_name.lstrip("/")],
                "session_hash": self.session_hash}
        reply = self.http.post(self.prefix + "run/predict", json=body)
        answer = reply.json()
        if reply.status_code != 200 or answer.get("error"):
            raise RuntimeError(answer.get("error") or reply.status_code)
        return answer["data"][0]


class Projector(threading.Thread):
    """Polls class_tally every `poll` seconds, keeping (sent, received, votes counted) of each poll."""

    def __init__(self, client, code: str, poll: float, errors: Counter):
        super().__init__(daemon=True)
        self.client, self.code, self.poll, self.errors = client, code, poll, errors
        self.polls, self.running = [], True

    def run(self):
        while self.running:
            sent = time.monotonic()
            try:
                tally = self.client.predict(self.code, api_name="/class_tally")
                self.polls.append((sent, time.monotonic(), sum(tally["counts"])))
            except Exception as error:  # noqa: BLE001  (counted and shown)
                self.errors[f"class_tally: {error}"[:120]] += 1
            time.sleep(max(0.0, self.poll - (time.monotonic() - sent)))

    def shown_at(self, answered: float) -> float | None:
        """When the first poll sent after `answered` came back: by then the projector showed that vote."""
        return next((received for sent, received, _ in self.polls if sent >= answered), None)


class Phone(threading.Thread):
    """One student: polls class_state every `poll` seconds, votes at `vote_at` (and changes it once at `change_at`),
    and notes when it first sees the step revealed."""

    def __init__(self, client, code: str, voter: str, pieces: int, start: float, args, errors: Counter, rng: random.Random):
        super().__init__(daemon=True)
        self.client, self.code, self.voter, self.poll, self.errors = client, code, voter, args.phone_poll, errors
        self.vote_at = start + rng.uniform(0, args.within)
        self.change_at = self.vote_at + rng.uniform(2.5, 4) if rng.random() < args.change else None
        self.picks = [rng.randrange(pieces), rng.randrange(pieces)]
        self.votes = []  # (piece, sent, answered) of each vote the room accepted
        self.polls = []  # round trip of each class_state
        self.revealed_at, self.running = None, True
        self.voted = threading.Event()  # set once its last vote is answered (or refused)

    def vote(self, piece: int):
        sent = time.monotonic()
        try:
            self.client.vote(self.code, self.voter, 1, piece)
            self.votes.append((piece, sent, time.monotonic()))
        except Exception as error:  # noqa: BLE001
            self.errors[f"class_vote: {error}"[:120]] += 1

    def run(self):
        pending = [(self.vote_at, self.picks[0])] + ([(self.change_at, self.picks[1])] if self.change_at else [])
        next_poll = time.monotonic()
        while self.running:
            now = time.monotonic()
            if pending and now >= pending[0][0]:
                self.vote(pending.pop(0)[1])
                if not pending:
                    self.voted.set()
                continue
            if now >= next_poll:
                next_poll = now + self.poll
                try:
                    state = self.client.room(self.code)
                    self.polls.append(time.monotonic() - now)
                    if state["revealed"] and self.revealed_at is None:
                        self.revealed_at = time.monotonic()
                except Exception as error:  # noqa: BLE001
                    self.errors[f"class_state: {error}"[:120]] += 1
            time.sleep(max(0.0, min(next_poll, pending[0][0] if pending else next_poll) - time.monotonic()))


class Translators:
    """Others on the page while a room votes: `count` gradio_client users, each translating its own new
    sentences one after another (as bench_app.classroom_load's students do), started together by go()."""

    def __init__(self, url: str, sentences: list[str], count: int, per_client: int, errors: Counter):
        self.clients = [gradio_user(url) for _ in range(count)]
        self.url, self.sentences, self.per_client, self.errors = url, sentences, per_client, errors
        self.latencies, self.threads = [], []

    def translate(self, k: int):
        for i in range(self.per_client):
            sent = time.monotonic()
            try:
                self.clients[k].predict(self.sentences[k * self.per_client + i], 1, False, "pieces", *PICKS,
                                        api_name="/translate")
                self.latencies.append(time.monotonic() - sent)
            except Exception as error:  # noqa: BLE001
                self.errors[f"translate: {error}"[:120]] += 1

    def go(self):
        self.threads = [threading.Thread(target=self.translate, args=(k,), daemon=True) for k in range(len(self.clients))]
        for thread in self.threads:
            thread.start()

    def wait(self):
        for thread in self.threads:
            thread.join(timeout=600)


def new_sentences(count: int, seed: int) -> list[str]:
    """`count` test sentences no one has translated in this run (the app caches what it has)."""
    pairs = read_pairs(TEST_SET)
    return [pairs[i][0] for i in random.Random(seed).sample(range(len(pairs)), count)]


def connect(url: str, count: int) -> tuple:
    """The teacher (a gradio_client: opening a room translates, in the queue) and `count` browser sessions."""
    teacher = gradio_user(url)
    return teacher, [BrowserSession(url, teacher.config) for _ in range(count)]


def room_memory(english: int, french: int, voters: int) -> float:
    """Bytes one room holds with `voters` phones voting at every step, measured with tracemalloc."""
    # a clock that moves 100 s a call: each phone's vote bucket has refilled (this measures memory, not floods)
    rooms = classroom.Rooms(MemoryStore(), clock=itertools.count(0, 100).__next__, max_rooms=10, max_voters=voters,
                            idle_s=float("inf"))
    alpha = [[1 / english] * english for _ in range(french)]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    asyncio.run(vote_every_step(rooms, english, french, voters, alpha))
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return used


async def vote_every_step(rooms, english: int, french: int, voters: int, alpha):
    """A room opened on pieces of its own, every phone voting at every step."""
    code, key = await rooms.open([f"▁w{j}" for j in range(english)], [f"▁m{t}" for t in range(french)], alpha)
    for t in range(1, french + 1):
        for v in range(voters):
            await rooms.vote(code, f"phone-{v:06d}", t, v % english)
        if t < french:
            await rooms.next(code, key)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--url", help="a running app's address; without it, app.py is started on a free port")
    parser.add_argument("--students", type=int, default=60, help="phones in the room")
    parser.add_argument("--within", type=float, default=10.0, help="seconds in which every phone votes")
    parser.add_argument("--change", type=float, default=0.2, help="share of phones that change their vote once")
    parser.add_argument("--poll", type=float, default=POLL_S, help="seconds between the projector's polls")
    parser.add_argument("--phone-poll", type=float, default=PHONE_POLL_S, help="seconds between each phone's polls")
    parser.add_argument("--model", default="bahdanau-en-fr", help="the room's model")
    parser.add_argument("--sentence", default=SENTENCE, help="the room's sentence")
    parser.add_argument("--rooms", type=int, default=50, help="rooms opened afterwards to measure the server's memory")
    parser.add_argument("--translators", type=int, default=0,
                        help="others translating while the room votes (0: none); needs the script to start the app")
    parser.add_argument("--per-translator", type=int, default=3, help="new sentences each of them translates")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.translators and args.url:
        parser.error("--translators compares with a bare app this script starts: leave out --url")

    server = None if args.url else Server(ROOT / "app.py")
    url = args.url or server.url
    try:
        if args.translators:
            translate_beside_the_room(server, args)
        else:
            run(url, server, args)
    finally:
        if server:
            server.stop()


def translate_beside_the_room(server, args):
    """The room twice on the app, with others translating beside it: first against the echoing bare app
    (the floor, the room's load on the same machine), then against the app itself."""
    echo = Server(ROOT / "benchmarks" / "bare_app.py", env={"PYTHONPATH": str(ROOT)})
    try:
        n = args.translators * args.per_translator
        sentences = new_sentences(2 * n, args.seed)
        p95s = {}
        for name, url, batch in (("echo", echo.url, sentences[:n]), ("attn-demo", server.url, sentences[n:])):
            errors = Counter()
            translators = Translators(url, batch, args.translators, args.per_translator, errors)
            print(f"\n## the room, with {args.translators} others translating on {name}")
            run(server.url, server, args, translators)
            p95s[name] = p95(translators.latencies) if translators.latencies else float("nan")
            print(f"translate on {name} during the room: {quantiles(translators.latencies)}; "
                  f"errors {sum(errors.values())}" + "".join(f"\n  {k} × {m}" for m, k in errors.most_common()))
        print(f"\ntranslate during the room: p95 {p95s['attn-demo'] / p95s['echo']:.2f}× the echo's")
    finally:
        echo.stop()


def run(url: str, server, args, translators: Translators | None = None):
    """One room on `url`: the phones vote, the projector polls, the teacher reveals; `translators`, if
    given, start translating when the phones start voting."""
    rng, errors = random.Random(args.seed), Counter()
    full = room_memory(15, 16, classroom.MAX_VOTERS)  # before any client thread allocates beside it
    started = time.monotonic()
    teacher, (projector_client, *students) = connect(url, args.students + 1)
    print(f"{args.students + 2} clients connected in {time.monotonic() - started:.1f} s")
    code, key = teacher.predict(args.sentence, args.model, api_name="/class_open")
    pieces = len(teacher.predict(code, api_name="/class_state")["english"])
    projector = Projector(projector_client, code, args.poll, errors)
    start = time.monotonic() + 1
    phones = [Phone(client, code, f"bench-phone-{i:04d}", pieces, start, args, errors, rng) for i, client in enumerate(students)]
    cpu, own_cpu, wall = server.cpu_seconds() if server else None, time.process_time(), time.monotonic()
    projector.start()
    for phone in phones:
        phone.start()
    if translators:
        time.sleep(max(0.0, start - time.monotonic()))
        translators.go()
    for phone in phones:  # every vote answered, then polled twice since
        phone.voted.wait()
    time.sleep(2 * args.poll + 1)
    if translators:
        translators.wait()

    counted = teacher.predict(code, api_name="/class_tally")["counts"]
    expected = [0] * pieces
    for phone in phones:
        if phone.votes:
            expected[phone.votes[-1][0]] += 1
    revealed_sent = time.monotonic()
    teacher.predict(code, key, api_name="/class_reveal")
    deadline = revealed_sent + 10 * args.phone_poll + 10
    while time.monotonic() < deadline and any(phone.revealed_at is None for phone in phones):
        time.sleep(0.05)
    projector.running = False
    for phone in phones:
        phone.running = False
    calls = len(projector.polls) + sum(len(phone.polls) + len(phone.votes) for phone in phones) + 2
    cpu = server.cpu_seconds() - cpu if server else None
    own_cpu, wall = time.process_time() - own_cpu, time.monotonic() - wall

    delays = [shown - sent for phone in phones for _, sent, answered in phone.votes
              if (shown := projector.shown_at(answered)) is not None]
    votes_sent = sum(len(phone.votes) for phone in phones)
    reveal_delays = [phone.revealed_at - revealed_sent for phone in phones if phone.revealed_at is not None]
    print(f"room {code}: {args.students} phones, {votes_sent} votes accepted ({votes_sent - args.students} of them changes) "
          f"in {args.within:g} s; the projector polls every {args.poll:g} s, each phone every {args.phone_poll:g} s")
    print(f"every vote counted once: {counted == expected} (tally {sum(counted)} votes, phones' last votes {sum(expected)})")
    print(f"vote → projector: {quantiles(delays)}; {votes_sent - len(delays)} votes never polled after")
    print(f"reveal → phones: {quantiles(reveal_delays)}; {len(phones) - len(reveal_delays)} phones never saw it")
    vote_trips = [answered - sent for phone in phones for _, sent, answered in phone.votes]
    poll_trips = [received - sent for sent, received, _ in projector.polls]
    print(f"round trips: class_vote {quantiles(vote_trips)}; class_tally {quantiles(poll_trips)}; "
          f"class_state {quantiles([trip for phone in phones for trip in phone.polls])}")
    if cpu is not None and not (translators and translators.url == url):  # the room's calls alone
        print(f"server CPU: {cpu:.1f} s for {calls} calls, {1000 * cpu / calls:.1f} ms a call")
    busy = " (near one core: the round trips are the clients' own more than the server's)" if own_cpu > 0.8 * wall else ""
    print(f"the clients' CPU (this script, one Python process, the phones as browsers call): {own_cpu:.1f} s in {wall:.1f} s{busy}")
    print(f"errors: {sum(errors.values())}" + "".join(f"\n  {n} × {message}" for message, n in errors.most_common()))

    print(f"memory: a room of 15 English × 16 French pieces with {classroom.MAX_VOTERS} phones voting at every step holds "
          f"{full / 1024:.0f} KiB; at the bounds ({classroom.MAX_ROOMS} such rooms) {classroom.MAX_ROOMS * full / 2**20:.1f} MiB")
    if server and not translators:
        before = server.rss_mb()
        for _ in range(args.rooms):
            try:
                teacher.predict(args.sentence, args.model, api_name="/class_open")
            except Exception as error:  # noqa: BLE001
                errors[f"class_open: {error}"[:120]] += 1
                break
        print(f"server RSS: {before} MiB, {server.rss_mb()} MiB after opening {args.rooms} more rooms")


if __name__ == "__main__":
    main()
