"""App benchmarks: app.py run as a server, measured as its users meet it. Cold start and memory,
a classroom of gradio_client users translating with the picked models (translate alone, and the
page's whole flow: translate, then the events it sets off, AFTER_TRANSLATE) against two bare apps of
the same endpoints (benchmarks/: one echoing its input as one text, the framework's floor, and one
answering with the page's own outputs, computed once, which shows where the rest goes), a class
pressing one button together on a shared sentence (attribution, the beam, the alignment check), a
soak, and a step change in headless Chromium (benchmarks.server starts each app).
Run by `python -m benchmarks.bench`."""
import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
from playwright.sync_api import sync_playwright

from attn_demo.data.pairs import TEST_SET, read_pairs
from attn_demo.evaluation.timing import SENTENCES, percentiles
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.serving.catalogue import CHECKPOINTS
from attn_demo.translator import load_translator
from attn_demo.ui.translate import client_reply
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS, Server, gradio_user

ROOT = Path(__file__).resolve().parent.parent


def arrive(url: str, barrier: threading.Barrier, errors: list, lock: threading.Lock, ready=lambda client: None):
    """A gradio_client user connects (a page shows the link: nothing is downloaded), does ready(client),
    and waits for the whole class; None, with the error kept and the class let go, if it could not."""
    try:
        client = gradio_user(url)
        ready(client)
    except Exception as error:  # a client that cannot even connect is an error of the run
        with lock:
            errors.append(repr(error)[:200])
        barrier.abort()
        return None
    try:
        barrier.wait(timeout=300)
    except threading.BrokenBarrierError:
        pass
    return client


# The server events a translation sets off on the page, after translate and in the order its browser
# sends them: the step data with the trace file, the explorer forgetting the last translation's beam,
# and the quiz's questions about the new one. None decodes, and the page sends each outside the queue
# (one HTTP POST); tests/ui/test_browser.py checks this list against what the page sends.
AFTER_TRANSLATE = ("step_data", "explore_forget", "quiz_questions")


def send_outside_the_queue(client, api_name: str) -> list:
    """Call an endpoint whose inputs the session holds as the page's browser does for an event outside
    the queue (queue=False): one POST to run/predict, which gradio_client never sends (it always queues)."""
    dependency = next(d for d in client.config["dependencies"] if d["api_name"] == api_name)
    body = {"data": [None] * len(dependency["inputs"]), "event_data": None, "fn_index": dependency["id"],
            "session_hash": client.session_hash}
    response = httpx.post(f"{client.src_prefixed}run/predict", json=body, timeout=600)
    response.raise_for_status()
    return response.json()["data"]


def classroom_load(url: str, sentences: list[str], expected: dict, clients: int, per_client: int, picks=(),
                   answer=lambda reply: reply, flow: bool = True, cpu_seconds=lambda: 0.0) -> dict:
    """`clients` gradio_client users at once, each translating `per_client` different sentences with
    the picked models, and with `flow` as the page goes on (AFTER_TRANSLATE, as the browser sends them), and
    checking that every translation is that of the sentence it sent: answer(reply) must equal
    expected[text]. A request's latency is its calls together. cpu_seconds() (the server's) is read
    once the whole class has connected and again at the end: "cpu_s", the requests' own; "clients_cpu_s" is
    this process's over the same span, the students' (on a one-machine benchmark they share the server's cores)."""
    latencies, errors, mixed, lock = [], [], [], threading.Lock()
    connected = []
    barrier = threading.Barrier(clients, action=lambda: connected.append((cpu_seconds(), time.process_time())))

    def student(k: int):
        client = arrive(url, barrier, errors, lock)
        if client is None:
            return
        for i in range(per_client):
            text = sentences[(k * per_client + i) % len(sentences)]
            start = time.perf_counter()
            try:
                reply = client.predict(text, 1, False, "pieces", *picks, api_name="/translate")
                if flow:
                    for api_name in AFTER_TRANSLATE:
                        send_outside_the_queue(client, api_name)
            except Exception as error:
                with lock:
                    errors.append(repr(error)[:200])
                continue
            elapsed = 1000 * (time.perf_counter() - start)
            with lock:
                latencies.append(elapsed)
                if answer(reply) != expected[text]:
                    mixed.append(text)

    start = time.perf_counter()
    threads = [threading.Thread(target=student, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=1800)
    return {"clients": clients, "requests": clients * per_client, "latencies_ms": latencies, "errors": errors,
            "mixed_up": len(mixed), "seconds": time.perf_counter() - start,
            "cpu_s": cpu_seconds() - connected[0][0] if connected else 0.0,
            "clients_cpu_s": time.process_time() - connected[0][1] if connected else 0.0}


def pooled(rounds: list[dict]) -> dict:
    """One summary of several rounds of the same load: counts add up, percentiles over all replies."""
    latencies = [ms for r in rounds for ms in r["latencies_ms"]]
    errors, seconds = [e for r in rounds for e in r["errors"]], sum(r["seconds"] for r in rounds)
    return {"rounds": len(rounds), "clients": rounds[0]["clients"], "requests": sum(r["requests"] for r in rounds),
            "answered": len(latencies), "errors": len(errors), "mixed_up": sum(r["mixed_up"] for r in rounds),
            "seconds": round(seconds, 1), "requests_per_s": round(len(latencies) / seconds, 2),
            **{k.replace("median", "p50"): v for k, v in (percentiles(latencies) if latencies else {}).items()},
            "first_errors": errors[:3]}


# The buttons a teacher has a whole class press at once, after everyone translated the same sentence:
# each as gradio_client calls it (the session's sentence is held in the session, not sent in the call).
# Translate is pressed on another sentence, new to the app, that the teacher reads out.
CLASS_PRESSES = {
    "translate": lambda client, picks: client.predict(SENTENCES[30], 1, False, "pieces", *picks, api_name="/translate"),
    "attribution": lambda client, picks: client.predict("integrated-gradients", False, "pieces", api_name="/attribute"),
    "beam": lambda client, picks: client.predict(picks[0], 5, 5, False, api_name="/explore_beam"),
    "alignment check": lambda client, picks: client.predict(1, False, *picks, api_name="/alignment_check"),
}


def class_press(url: str, sentence: str, clients: int, picks, press) -> dict:
    """`clients` gradio_client users translate the same sentence with the picked models, wait for
    each other, then press one button together (press(client, picks), one of CLASS_PRESSES): the
    latency of that press, its errors, and whether every client got the same reply (they asked the
    same question of the same models)."""
    latencies, errors, replies, lock = [], [], [], threading.Lock()
    barrier = threading.Barrier(clients)

    def student():
        translate = lambda client: client.predict(sentence, 1, False, "pieces", *picks, api_name="/translate")  # noqa: E731
        client = arrive(url, barrier, errors, lock, translate)
        if client is None:
            return
        start = time.perf_counter()
        try:
            reply = press(client, picks)
        except Exception as error:
            with lock:
                errors.append(repr(error)[:200])
            return
        with lock:
            latencies.append(1000 * (time.perf_counter() - start))
            replies.append(json.dumps(reply, sort_keys=True, default=str))

    threads = [threading.Thread(target=student) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=1800)
    return {"clients": clients, "answered": len(latencies), "errors": len(errors), "first_errors": errors[:3],
            "distinct_replies": len(set(replies)), **({k.replace("median", "p50"): v for k, v in percentiles(latencies).items()}
                                                    if latencies else {})}


def soak(url: str, sentences: list[str], requests: int, picks) -> int:
    client = gradio_user(url)
    for i in range(requests):
        client.predict(sentences[i % len(sentences)], 1, False, "pieces", *picks, api_name="/translate")
    return requests


# Armed before each key press: from the keydown, check every frame whether the given slots' step
# views and captions show step k; the frame after the one that first shows it has been painted.
ARM_STEP_TIMER = """([k, slots]) => {
  window.attnStepMs = null;
  const text = (selector) => document.querySelector(selector).textContent.replaceAll("\u200b", "");  // Plotly's spacers
  const title = (slot) => text(`#${slot} .attn-step-title`);  // a GRU model's, the baseline's, or a Transformer head's
  const shows = (slot) => (["how c" + k + " is", "step " + k + " reads"].some((t) => title(slot).includes(t))
                           || title(slot).endsWith("at step " + k)) && text(`#${slot} .attn-step-caption`).includes(`Step ${k} of`);
  document.addEventListener("keydown", () => {
    const start = performance.now();
    const check = () => slots.every(shows)
      ? requestAnimationFrame(() => { window.attnStepMs = performance.now() - start; })
      : requestAnimationFrame(check);
    requestAnimationFrame(check);
  }, { once: true, capture: true });
}"""
TRANSLATE_SLOTS, EXPLORE_SLOTS = ("left-step", "right-step"), ("explore-hypothesis-step", "explore-what-if-step")
# Armed before each key press on "Watch it learn"'s slider: from the keydown, check every frame whether
# both sides' status lines have changed; the frame after the one that first shows it has been painted.
ARM_LEARN_TIMER = """() => {
  window.attnLearnMs = null;
  const status = () => [...document.querySelectorAll("#learn-view .attn-learn-status")].map((e) => e.textContent).join("|");
  const before = status();
  document.addEventListener("keydown", () => {
    const start = performance.now();
    const check = () => status() !== before
      ? requestAnimationFrame(() => { window.attnLearnMs = performance.now() - start; })
      : requestAnimationFrame(check);
    requestAnimationFrame(check);
  }, { once: true, capture: true });
}"""


def shows_step_one(slots) -> str:
    """A wait_for_function body: every slot's caption shows step 1."""
    return (f"() => {json.dumps(list(slots))}.every((slot) => (document.querySelector(`#${{slot}} .attn-step-caption`) "
            "|| {}).textContent?.includes('Step 1 of'))")


def time_presses(page, slider: str, slots, presses: int) -> list[float]:
    """Focus a step slider and press ArrowRight, timing each press until its slots show the new step."""
    steps = min(int(page.locator(f"#{slot} .attn-step-caption").text_content().split(" of ")[1].split()[0])
                for slot in slots)  # "Step 1 of T": past T, a view shows its last step
    page.locator(f"#{slider} input[type=range]").focus()
    samples = []
    for k in range(2, min(presses + 2, steps + 1)):
        page.evaluate(ARM_STEP_TIMER, [k, list(slots)])
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => window.attnStepMs !== null", timeout=30_000)
        samples.append(page.evaluate("() => window.attnStepMs"))
    return samples


def step_change_ms(url: str, presses: int, picks, words: int = 15) -> list[dict]:
    """A step change as a teacher makes it, in headless Chromium (1440×900): a sentence translated by
    the picked models on the page, the step slider focused, one ArrowRight; the time from the key
    press to the frame after both step views and both captions show the new step. Then the same in
    the explorer, once the beam is shown and a piece changed: its hypothesis and what-if views."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url, wait_until="load")
        page.locator("#right-grid .js-plotly-plot").wait_for(timeout=60_000)  # the interactive page, not its first view
        for side, key in zip(("left", "right"), picks):
            page.locator(f"#{side}-model input").fill(key)
            page.get_by_role("option", name=key, exact=False).first.click()
        page.get_by_role("textbox", name="English sentence").fill(SENTENCES[words])
        page.get_by_role("button", name="Translate").click()
        # the step views of this sentence, not of the opening example (which shows step 1 too)
        word = max(SENTENCES[words].strip(".,!?").split(), key=len)
        page.wait_for_function(f"() => (window.attnSteps.group('translate-steps').payload?.views[0].source.join('') || '')"
                               f".includes({json.dumps(word)})", timeout=60_000)
        page.wait_for_function(shows_step_one(TRANSLATE_SLOTS), timeout=60_000)
        translate = time_presses(page, "translate-steps-slider", TRANSLATE_SLOTS, presses)
        heads = time_head_changes(page, presses)
        page.get_by_role("button", name="Show the beam").click()
        page.locator("#explore-hypothesis-step .attn-step-view").wait_for(timeout=60_000)
        page.get_by_role("button", name="The model's choices at this step").click()
        page.locator("#explore-piece label").nth(1).click()
        page.get_by_role("button", name="Change the piece and go on").click()
        page.wait_for_function(shows_step_one(EXPLORE_SLOTS), timeout=60_000)
        explore = time_presses(page, "explore-steps-slider", EXPLORE_SLOTS, presses)
        learn = time_learn_presses(page, presses)
        browser.close()
    return [{"where": where, **percentiles(samples)}
            for where, samples in (("translate", translate), *heads, ("explorer", explore), ("watch it learn", learn))
            if samples]


# A head picked with a side's Head control (heads_view.js): from the change to the frame after its step view and its
# grid show it (both drawn in the browser), and to the frame after the grid's note does (the server's redraw, side_grid)
TIME_HEAD_CHANGE = """async ([side, value, name]) => {
  const frame = () => new Promise(requestAnimationFrame);
  const text = (selector) => (document.querySelector(selector)?.textContent || "").replaceAll("\u200b", "").toLowerCase();
  const select = document.getElementById(`${side}-heads-head`);
  const start = performance.now();
  select.value = value;
  select.dispatchEvent(new Event("change"));
  while (!text(`#${side}-step .attn-step-title`).includes(name) || !text(`#${side}-grid .gtitle`).includes(name)
         || !text(`#${side}-coverage .coverage-pick:not([hidden])`).includes(name)) await frame();
  await frame();
  return performance.now() - start;
}"""


def time_head_changes(page, presses: int) -> list[tuple[str, list[float]]]:
    """For each side with a Transformer, its Head control moved head by head (layer as shown): the times to its grid,
    note, coverage row and views drawn, as (where, samples) rows; none for a page of GRU models."""
    rows = []
    for side in ("left", "right"):
        select = page.locator(f"#{side}-heads-head")
        if not select.count():
            continue
        layer = int(page.locator(f"#{side}-heads-layer").input_value()) + 1
        heads = [value for value in select.evaluate("(s) => [...s.options].map((o) => o.value)") if value != "mean"]
        samples = [page.evaluate(TIME_HEAD_CHANGE, [side, heads[k % len(heads)],
                                                    f"layer {layer}, head {int(heads[k % len(heads)]) + 1}"])
                   for k in range(presses)]
        rows.append((f"{side}: head change", samples))
    return rows


def time_learn_presses(page, presses: int) -> list[float]:
    """Watch it learn with the picked models and the long example: from the first training point, one
    ArrowRight a point, timed until both sides show it. None if neither model has a timeline."""
    page.get_by_label("Sentence", exact=True).click()
    page.get_by_role("option", name=LONG_EXAMPLE).click()
    page.wait_for_function(f"() => window.attnLearn.view('learn-view').payload?.sides[0].points[0]?.source === "
                           f"{json.dumps(LONG_EXAMPLE)} || window.attnLearn.view('learn-view').payload?.positions.length === 1",
                           timeout=60_000)
    points = page.evaluate("() => window.attnLearn.view('learn-view').payload.positions.length")
    slider = page.locator("#learn-view-slider input[type=range]")
    slider.focus()
    page.keyboard.press("Home")
    samples = []
    for _ in range(min(presses, points - 1)):
        page.evaluate(ARM_LEARN_TIMER)
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => window.attnLearnMs !== null", timeout=30_000)
        samples.append(page.evaluate("() => window.attnLearnMs"))
    return samples


# The apps the classroom load compares: app.py and the bare apps of its endpoints (benchmarks/)
CLASSROOM_APPS = {"echo": ROOT / "benchmarks" / "bare_app.py", "outputs": ROOT / "benchmarks" / "bare_outputs_app.py",
                  "app": ROOT / "app.py"}
CALLS = {"translate": False, "flow": True}  # translate alone, or the page's whole flow (classroom_load's flow)
# what the classroom table prints of each row, and under which heading (the JSON keeps all of it)
CLASSROOM_COLUMNS = {"calls": "calls", "app": "app", "answered": "answered", "errors": "errors", "mixed_up": "mixed_up",
                     "p50_ms": "p50_ms", "p95_ms": "p95_ms", "server_cpu_ms_per_request": "server CPU ms / request",
                     "clients_cpu_ms_per_request": "clients' CPU ms / request",
                     "server_cpu_ms_per_connection": "server CPU ms / connection", "p95_to_echo": "p95 / echo's"}


def classroom_table(rows: list[dict]) -> list[dict]:
    """The classroom load's rows as its table prints them: CLASSROOM_COLUMNS, latencies in whole milliseconds."""
    shown = lambda key, value: round(value) if key in ("p50_ms", "p95_ms") and value is not None else value  # noqa: E731
    return [{heading: shown(key, row.get(key)) for key, heading in CLASSROOM_COLUMNS.items()} for row in rows]


def classroom_inputs(picks: tuple[str, str], p: dict) -> tuple[list[str], dict]:
    """New test sentences for every round of the classroom load, and what each app's translation of
    a text is and how it reads from the reply (classroom's `answers`)."""
    pairs = read_pairs(TEST_SET)
    rng = np.random.default_rng(1)
    n = p["clients"] * p["requests_per_client"]
    sentences = [pairs[i][0] for i in rng.choice(len(pairs), n * p["rounds"] * len(CALLS), replace=False)]
    left = load_translator(CHECKPOINTS / picks[0])
    expected = {text: left.translate(text).text for text in [*sentences, EXAMPLES[0]]}
    left_text = lambda reply: client_reply(reply)["left"]["text"]  # noqa: E731
    answers = {"echo": (lambda text: text, lambda reply: reply),  # what each app's translation of a text is, and how it reads
               "outputs": (lambda text: expected[EXAMPLES[0]], left_text),  # every request answered with the first example's
               "app": (lambda text: expected[text], left_text)}
    return sentences, answers


@contextmanager
def classroom_apps(picks: tuple[str, str], students_apart: bool = False):
    """Every app of CLASSROOM_APPS running, by name, for the length of the with-block. With students_apart, the
    servers run on this process's first core and its students (this process's threads) on the others (Linux)."""
    servers, students_cores = {}, os.sched_getaffinity(0) if students_apart else None
    try:
        for name, script in CLASSROOM_APPS.items():
            servers[name] = Server(script, env={"BENCH_PICKS": " ".join(picks), "PYTHONPATH": str(ROOT)})  # benchmarks/ imports attn_demo
        if students_apart:
            server_core, *others = sorted(students_cores)
            for server in servers.values():
                pin(server.process.pid, {server_core})
            pin(os.getpid(), set(others))
        yield servers
    finally:
        if students_apart:
            pin(os.getpid(), students_cores)
        for server in servers.values():
            server.stop()


def cores_to_set_apart() -> int:
    """The cores this process may run on, where the system lets a process choose them (Linux); else 0."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0


def pin(pid: int, cores: set[int]) -> None:
    """Every thread of process `pid` on `cores`; the threads they start later inherit it (Linux)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), cores)
        except ProcessLookupError:  # a thread that ended meanwhile
            pass


def bench_classroom(picks: tuple[str, str], p: dict, students_apart: bool = False) -> list[dict]:
    """The classroom load alone (`--sections classroom`): to restate the floor after a change without
    the rest of the app's benchmarks; with students_apart, the servers and the students on cores of their own."""
    sentences, answers = classroom_inputs(picks, p)
    with classroom_apps(picks, students_apart) as servers:
        return classroom(servers, sentences, answers, picks, p)


def bench_steps(pairs: list[tuple[str, str]], p: dict) -> list[dict]:
    """The step change, a Transformer's head change and the explorer's and Watch it learn's step changes in the
    browser (step_change_ms), for each pair of models on one app.py started here: the pairs timed in the same run,
    so that an hour's drift slows them alike. A row per pair and view."""
    server = Server(ROOT / "app.py")
    try:
        return [{"models": " + ".join(pair), **row} for pair in pairs for row in step_change_ms(server.url, p["step_presses"], pair)]
    finally:
        server.stop()


def bench_app(picks: tuple[str, str], p: dict) -> dict:
    """Cold start and peak memory of app.py, the classroom load against it (with the picked models)
    and against the bare apps, translate alone and the whole flow, and RSS before/after a soak of many requests."""
    sentences, answers = classroom_inputs(picks, p)
    with classroom_apps(picks) as servers:
        app = servers["app"]
        result = {"picks": list(picks), "cold_start_s": round(app.startup_s, 2), "rss_after_start_mb": app.rss_mb(),
                  "step_change": step_change_ms(app.url, p["step_presses"], picks),
                  "class_press": [{"button": name, **class_press(app.url, SENTENCES[20], p["press_clients"], picks, press)}
                                  for name, press in CLASS_PRESSES.items()]}  # a fresh 20-word sentence: nothing cached
        result["classroom"] = classroom(servers, sentences, answers, picks, p)
        result["peak_rss_mb"] = app.rss_mb("VmHWM")
        before = app.rss_mb()
        result["soak_requests"] = soak(app.url, sentences, p["soak"], picks)
        result["soak_rss_before_mb"], result["soak_rss_after_mb"] = before, app.rss_mb()
    return result


def classroom(servers: dict, sentences: list[str], answers: dict, picks, p: dict) -> list[dict]:
    """The classroom load on every app of CLASSROOM_APPS, translate alone and the whole flow: a row
    per (calls, app), with its p95 against the echoing app's (the floor) and the server's own CPU
    per request. Rounds alternate the apps, so that all see the same drift of a shared machine; each
    round brings new sentences, none in the app's cache yet."""
    n = p["clients"] * p["requests_per_client"]
    rounds = {(calls, name): [] for calls in CALLS for name in servers}
    connecting = dict.fromkeys(rounds, 0.0)
    for r in range(p["rounds"]):
        for c, (calls, flow) in enumerate(CALLS.items()):
            batch = sentences[(r * len(CALLS) + c) * n:(r * len(CALLS) + c + 1) * n]
            for name, server in servers.items():
                expected, answer = answers[name]
                before = server.cpu_seconds()
                load = classroom_load(server.url, batch, {text: expected(text) for text in batch}, p["clients"],
                                      p["requests_per_client"], picks, answer, flow, server.cpu_seconds)
                rounds[calls, name].append(load)
                connecting[calls, name] += server.cpu_seconds() - before - load["cpu_s"]
    rows = []
    for (calls, name), done in rounds.items():
        row = {"calls": calls, "app": name, **pooled(done)}
        # the server's own CPU: per request once the class is connected, and per student connecting (the page's config)
        row["server_cpu_ms_per_request"] = round(1000 * sum(load["cpu_s"] for load in done) / (n * p["rounds"]), 1)
        row["clients_cpu_ms_per_request"] = round(1000 * sum(load["clients_cpu_s"] for load in done) / (n * p["rounds"]), 1)
        row["server_cpu_ms_per_connection"] = round(1000 * connecting[calls, name] / (p["clients"] * p["rounds"]), 1)
        floor = pooled(rounds[calls, "echo"]).get("p95_ms")
        row["p95_to_echo"] = round(row["p95_ms"] / floor, 2) if floor and row.get("p95_ms") else None
        rows.append(row)
    return rows
