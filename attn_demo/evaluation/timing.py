"""Timing helpers shared by the benchmarks and attn_demo.evaluation.speed: repeated timings summarised as
percentiles, the machine they ran on, and the sentences of 5, 15 and 30 words that are timed."""
import os
import platform
import random
import statistics
import time
from pathlib import Path

import torch

SENTENCES = {
    5: "The cat is very old.",
    15: "My brother and I went to the market this morning to buy some fresh bread.",
    20: "My brother and I went to the market this morning to buy some fresh bread and a few red apples.",
    30: ("When we arrived at the station last night, the last train had already left, so we had to "
         "walk all the way home in the cold rain."),
}


def percentiles(samples_ms) -> dict:
    ordered = sorted(samples_ms)
    return {"median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
            "max_ms": round(ordered[-1], 2), "n": len(ordered)}


def timed(fn, runs: int, warmup: int) -> dict:
    return interleaved({"": fn}, runs, warmup)[""]


def interleaved(functions: dict, runs: int, warmup: int, seed: int = 0) -> dict:
    """{name: percentiles of its runs}: each round calls every function once, in a new order (so that
    a slow minute slows each alike, and none always runs after the same other, whose data have just
    filled the caches)."""
    for function in functions.values():
        for _ in range(warmup):
            function()
    samples, order, rng = {name: [] for name in functions}, list(functions), random.Random(seed)
    for _ in range(runs):
        rng.shuffle(order)
        for name in order:
            start = time.perf_counter()
            functions[name]()
            samples[name].append(1000 * (time.perf_counter() - start))
    return {name: percentiles(samples[name]) for name in functions}


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    device = "cuda: " + torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "device": device, "python": platform.python_version()}
