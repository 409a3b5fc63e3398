"""Where the toy lessons' models live and train: a Workshop, run in a process of its own (Worker) in the app, so that
training never holds the app's interpreter while a class translates; in this process (Workshop itself) for tests.

A lesson's key is (ToySettings, beside): its attention run, and with `beside` the same model without attention,
trained on the same batches update for update. Every reply is plain data and Translations (picklable), never a model.
"""
import multiprocessing
import os
import threading
import time
from dataclasses import replace

import torch

from attn_demo.training.toy import CURVE_EVERY, ToyRun, train_for

# The worker's scheduling priority below the app's (nice(2): 19 is the lowest). A lesson trains on whatever core is
# idle, and a translation that wants the core takes it at once: with the worker at the app's priority, 30 lessons in
# line made a translation's p95 3.0× its figure alone (BENCHMARKS.md, Train it live).
NICENESS = 19


class Workshop:
    """The toy runs of every lesson kept, by key: built, trained by rounds, measured, asked to translate, dropped."""

    def __init__(self, clock=time.perf_counter):
        self.clock = clock
        self.runs: dict[tuple, list[ToyRun]] = {}
        self.trained: dict[tuple, list[float]] = {}  # seconds each run has trained

    def new(self, key: tuple) -> dict:
        """Build the lesson's runs, untrained; its first frame."""
        settings, beside = key
        self.runs[key] = [ToyRun(settings)] + ([ToyRun(replace(settings, attention="none"))] if beside else [])
        self.trained[key] = [0.0] * len(self.runs[key])
        return self.frame(key)

    def train(self, key: tuple, until: float, frame_seconds: float) -> dict:
        """Rounds of CURVE_EVERY updates of each run, for about frame_seconds or until the attention run has trained
        `until` seconds in all; then the frame."""
        runs, trained = self.runs[key], self.trained[key]
        started = self.clock()
        while self.clock() - started < frame_seconds and trained[0] < until:
            for i, run in enumerate(runs):  # the same updates for each, on the same batches (the seed's)
                began = self.clock()
                run.train(CURVE_EVERY)
                trained[i] += self.clock() - began
        return self.frame(key)

    def frame(self, key: tuple) -> dict:
        """Each run's measure and its translation of the lesson's example (the first of its longest held-out strings),
        and the seconds each has trained."""
        runs = [{**run.measure(seconds), "example": run.translation(run.held_out[max(run.held_out)][0])}
                for run, seconds in zip(self.runs[key], self.trained[key])]
        return {"runs": runs, "trained": list(self.trained[key])}

    def translate(self, key: tuple, text: str) -> list:
        """Each run's Translation of a typed string."""
        return [run.translation(text) for run in self.runs[key]]

    def drop(self, key: tuple) -> None:
        self.runs.pop(key, None)
        self.trained.pop(key, None)

    def train_for(self, settings, seconds: float) -> dict:
        """A run of its own for the REST API (toy.train_for), kept by nobody."""
        return train_for(settings, seconds)

    def ask(self, method: str, *args):
        """The same calls as a Worker's, in this process."""
        return getattr(self, method)(*args)


class Worker:
    """A Workshop in a process of its own, asked one call at a time (ask: a method's name and its arguments); started
    on the first call, or by start(); a failure in it comes back as its exception."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pipe = self.process = None

    def start(self):
        with self.lock:
            self._start()

    def _start(self):
        if self.process is None or not self.process.is_alive():
            context = multiprocessing.get_context("spawn")  # never fork a process whose threads hold locks
            self.pipe, child = context.Pipe()
            self.process = context.Process(target=serve, args=(child,), daemon=True, name="toy-worker")
            self.process.start()
            child.close()

    def ask(self, method: str, *args):
        with self.lock:
            self._start()
            try:
                self.pipe.send((method, args))
                failed, reply = self.pipe.recv()
            # the process ended (killed, out of memory): its pipe at its end, or reset by the system (ECONNRESET),
            # or broken before the call went out; the next call starts another
            except (EOFError, OSError):
                self.process = None
                raise RuntimeError("The toy models' process stopped.") from None
        if failed:
            raise reply
        return reply


def serve(pipe):
    """The worker process: a Workshop answering its pipe until the app closes it."""
    os.nice(NICENESS)  # first, so that every thread torch starts is as nice
    torch.set_num_threads(1)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # torch's compiler imported now, not at a first Train
    workshop = Workshop()
    while True:
        try:
            method, args = pipe.recv()
        except EOFError:
            return
        try:
            pipe.send((False, getattr(workshop, method)(*args)))
        except Exception as error:  # noqa: BLE001 (handed to the caller, which says it)
            pipe.send((True, error))
