"""Toy runs trained live for the page's visitors: one lesson per settings and seed, watched by everyone who asks.

A lesson is one toy run (attn_demo.training.toy), or two trained side by side on the same batches: the attention
picked and the same model without attention, update for update. TRAINERS lessons train at once, each on a thread of
its own (the app gives torch one thread); the others wait in the order they were asked for and are told their place.
A lesson trains while somebody watches it, until the attention run has trained for the seconds asked (each watcher
who presses "Go on" asks for more, up to MAX_SECONDS in all), and publishes a frame about every FRAME_SECONDS: where
each run stands (toy.ToyRun.measure) and its translation of one held-out string. Nobody watching: it pauses, kept
(LESSONS_KEPT, the oldest idle one forgotten first) for a class that comes back to it; the same seed trains the same
run update by update, so a shared link shows the same curve.
"""
import asyncio
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from attn_demo.training.toy import CURVE_EVERY, MAX_SECONDS, ToyRun, ToySettings

TRAINERS = 1  # lessons training at once: a 2-core machine trains one while the other core serves the page
LESSONS_KEPT = 32
FRAME_SECONDS = 1.0  # a frame about every second of training
WATCH_POLL_S = 0.2  # how often a watcher looks for a new frame (asyncio: no thread held while it waits)


@dataclass
class Lesson:
    """One lesson's runs, what it was asked for and its latest frame; changed by its trainer under the lock."""

    key: tuple  # (settings, beside)
    runs: list  # [ToyRun]: the attention picked, then (beside) the same model without attention
    allowance: float  # seconds of training the attention run was asked for so far
    trained: list = field(default_factory=list)  # seconds each run has trained
    frame: dict | None = None  # its latest frame (measured), None before the first
    frames: int = 0  # frames published so far
    watchers: int = 0
    training: bool = False
    model_lock: threading.Lock = field(default_factory=threading.Lock)  # its trainer's, or a typed input's

    @property
    def wants_training(self) -> bool:
        return self.watchers > 0 and self.trained[0] < self.allowance


class ToyRuns:
    """The app's live toy lessons: join(…) / leave(…) around a watch; trainers start as lessons need them."""

    def __init__(self, trainers: int = TRAINERS, kept: int = LESSONS_KEPT, frame_seconds: float = FRAME_SECONDS,
                 clock=time.perf_counter):
        self.lock = threading.Condition()
        self.lessons: OrderedDict[tuple, Lesson] = OrderedDict()
        self.queue: list[Lesson] = []  # lessons waiting for a trainer, in the order asked
        self.trainers, self.kept, self.frame_seconds, self.clock = trainers, kept, frame_seconds, clock
        self.slots = threading.BoundedSemaphore(trainers)  # the REST API's runs (train_toy) take one too
        self.running = 0

    def join(self, settings: ToySettings, beside: bool, seconds: float, more: bool = False) -> Lesson:
        """The lesson of these settings (a new one, or the class's), with one more watcher and at least `seconds`
        of training in all asked for; with `more`, `seconds` more than it has trained (at most MAX_SECONDS in all)."""
        key = (settings, beside and settings.attention != "none")
        with self.lock:
            lesson = self.lessons.get(key)
            if lesson is None:
                lesson = self._new(key)
            self.lessons.move_to_end(key)
            lesson.watchers += 1
            asked = lesson.trained[0] + seconds if more else seconds
            lesson.allowance = min(MAX_SECONDS, max(lesson.allowance, asked))
            self._schedule(lesson)
            return lesson

    def leave(self, lesson: Lesson):
        with self.lock:
            lesson.watchers -= 1

    def snapshot(self, lesson: Lesson) -> dict:
        """What a watcher shows now: the latest frame, the lesson's place in the queue and whether it is over."""
        with self.lock:
            queued = lesson in self.queue
            busy = sum(other.training for other in self.lessons.values()) >= self.trainers
            return {"frame": lesson.frame, "frames": lesson.frames, "training": lesson.training,
                    "place": self.queue.index(lesson) + 1 if queued and busy else None,  # none: it starts now
                    "over": not lesson.training and not queued, "trained": list(lesson.trained),
                    "allowance": lesson.allowance}

    async def watch(self, settings: ToySettings, beside: bool, seconds: float, more: bool = False):
        """Snapshots of the lesson as it changes, the first at once, until it stops training; a watcher that is
        cancelled (Stop, a page closed) leaves it."""
        lesson, seen = self.join(settings, beside, seconds, more), None
        try:
            while True:
                now = self.snapshot(lesson)
                if (now["frames"], now["place"], now["training"]) != seen:
                    seen = (now["frames"], now["place"], now["training"])
                    yield now
                if now["over"]:
                    return
                await asyncio.sleep(WATCH_POLL_S)
        finally:
            self.leave(lesson)

    def _new(self, key: tuple) -> Lesson:
        settings, beside = key
        runs = [ToyRun(settings)] + ([ToyRun(replace(settings, attention="none"))] if beside else [])
        lesson = Lesson(key, runs, allowance=0.0, trained=[0.0] * len(runs))
        lesson.frame = self._frame(lesson)  # the untrained models: the first frame shows at once
        lesson.frames = 1
        self.lessons[key] = lesson
        idle = [k for k, old in self.lessons.items() if old.watchers == 0 and not old.training and old not in self.queue]
        for old in idle[:max(0, len(self.lessons) - self.kept)]:
            del self.lessons[old]
        return lesson

    def _schedule(self, lesson: Lesson):
        """Under the lock: the lesson queued for a trainer if it wants training and is not already."""
        if lesson.wants_training and not lesson.training and lesson not in self.queue:
            self.queue.append(lesson)
        if self.queue and self.running < self.trainers:
            self.running += 1
            threading.Thread(target=self._trainer, daemon=True, name="toy-trainer").start()

    def _trainer(self):
        """Train the queued lessons one after another, then end."""
        with self.slots:
            while True:
                with self.lock:
                    waiting = [lesson for lesson in self.queue if lesson.wants_training]
                    self.queue = waiting  # one nobody watches any more leaves the queue (paused)
                    if not waiting:
                        self.running -= 1
                        return
                    lesson = self.queue.pop(0)
                    lesson.training = True
                try:
                    self._train(lesson)
                finally:
                    with self.lock:
                        lesson.training = False

    def _train(self, lesson: Lesson):
        """Train while it is watched and asked for, publishing a frame about every frame_seconds."""
        while True:
            with self.lock:
                if not lesson.wants_training:
                    return
            started = self.clock()
            with lesson.model_lock:
                while self.clock() - started < self.frame_seconds and lesson.trained[0] < lesson.allowance:
                    for i, run in enumerate(lesson.runs):  # the same updates for each, on the same batches (the seed's)
                        began = self.clock()
                        run.train(CURVE_EVERY)
                        lesson.trained[i] += self.clock() - began
                frame = self._frame(lesson)
            with self.lock:
                lesson.frame, lesson.frames = frame, lesson.frames + 1

    def translate(self, lesson: Lesson, text: str) -> list:
        """Each run's Translation of a typed string, between two of its trainer's steps."""
        with lesson.model_lock:
            return [run.translation(text) for run in lesson.runs]

    @staticmethod
    def _frame(lesson: Lesson) -> dict:
        """Each run's measure and its translation of the lesson's example (the first of its longest held-out strings)."""
        frame = []
        for run, seconds in zip(lesson.runs, lesson.trained):
            longest = run.held_out[max(run.held_out)]
            frame.append({**run.measure(seconds), "example": run.translation(longest[0])})
        return {"runs": frame}
