"""Benchmarks: latency, a naive reference decoder, a decode step against the memory roofline,
batched throughput, figure cost, cold start and a classroom load test of the running app.

    python -m attn_demo.bench [--quick] [--json OUT]

Prints a table per section and writes every figure, with the machine, to --json. --quick runs
each section small (a smoke test for CI, well under a minute of work); its numbers mean nothing.
"""
import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from attn_demo.data import TEST_SET, read_pairs
from attn_demo.figures import alignment_figure
from attn_demo.steps import pca_projection, step_payload
from attn_demo.search import max_target_length
from attn_demo.translator import load_translator

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"bahdanau": ROOT / "checkpoints" / "bahdanau-en-fr", "luong": ROOT / "checkpoints" / "luong-en-fr"}
SENTENCES = {
    5: "The cat is very old.",
    15: "My brother and I went to the market this morning to buy some fresh bread.",
    30: ("When we arrived at the station last night, the last train had already left, so we had to "
         "walk all the way home in the cold rain."),
}
FULL = dict(runs=30, warmup=5, step_runs=300, batch_sizes=(1, 8, 32), batches=5, clients=60, requests_per_client=5, rounds=3,
            soak=1000, step_presses=15)
QUICK = dict(runs=3, warmup=1, step_runs=5, batch_sizes=(1, 8), batches=1, clients=4, requests_per_client=2, rounds=1, soak=20,
             step_presses=3)


def percentiles(samples_ms) -> dict:
    ordered = sorted(samples_ms)
    return {"median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
            "max_ms": round(ordered[-1], 2), "n": len(ordered)}


def timed(fn, runs: int, warmup: int) -> dict:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(1000 * (time.perf_counter() - start))
    return percentiles(samples)


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    device = "cuda: " + torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "device": device, "python": platform.python_version()}


def naive_greedy(translator, text: str) -> list[int]:
    """Decoding as tutorials write it: one sentence, the per-sentence memory (attention keys, or
    the fixed c without attention) recomputed at every step, autograd left on, a Python int pulled
    out at every step."""
    model, cfg = translator.model, translator.config
    src = torch.tensor([translator.encode(text)], device=translator.device)
    annotations, backward_first = model.encoder(src, torch.tensor([src.size(1)]))
    state = torch.tanh(model.decoder.init(backward_first))
    y, tokens = torch.tensor([cfg.bos_id], device=translator.device), []
    for _ in range(int(max_target_length(torch.tensor(src.size(1))))):
        memory = model.decoder.memory(annotations, backward_first, src != cfg.pad_id)  # the same every step, recomputed anyway
        step = model.decoder.step(y, state, memory)
        y = step.logits.argmax(-1)
        tokens.append(int(y))
        state = step.state
        if tokens[-1] == cfg.eos_id:
            return tokens
    tokens[-1] = cfg.eos_id  # the length limit ends the sentence, as in attn_demo.search
    return tokens


def bench_latency(translators, p) -> list[dict]:
    rows = []
    for name, translator in translators.items():
        for words, text in SENTENCES.items():
            for beam in (1, 5):
                stats = timed(lambda: translator.translate(text, beam_size=beam), p["runs"], p["warmup"])
                rows.append({"model": name, "words": words, "beam": beam, **stats})
    return rows


def arithmetic(fn) -> int:
    """Floating-point operations fn() runs (matrix products, as counted by torch)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def bench_naive(translators, p) -> list[dict]:
    """Ours against the naive reference. flops_ratio (naive / ours) bounds the speedup that
    skipping its extra work can bring, unless the naive code also runs slower per operation."""
    rows = []
    for name, translator in translators.items():
        for words, text in SENTENCES.items():
            naive_tokens = translator.target_tokenizer.pieces(naive_greedy(translator, text))
            identical = naive_tokens == translator.translate(text).target_tokens
            ours = timed(lambda: translator.translate(text), p["runs"], p["warmup"])
            naive = timed(lambda: naive_greedy(translator, text), p["runs"], p["warmup"])
            flops_ratio = arithmetic(lambda: naive_greedy(translator, text)) / arithmetic(lambda: translator.translate(text))
            rows.append({"model": name, "words": words, "ours_median_ms": ours["median_ms"],
                         "naive_median_ms": naive["median_ms"], "speedup": round(naive["median_ms"] / ours["median_ms"], 2),
                         "flops_ratio": round(flops_ratio, 2), "identical_output": identical})
    return rows


def wait_for(device: torch.device):
    """CUDA and MPS run asynchronously: a timing must wait until the queued work is done."""
    if device.type != "cpu":
        torch.accelerator.synchronize(device)


def memory_bandwidth(device: torch.device, p) -> float:
    """Read bandwidth from main memory in GB/s, as a batch-1 decode step uses it: the median time
    to sum a 256 MB float32 buffer, far larger than any last-level cache (32 MB on the CI machine),
    so every byte comes from memory. The sum reads each number once and writes nothing, like a
    matrix-vector product streaming its weights, and runs on this process's threads, as the decoder does."""
    buffer = torch.ones(64 * 2**20, device=device)  # 256 MB
    seconds = timed(lambda: (buffer.sum(), wait_for(device)), p["runs"], p["warmup"])["median_ms"] / 1000
    return buffer.nbytes / seconds / 1e9


def first_step_inputs(translator, sources: list[list[int]]):
    """What greedy search hands the decoder's first step for these source ids (EOS last), padded
    as translate_batch pads them: y = BOS (B,), s_0 (B, H) and the memory."""
    memory = translator.encode_batch(sources)
    return torch.full((len(sources),), translator.config.bos_id, device=translator.device), memory.init_state, memory


def step_weight_bytes(translator) -> int:
    """Bytes of the weights one decoder step reads: the parameters its logits are computed from,
    the memory being fixed. That is the GRU, the query side of attention (W_s and v of the additive
    scores, U of the low-rank one; the general and dot scores need none), the readout (W_o or W_c),
    the output bias and the whole target embedding table, which the tied output layer reads; the
    B rows the step looks up lie in that table and are counted with it. Not counted: what is
    computed once per sentence (keys W_h h_j, W h_j, V h_j and s_0 = tanh(W_init ←h_1)), nor the
    memory and activations, which grow with the batch."""
    with torch.no_grad():  # the memory is built once, before decoding: its weights are not the step's
        y, state, memory = first_step_inputs(translator, [[translator.config.eos_id]])
    logits = translator.model.decoder.step(y, state, memory).logits
    weights = list(translator.model.decoder.parameters())
    grads = torch.autograd.grad(logits.sum(), weights, allow_unused=True)  # None: the step never read it
    return sum(w.nbytes for w, grad in zip(weights, grads) if grad is not None)


@torch.inference_mode()
def median_step_ms(translator, sources: list[list[int]], p) -> float:
    """Median milliseconds of one decoder step on this batch, called as greedy_search calls it."""
    y, state, memory = first_step_inputs(translator, sources)

    def step():
        translator.model.decoder.step(y, state, memory)
        wait_for(translator.device)

    return timed(step, p["step_runs"], p["warmup"])["median_ms"]


def bench_roofline(translators, p) -> list[dict]:
    """A decode step at batch 1 and 32 against the time to read its weights once at the bandwidth
    measured just before: roofline_ratio 1.0 is a step at the memory roof; above it the time goes
    to something else (arithmetic, which grows with the batch, or overhead per operation)."""
    fifteen_words = [en for en, _ in read_pairs(TEST_SET) if len(en.split()) == 15]
    batch_32 = np.random.default_rng(2).choice(fifteen_words, 32, replace=False).tolist()
    rows = []
    for name, translator in translators.items():
        weight_bytes, bandwidth = step_weight_bytes(translator), memory_bandwidth(translator.device, p)
        read_ms = 1000 * weight_bytes / (bandwidth * 1e9)
        for texts in ([SENTENCES[15]], batch_32):
            ms = median_step_ms(translator, [translator.encode(text) for text in texts], p)
            rows.append({"model": name, "batch": len(texts), "step_ms": ms, "weight_MB": round(weight_bytes / 1e6, 2),
                         "bandwidth_GBps": round(bandwidth, 1), "read_time_ms": round(read_ms, 3),
                         "roofline_ratio": round(ms / read_ms, 2), "step_ms_per_sentence": round(ms / len(texts), 3)})
    return rows


def bench_throughput(translators, p) -> list[dict]:
    sentences = [en for en, _ in read_pairs(TEST_SET)]
    rng = np.random.default_rng(0)
    rows = []
    for name, translator in translators.items():
        for batch in p["batch_sizes"]:
            chunks = [[sentences[i] for i in rng.choice(len(sentences), batch, replace=False)] for _ in range(p["batches"])]
            translator.translate_batch(chunks[0])
            start = time.perf_counter()
            for chunk in chunks:
                translator.translate_batch(chunk)
            seconds = time.perf_counter() - start
            rows.append({"model": name, "batch": batch, "sentences_per_s": round(batch * len(chunks) / seconds, 1)})
    return rows


def request_figures(results) -> tuple[list, list]:
    """Everything the page draws for one translation: the two grids (the /translate reply) and
    every step of both models (the /step_data reply, which the browser scrubs through alone)."""
    grids, steps = [], []
    for result in results:
        grids.append(alignment_figure(result.source_tokens, result.target_tokens, result.attention, "grid"))
        steps.append(step_payload("model", result.source_tokens, result.target_tokens, result.query_symbol, result.queries,
                                  result.scores, result.attention, result.encoder_states, result.contexts,
                                  pca_projection(result.encoder_states)))
    return grids, steps


def request_json(results) -> tuple[str, str]:
    grids, steps = request_figures(results)
    return "".join(figure.to_json() for figure in grids), json.dumps(steps)


def bench_figures(translators, p) -> list[dict]:
    rows = []
    for words in (15, 30):
        results = [t.translate(SENTENCES[words]) for t in translators.values()]
        build = timed(lambda: request_figures(results), p["runs"], p["warmup"])
        serialise = timed(lambda: request_json(results), p["runs"], p["warmup"])
        grids, steps = (len(text.encode()) for text in request_json(results))
        rows.append({"words": words, "steps": max(len(r.target_tokens) for r in results),
                     "build_median_ms": build["median_ms"], "build_and_json_median_ms": serialise["median_ms"],
                     "json_kB": round((grids + steps) / 1000, 1), "grids_kB": round(grids / 1000, 1),
                     "all_steps_kB": round(steps / 1000, 1), "kB_per_step_moved": 0})
    return rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def classroom_load(url: str, sentences: list[str], expected: dict, clients: int, per_client: int) -> dict:
    """`clients` gradio_client users at once, each sending `per_client` different sentences and
    checking that every reply is the translation of the sentence it sent."""
    from gradio_client import Client

    latencies, errors, mixed, lock = [], [], [], threading.Lock()
    barrier = threading.Barrier(clients)

    def student(k: int):
        try:
            client = Client(url, verbose=False)
        except Exception as error:  # a client that cannot even connect is an error of the run
            with lock:
                errors.append(repr(error))
            barrier.abort()
            return
        try:
            barrier.wait(timeout=300)
        except threading.BrokenBarrierError:
            pass
        for i in range(per_client):
            text = sentences[(k * per_client + i) % len(sentences)]
            start = time.perf_counter()
            try:
                reply = client.predict(text, 1, False, api_name="/translate")
            except Exception as error:
                with lock:
                    errors.append(repr(error)[:200])
                continue
            elapsed = 1000 * (time.perf_counter() - start)
            answer = reply if isinstance(reply, str) else reply[1]
            with lock:
                latencies.append(elapsed)
                if answer != expected[text]:
                    mixed.append(text)

    start = time.perf_counter()
    threads = [threading.Thread(target=student, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=1800)
    return {"clients": clients, "requests": clients * per_client, "latencies_ms": latencies, "errors": errors,
            "mixed_up": len(mixed), "seconds": time.perf_counter() - start}


def pooled(rounds: list[dict]) -> dict:
    """One summary of several rounds of the same load: counts add up, percentiles over all replies."""
    latencies = [ms for r in rounds for ms in r["latencies_ms"]]
    errors, seconds = [e for r in rounds for e in r["errors"]], sum(r["seconds"] for r in rounds)
    return {"rounds": len(rounds), "clients": rounds[0]["clients"], "requests": sum(r["requests"] for r in rounds),
            "answered": len(latencies), "errors": len(errors), "mixed_up": sum(r["mixed_up"] for r in rounds),
            "seconds": round(seconds, 1), "requests_per_s": round(len(latencies) / seconds, 2),
            **{k.replace("median", "p50"): v for k, v in (percentiles(latencies) if latencies else {}).items()},
            "first_errors": errors[:3]}


def soak(url: str, sentences: list[str], requests: int) -> int:
    from gradio_client import Client

    client = Client(url, verbose=False)
    for i in range(requests):
        client.predict(sentences[i % len(sentences)], 1, False, api_name="/translate")
    return requests


CHROMIUM = "/usr/bin/chromium"  # Debian's; driven by Playwright (a dev requirement)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update"]
# Armed before each key press: from the keydown, check every frame whether both models' step views
# and captions show step k; the frame after the one that first shows it has been painted.
ARM_STEP_TIMER = """(k) => {
  window.attnStepMs = null;
  const text = (selector) => document.querySelector(selector).textContent.replaceAll("\u200b", "");  // Plotly's spacers
  const shows = (name) => text(`#${name}-step`).includes(`how c${k} is formed`)
    && text(`#${name}-caption`).includes(`Step ${k} of`);
  document.addEventListener("keydown", () => {
    const start = performance.now();
    const check = () => shows("bahdanau") && shows("luong")
      ? requestAnimationFrame(() => { window.attnStepMs = performance.now() - start; })
      : requestAnimationFrame(check);
    requestAnimationFrame(check);
  }, { once: true, capture: true });
}"""


def step_change_ms(url: str, presses: int, words: int = 15) -> dict:
    """A step change as a teacher makes it: a translated sentence on the page (1440×900), the step
    slider focused, one ArrowRight; the time from the key press to the frame after both step views
    and both captions show the new step, in headless Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url, wait_until="load")
        page.get_by_role("textbox", name="English sentence").fill(SENTENCES[words])
        page.get_by_role("button", name="Translate").click()
        page.wait_for_function("() => (document.querySelector('#luong-caption') || {}).textContent?.includes('Step 1 of')",
                               timeout=60_000)
        steps = min(int(page.locator(f"#{name}-caption").text_content().split(" of ")[1].split()[0])
                    for name in ("bahdanau", "luong"))  # "Step 1 of T": past T, a model shows its last step
        page.locator("#step-slider input[type=range]").focus()
        samples = []
        for k in range(2, min(presses + 2, steps + 1)):
            page.evaluate(ARM_STEP_TIMER, k)
            page.keyboard.press("ArrowRight")
            page.wait_for_function("() => window.attnStepMs !== null", timeout=30_000)
            samples.append(page.evaluate("() => window.attnStepMs"))
        browser.close()
    return {"words": words, "presses": presses, **percentiles(samples)}


def bench_app(translators, p) -> dict:
    """Cold start and peak memory of app.py, the classroom load against it and against a bare
    app, and RSS before/after a soak of many requests."""
    pairs = read_pairs(TEST_SET)
    rng = np.random.default_rng(1)
    n = p["clients"] * p["requests_per_client"]
    sentences = [pairs[i][0] for i in rng.choice(len(pairs), n * p["rounds"], replace=False)]
    expected = {text: translators["bahdanau"].translate(text).text for text in sentences}
    result, rounds = {}, {"bare": [], "app": []}
    bare = Server(ROOT / "benchmarks" / "bare_app.py")
    try:
        app = Server(ROOT / "app.py")
    except Exception:
        bare.stop()
        raise
    try:
        result["cold_start_s"] = round(app.startup_s, 2)
        result["rss_after_start_mb"] = app.rss_mb()
        result["step_change"] = step_change_ms(app.url, p["step_presses"])
        cpu = {"bare": 0.0, "app": 0.0}
        for r in range(p["rounds"]):  # alternated, so both apps see the same drift of this shared machine
            batch = sentences[r * n:(r + 1) * n]  # new sentences each round: none is in the app's cache yet
            for name, server, answers in (("bare", bare, {t: t for t in batch}), ("app", app, expected)):
                before = server.cpu_seconds()
                rounds[name].append(classroom_load(server.url, batch, answers, p["clients"], p["requests_per_client"]))
                cpu[name] += server.cpu_seconds() - before
        result["bare_load"], result["app_load"] = pooled(rounds["bare"]), pooled(rounds["app"])
        for name in ("bare", "app"):  # the server's own CPU per request: steadier than latency on a shared machine
            result[f"{name}_load"]["server_cpu_ms_per_request"] = round(1000 * cpu[name] / (n * p["rounds"]), 1)
        result["peak_rss_mb"] = app.rss_mb("VmHWM")
        before = app.rss_mb()
        result["soak_requests"] = soak(app.url, sentences, p["soak"])
        result["soak_rss_before_mb"], result["soak_rss_after_mb"] = before, app.rss_mb()
    finally:
        app.stop()
        bare.stop()
    bare_p95, app_p95 = result["bare_load"].get("p95_ms"), result["app_load"].get("p95_ms")
    if bare_p95 and app_p95:
        result["p95_ratio_app_to_bare"] = round(app_p95 / bare_p95, 2)
    return result


def print_rows(title: str, rows: list[dict]):
    """A Markdown table, so a full run's output can go into BENCHMARKS.md as it is."""
    print(f"\n### {title}\n")
    if not rows:
        return
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke test, not a measurement")
    parser.add_argument("--json", type=Path, help="write all results here")
    args = parser.parse_args(argv)
    p = QUICK if args.quick else FULL
    translators = {name: load_translator(path) for name, path in MODELS.items()}
    report = {"machine": machine(), "quick": args.quick, "command": " ".join(["python -m attn_demo.bench", *(argv or sys.argv[1:])])}
    print(json.dumps(report["machine"]))
    sections = [("latency", "translate() latency", bench_latency), ("naive", "ours vs naive reference, greedy", bench_naive),
                ("roofline", "decode step against the memory roofline", bench_roofline),
                ("throughput", "batched throughput", bench_throughput), ("figures", "figures per request", bench_figures)]
    for key, title, fn in sections:
        report[key] = fn(translators, p)
        print_rows(title, report[key])
    report["app"] = bench_app(translators, p)
    app = report["app"]
    print(f"\n### app\n\ncold start {app['cold_start_s']} s, RSS after start {app['rss_after_start_mb']} MB, peak {app['peak_rss_mb']} MB")
    print_rows("step change in the browser", [app["step_change"]])
    print_rows("classroom load", [{"app": "bare", **app["bare_load"]}, {"app": "attn-demo", **app["app_load"]}])
    print(f"p95 ratio app/bare: {app.get('p95_ratio_app_to_bare')}; RSS over {app['soak_requests']} requests: "
          f"{app['soak_rss_before_mb']} → {app['soak_rss_after_mb']} MB")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
