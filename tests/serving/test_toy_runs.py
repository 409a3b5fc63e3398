import asyncio
import itertools
import threading
import time

import pytest
import torch

from attn_demo.serving.toy_runs import GONE, ToyRuns
from attn_demo.serving.toy_worker import Workshop
from attn_demo.training.toy import ToyRun, ToySettings


def tiny(**changes) -> ToySettings:
    return ToySettings(**{"task": "reverse", "attention": "bahdanau", "hidden": 8, "min_length": 2, "max_length": 4,
                          "batch": 4, **changes})


def wait_until(condition, timeout=60.0):
    deadline = time.perf_counter() + timeout
    while not condition():
        assert time.perf_counter() < deadline, "timed out"
        time.sleep(0.01)


def ticks(step=0.1):
    """A clock each reading of which is `step` seconds after the one before: a run's seconds counted in readings."""
    return itertools.count(0.0, step).__next__


def updates(lesson) -> int:
    return lesson.frame["runs"][0]["updates"] if lesson.frame else 0


def watched(runs: ToyRuns, settings, beside=True, seconds=0.3, more=False) -> list[dict]:
    async def frames():
        return [snapshot async for snapshot in runs.watch(settings, beside, seconds, more)]
    return asyncio.run(frames())


def test_a_class_asking_the_same_settings_watches_one_lesson_and_another_seed_another():
    runs = ToyRuns(Workshop())  # asked for no training (0 s): joined and watched as they are
    first, second = runs.join(tiny(), True, 0.0), runs.join(tiny(), True, 0.0)
    assert first is second and first.watchers == 2
    assert runs.join(tiny(seed=1), True, 0.0) is not first
    assert runs.join(tiny(), False, 0.0) is not first  # alone, without the baseline beside it
    assert runs.join(tiny(attention="none"), True, 0.0).key == (tiny(attention="none"), False)  # none beside none: one run
    assert first.frame is None  # nothing built until a trainer's turn


class Lockstep(Workshop):
    """A workshop whose trainer starts each round only once the watcher has seen the frame before it, so that a
    watcher polling every WATCH_POLL_S sees every frame however fast (or slow, on a loaded machine) a round is."""

    def __init__(self, **options):
        super().__init__(**options)
        self.seen = threading.Semaphore(0)

    def train(self, *args):
        assert self.seen.acquire(timeout=60), "the watcher never saw the frame before"
        return super().train(*args)


def test_a_lesson_shows_its_untrained_models_at_once_then_trains_both_on_the_same_updates_to_its_time():
    torch.set_num_threads(1)
    # each reading of the clock 0.1 s later: a frame after each round of 10 updates of both runs, each round 0.1 s
    workshop = Lockstep(clock=ticks())
    runs, built = ToyRuns(workshop, frame_seconds=0.15), []

    async def watch():
        async for snapshot in runs.watch(tiny(), True, 0.55):
            if snapshot["frame"] is not None and (not built or snapshot["frames"] > built[-1]["frames"]):
                built.append(snapshot)
                workshop.seen.release()
    asyncio.run(watch())
    first, last = built[0], built[-1]
    assert [run["updates"] for run in first["frame"]["runs"]] == [0, 0] and first["frames"] == 1
    assert last["over"] and not last["training"] and last["frames"] == 1 + 6  # the untrained frame, then one a round
    attention, baseline = last["frame"]["runs"]
    assert attention["updates"] == baseline["updates"] == 60 and baseline["settings"]["attention"] == "none"
    assert attention["seconds"] == baseline["seconds"] == 0.6  # each run's own time
    assert attention["example"].attention is not None and baseline["example"].attention is None  # α only where it attends
    assert [s["frame"]["runs"][0]["updates"] for s in built] == [0, 10, 20, 30, 40, 50, 60]  # every frame, in order


def test_a_second_lesson_waits_for_the_trainer_and_is_told_its_place():
    runs = ToyRuns(Workshop(), trainers=1, frame_seconds=0.05)
    busy = runs.join(tiny(), False, 2.0)
    wait_until(lambda: busy.training)
    waiting = runs.join(tiny(seed=1), False, 0.2)
    assert runs.snapshot(waiting)["place"] == 1 and not runs.snapshot(waiting)["over"]
    runs.leave(busy)  # nobody watches the first: it pauses, and the second trains
    wait_until(lambda: runs.snapshot(waiting)["over"])
    assert updates(waiting) > 0 and runs.snapshot(waiting)["place"] is None
    assert busy.trained[0] < 2.0  # paused before its time


def test_a_lesson_nobody_watches_pauses_and_goes_on_where_it_stood_as_the_same_run():
    runs = ToyRuns(Workshop(clock=ticks()), frame_seconds=0.15)  # a round of 10 updates: 0.1 s, a frame after each
    lesson = runs.join(tiny(), False, 100)
    wait_until(lambda: updates(lesson) >= 20)
    runs.leave(lesson)
    wait_until(lambda: not lesson.training)
    paused = updates(lesson)
    time.sleep(0.2)
    assert updates(lesson) == paused  # nobody watching: no training
    lesson.allowance = lesson.trained[0]  # (as if its time had been spent) Go on: 0.3 s more than it had
    watched(runs, tiny(), beside=False, seconds=0.3, more=True)
    assert updates(lesson) == paused + 30
    again = ToyRun(tiny())
    again.train(updates(lesson))
    assert again.curve == lesson.frame["runs"][0]["loss_curve"]  # paused and resumed, it is the seed's run update for update


def test_go_on_asks_for_more_than_it_trained_and_never_past_the_longest_run():
    runs = ToyRuns(Workshop(), frame_seconds=0.05)
    watched(runs, tiny(), seconds=0.2)
    lesson = runs.join(tiny(), True, 0.2)
    assert lesson.allowance == 0.2  # Train again on a trained lesson: watched as it is, not trained further
    runs.leave(lesson)
    lesson = runs.join(tiny(), True, 1000, more=True)
    assert lesson.allowance == 60.0
    runs.leave(lesson)
    wait_until(lambda: not lesson.training)


def test_lessons_kept_are_bounded_and_the_oldest_idle_one_goes_first_from_the_workshop_too():
    workshop = Workshop()
    runs = ToyRuns(workshop, kept=2, frame_seconds=0.01)
    for seed in range(3):
        watched(runs, tiny(seed=seed), beside=False, seconds=0.01)
    assert [settings.seed for settings, _ in runs.lessons] == [1, 2]
    watched(runs, tiny(seed=1), beside=False, seconds=0.02)  # the next turn drops the forgotten one's models
    assert [settings.seed for settings, _ in workshop.runs] == [1, 2]


def test_a_typed_input_goes_through_every_run_of_the_lesson():
    runs = ToyRuns(Workshop(), frame_seconds=0.01)
    watched(runs, tiny(), seconds=0.01)
    attention, baseline = runs.translate(runs.lessons[(tiny(), True)], "123")
    assert attention.source_tokens == ["1", "2", "3", "</s>"] and attention.attention.shape[1] == 4
    assert baseline.attention is None and baseline.attention_type == "none"


def test_the_app_s_worker_process_trains_a_lesson_and_one_killed_is_said_and_built_again():
    runs = ToyRuns(frame_seconds=0.05)  # the app's: a Worker, its models in a process of their own
    try:
        last = watched(runs, tiny(), seconds=0.3)[-1]
        assert last["over"] and last["error"] is None and last["frame"]["runs"][0]["updates"] > 0
        assert [r.attention_type for r in runs.translate(runs.lessons[(tiny(), True)], "12")] == ["bahdanau", "none"]
        lesson = runs.join(tiny(seed=1), False, 60)
        wait_until(lambda: lesson.training)
        runs.workshop.process.kill()  # out of memory, say
        wait_until(lambda: lesson.error is not None)
        assert "stopped" in runs.snapshot(lesson)["error"] and runs.snapshot(lesson)["over"]
        built = runs.lessons[(tiny(), True)]
        with pytest.raises(RuntimeError, match="press Train to start again"):  # its models went with the process
            runs.translate(built, "12")
        assert (tiny(), True) not in runs.lessons
        assert (tiny(seed=1), False) not in runs.lessons  # the next Train builds it again, in a new process
        again = watched(runs, tiny(seed=1), beside=False, seconds=0.05)[-1]
        assert again["error"] is None and again["frame"]["runs"][0]["updates"] > 0
        runs.workshop.process.kill()  # while nobody trains: Go on then finds its models gone with the process
        runs.workshop.process.join()
        gone = watched(runs, tiny(seed=1), beside=False, seconds=0.3, more=True)[-1]
        assert gone["error"] == GONE and (tiny(seed=1), False) not in runs.lessons
    finally:
        if runs.workshop.process is not None:
            runs.workshop.process.kill()
