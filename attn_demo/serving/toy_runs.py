"""Toy runs trained live for the page's visitors: one lesson per settings and seed, watched by everyone who asks.

A lesson is one toy run (attn_demo.training.toy), or two trained side by side on the same batches: the attention
picked and the same model without attention, update for update. Their models live and train in a process of their
own (serving.toy_worker), so that training never holds the app's interpreter while a class translates. TRAINERS
lessons train at once; the others wait in the order they were asked for and are told their place. A lesson trains
while somebody watches it, until the attention run has trained for the seconds asked (each watcher who presses
"Go on" asks for more, up to MAX_SECONDS in all), and publishes a frame about every FRAME_SECONDS: where each run
stands (toy.ToyRun.measure) and its translation of one held-out string. Nobody watching: it pauses, kept
(LESSONS_KEPT, the oldest idle one forgotten first) for a class that comes back to it; the same seed trains the same
run update by update, so a shared link shows the same curve.
"""
import asyncio
import threading
from collections import OrderedDict
from dataclasses import dataclass

from attn_demo.serving.toy_worker import Worker
from attn_demo.training.toy import MAX_SECONDS, ToySettings

TRAINERS = 1  # lessons training at once: a 2-core machine trains one while the other core serves the page
LESSONS_KEPT = 32
FRAME_SECONDS = 1.0  # a frame about every second of training
WATCH_POLL_S = 0.2  # how often a watcher looks for a new frame (asyncio: no thread held while it waits)
GONE = "The toy models' trainer stopped; press Train to start again."


@dataclass
class Lesson:
    """One lesson: what it was asked for and its latest frame (its models are in the workshop, by its key)."""

    key: tuple  # (settings, beside)
    # its latest frame, {"runs": [each run's measure and example], "trained": [seconds each run]}; None until its
    # trainer builds its models, when its turn comes (their untrained frame first)
    frame: dict | None = None
    allowance: float = 0.0  # seconds of training the attention run was asked for so far
    frames: int = 0  # frames published so far
    watchers: int = 0
    training: bool = False
    error: str | None = None  # why it stopped, where its trainer failed

    @property
    def trained(self) -> list[float]:
        return self.frame["trained"] if self.frame else [0.0]

    @property
    def wants_training(self) -> bool:
        return self.watchers > 0 and self.trained[0] < self.allowance and self.error is None


def lesson_key(settings: ToySettings, beside: bool) -> tuple:
    """A lesson's key: its settings, and whether the model without attention trains beside (never beside itself)."""
    return settings, bool(beside) and settings.attention != "none"


class ToyRuns:
    """The app's live toy lessons: join(…) / leave(…) around a watch; trainers start as lessons need them."""

    def __init__(self, workshop=None, trainers: int = TRAINERS, kept: int = LESSONS_KEPT,
                 frame_seconds: float = FRAME_SECONDS):
        """workshop: where the models train, a toy_worker.Worker (a process of its own, by default) or a Workshop."""
        self.workshop = workshop if workshop is not None else Worker()
        self.lock = threading.Lock()
        self.lessons: OrderedDict[tuple, Lesson] = OrderedDict()
        self.queue: list[Lesson] = []  # lessons waiting for a trainer, in the order asked
        self.trainers, self.kept, self.frame_seconds = trainers, kept, frame_seconds
        self.slots = threading.BoundedSemaphore(trainers)  # the REST API's runs (train_toy) take one too
        self.forgotten: list[tuple] = []  # lessons no longer kept, whose models a trainer drops from the workshop
        self.running = 0

    def join(self, settings: ToySettings, beside: bool, seconds: float, more: bool = False) -> Lesson:
        """The lesson of these settings (a new one, or the class's), with one more watcher and at least `seconds`
        of training in all asked for; with `more`, `seconds` more than it has trained (at most MAX_SECONDS in all).
        Nothing is computed here (a watcher's event loop calls it): a trainer builds the models when its turn comes."""
        key = lesson_key(settings, beside)
        with self.lock:
            lesson = self.lessons.get(key) or self._new(key)
            self.lessons.move_to_end(key)
            lesson.watchers += 1
            asked = lesson.trained[0] + seconds if more else seconds
            lesson.allowance = min(MAX_SECONDS, max(lesson.allowance, asked))
            self._schedule(lesson)
            return lesson

    def leave(self, lesson: Lesson):
        with self.lock:
            lesson.watchers -= 1

    def built(self, settings: ToySettings, beside: bool) -> Lesson | None:
        """The lesson of these settings if its models have been built, or None."""
        lesson = self.lessons.get(lesson_key(settings, beside))
        return lesson if lesson is not None and lesson.frame is not None else None

    def snapshot(self, lesson: Lesson) -> dict:
        """What a watcher shows now: the latest frame, the lesson's place in the queue and whether it is over."""
        with self.lock:
            queued = lesson in self.queue
            busy = sum(other.training for other in self.lessons.values()) >= self.trainers
            return {"frame": lesson.frame, "frames": lesson.frames, "training": lesson.training, "error": lesson.error,
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
        """Under the lock: a new lesson, kept; the oldest idle ones beyond `kept` forgotten."""
        lesson = self.lessons[key] = Lesson(key)
        idle = [k for k, old in self.lessons.items() if old.watchers == 0 and not old.training and old not in self.queue]
        for old in idle[:max(0, len(self.lessons) - self.kept)]:
            del self.lessons[old]
            self.forgotten.append(old)
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
        """Train while it is watched and asked for, publishing a frame about every frame_seconds; a failed trainer
        ends the lesson with its reason, and the next Train builds it again."""
        while True:
            with self.lock:
                if not lesson.wants_training and lesson.frame is not None:
                    return
                allowance, (forgotten, self.forgotten) = lesson.allowance, (self.forgotten, [])
            try:
                for key in forgotten:
                    self.workshop.ask("drop", key)
                if lesson.frame is None:  # its turn: its models built, and their untrained frame shown first
                    frame = self.workshop.ask("new", lesson.key)
                else:
                    frame = self.workshop.ask("train", lesson.key, allowance, self.frame_seconds)
            except Exception as error:  # noqa: BLE001 (said on the page; the lesson is forgotten)
                with self.lock:
                    # its process stopped now (RuntimeError), or before, and a new one lacks its models (KeyError)
                    lesson.error = GONE if isinstance(error, (RuntimeError, KeyError)) else str(error)
                    self._forget(lesson)
                return
            with self.lock:
                lesson.frame, lesson.frames = frame, lesson.frames + 1

    def translate(self, lesson: Lesson, text: str) -> list:
        """Each run's Translation of a typed string, between two of its trainer's rounds; a RuntimeError that says so
        where its models are gone (their process stopped), the lesson then forgotten."""
        try:
            return self.workshop.ask("translate", lesson.key, text)
        except (KeyError, RuntimeError):
            with self.lock:
                self._forget(lesson)
            raise RuntimeError(GONE) from None

    def _forget(self, lesson: Lesson):
        """Under the lock: the lesson no longer kept (its models are gone), so that the next Train builds it again."""
        if self.lessons.get(lesson.key) is lesson:
            del self.lessons[lesson.key]

    def train_for(self, settings: ToySettings, seconds: float) -> dict:
        """A run of its own for the REST API, trained for `seconds` in the workshop when a trainer is free."""
        with self.slots:
            return self.workshop.ask("train_for", settings, seconds)
