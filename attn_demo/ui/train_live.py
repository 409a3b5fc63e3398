"""Train attention live: a class trains a toy model (attn_demo.training.toy) on the server and watches it learn where
to look, with the same model without attention beside it failing on the long strings.

Train starts the lesson of the settings and seed on screen, or joins the class's (serving.toy_runs: one run per
settings, watched by all who ask, TRAINERS at once, the others queued and told their place); about every second the
page shows the loss, the held-out strings exactly right by length and α of one of them, drawn with the page's own
grid. Stop leaves it (it pauses when nobody watches), Go on asks for more seconds, and a typed input goes through
the trained models into the page's own step views. The REST API's train_toy(task, attention, seconds, seed) trains
a new run for that long and answers one JSON object (toy.ToyRun.measure), for a lesson checked without a browser;
the same request asked by a class at once is one run (ComputedOnce), and it waits for a trainer like a lesson.
"""
import threading
from collections import OrderedDict
from typing import NamedTuple

import gradio as gr

from attn_demo.models.attention import KINDS
from attn_demo.models.config import ATTENTION_TYPES
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.serving.toy_runs import ToyRuns, lesson_key
from attn_demo.serving.toy_worker import Worker
from attn_demo.training.toy import MAX_SECONDS, TASKS, ToySettings, read_input
from attn_demo.ui.page import HIDDEN_WHEN_EMPTY, LATEX, NO_GRID, plot
from attn_demo.ui.step_group import StepGroup, step_slot
from attn_demo.views.figures import alignment_figure, toy_accuracy_figure, toy_loss_figure
from attn_demo.views.steps import pca_projection
from attn_demo.views.translation import step_views

RUNS_KEPT = 32  # train_toy's answers kept for a class asking again
FRAMES_KEPT = 64  # frames drawn, kept for the other watchers of their lesson
TOY_CALLS = {"concurrency_id": "toy", "concurrency_limit": 1}  # train_toy's: they wait for a trainer (ToyRuns.slots)
# a watcher mostly waits for the next frame (asyncio, no thread held): a whole class watches at once
WATCH_CALLS = {"concurrency_id": "toy_watch", "concurrency_limit": None}
STEPS = StepGroup("train-steps")  # a typed input's step views, one per run of the lesson
RUN_SIDES = ("train-attention", "train-baseline")  # the step views' slots: the attention picked, then none
LONGEST_SHOWN = 3  # the status line's figure: the held-out strings of the 3 longest lengths
EXPLANATION = """## Train it live
A model without attention squeezes the whole input into one fixed vector $c$ and forgets the start of a long string;
one with attention *learns* where to look. See both happen in half a minute. Pick a task whose alignment you know:
**reverse** (α should fall on the anti-diagonal), **copy** (the diagonal), **sort** (wherever each digit is) or a
**date** rewritten, "5 January 2020" → "2020-01-05" (the year read from the end first, the day last: it crosses, as
a translation does). Press **Train**: a small GRU encoder–decoder built from the same code as the page's models learns
it on the server, beside the same model without attention trained on the same strings, update for update. About every
second you see the loss, how many held-out strings (never trained on) of each length each gets exactly right, and α
of one of them, from uniform to the alignment. Everyone who trains the same settings and seed watches the same run."""


class Frame(NamedTuple):
    """What a lesson's frame puts on the page, in the order of the watch's outputs."""

    status: str
    loss: object
    accuracy: object
    grid: object
    grid_note: str


class Tried(NamedTuple):
    """What a typed input puts on the page."""

    message: str
    steps: dict | None
    slider: dict


def settings_of(task, attention, hidden, shortest, longest, seed) -> ToySettings:
    """The settings a page or a client sent, or a gr.Error that says what is wrong with them."""
    try:
        return ToySettings(task=task, attention=attention, hidden=whole(hidden, "hidden size"),
                           min_length=whole(shortest, "shortest length"), max_length=whole(longest, "longest length"),
                           seed=whole(seed, "seed"))
    except ValueError as error:
        raise gr.Error(str(error), print_exception=False) from None


def seconds_of(seconds) -> float:
    try:
        seconds = number(seconds, "seconds")
    except ValueError as error:
        raise gr.Error(str(error), print_exception=False) from None
    if not 0 < seconds <= MAX_SECONDS:
        raise gr.Error(f"A toy run trains for more than 0 and at most {MAX_SECONDS:g} seconds, not {seconds:g}.",
                       print_exception=False)
    return seconds


def title(run: dict) -> str:
    return KINDS[run["settings"]["attention"]].title


def unit(settings: ToySettings) -> str:
    return "characters" if TASKS[settings.task].lengths else "digits"


def status(settings: ToySettings, snapshot: dict) -> str:
    """Where the lesson stands, in words: waiting (its place), training or trained, and each run's long strings."""
    frame, (trained, allowance) = snapshot["frame"], (snapshot["trained"][0], snapshot["allowance"])
    if snapshot["error"]:
        return f"**Stopped:** {snapshot['error']}"
    if snapshot["place"] is not None:
        return (f"**Waiting for the trainer: {ordinal(snapshot['place'])} in line.** This server trains one lesson at a "
                "time; yours starts when those before it end.")
    if frame is None:
        return "**Starting:** building the models…"
    runs = frame["runs"]
    if snapshot["training"] or not snapshot["over"]:
        head = f"**Training:** {runs[0]['updates']} updates, {trained:.0f} of {allowance:.0f} s."
    else:
        head = (f"**Trained** {runs[0]['updates']} updates in {trained:.0f} s. Go on trains it further (at most "
                f"{MAX_SECONDS:g} s in all); type an input below to see it step by step.")
    lengths = sorted(int(n) for n in runs[0]["exact_by_length"])[-LONGEST_SHOWN:]
    longest = "–".join(str(n) for n in (lengths[0], lengths[-1])) if len(lengths) > 1 else str(lengths[0])
    shares = "; ".join(f"{title(run)}: **{100 * sum(run['exact_by_length'][str(n)] for n in lengths) / len(lengths):.0f}%**"
                       for run in runs)
    return f"{head}\n\nHeld-out inputs of {longest} {unit(settings)} exactly right — {shares}."


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def frame(settings: ToySettings, snapshot: dict, large: bool) -> Frame:
    if snapshot["frame"] is None:  # waiting for its turn: words only, the figures come with its first frame
        return Frame(status(settings, snapshot), None, None, None, "")
    runs = [{**run, "title": title(run)} for run in snapshot["frame"]["runs"]]
    example = runs[0]["example"]
    grid, note = (None, NO_GRID) if example.attention is None else (plot(alignment_figure(
        example.source_tokens, example.target_tokens, example.attention, f"α of {runs[0]['title']} on one held-out input",
        large, sides=("input", "output"))), "")
    return Frame(status(settings, snapshot), plot(toy_loss_figure(runs, large)),
                 plot(toy_accuracy_figure(runs, unit(settings), large)), grid, note)


class TrainLiveSection:
    """The app's toy lessons and train_toy's runs: identical requests share one run."""

    def __init__(self, runs: ToyRuns | None = None):
        self.lessons = runs if runs is not None else ToyRuns()
        self.runs = ComputedOnce(self.lessons.train_for, maxsize=RUNS_KEPT)  # in the workshop, when a trainer is free
        self.frames, self.drawing = OrderedDict(), threading.Lock()  # the latest frames drawn, for every watcher

    def train_toy(self, task: str, attention: str, seconds: float, seed: int) -> dict:
        """train_toy: a new toy run of `task` with `attention` ("none": no attention), trained for `seconds` from `seed`."""
        settings = settings_of(task, attention, ToySettings.hidden, ToySettings.min_length, ToySettings.max_length, seed)
        return self.runs(settings, seconds_of(seconds))

    async def watch(self, task, attention, hidden, shortest, longest, seed, beside, seconds, large, more=False):
        """The lesson of these settings, frame by frame, until it stops training (Stop cancels the watch)."""
        settings, seconds = settings_of(task, attention, hidden, shortest, longest, seed), seconds_of(seconds)
        async for snapshot in self.lessons.watch(settings, bool(beside), seconds, more):
            yield self.drawn(settings, bool(beside), snapshot, bool(large))

    def drawn(self, settings: ToySettings, beside: bool, snapshot: dict, large: bool) -> Frame:
        """A snapshot's Frame, drawn once for all its watchers: a class watching one lesson would otherwise draw
        the same figures once a second for every student, on the loop that serves the page."""
        changes = (snapshot[k] for k in ("frames", "place", "training", "over", "error"))
        key = (lesson_key(settings, beside), large, *changes)
        with self.drawing:
            if key not in self.frames:
                self.frames[key] = frame(settings, snapshot, large)
                while len(self.frames) > FRAMES_KEPT:
                    self.frames.popitem(last=False)
            return self.frames[key]

    async def go_on(self, task, attention, hidden, shortest, longest, seed, beside, seconds, large):
        async for values in self.watch(task, attention, hidden, shortest, longest, seed, beside, seconds, large, more=True):
            yield values

    def try_input(self, task, attention, hidden, shortest, longest, seed, beside, text) -> Tried:
        """A typed input through the lesson's models, as the page's step views draw it."""
        settings = settings_of(task, attention, hidden, shortest, longest, seed)
        lesson = self.lessons.built(settings, beside)
        if lesson is None:
            return Tried("Train a model with these settings first: nothing has been trained with them yet.", None,
                         gr.update())
        try:
            text = read_input(settings, text)
            results = self.lessons.translate(lesson, text)
        except (ValueError, RuntimeError) as error:  # an input it cannot read; its trainer stopped
            return Tried(str(error), None, gr.update())
        payload = step_views([(f"{KINDS[result.attention_type].title}: {result.text or '(nothing)'}", result,
                               pca_projection(result.encoder_states), ()) for result in results])
        wanted = TASKS[settings.task].target(text)
        said = "; ".join(f"{KINDS[r.attention_type].title} writes **{r.text or '(nothing)'}**"
                         f" ({'right' if r.text == wanted else 'wrong'})" for r in results)
        return Tried(f"{said}. Exactly right: **{wanted}**.", payload, gr.update(value=1, maximum=max(2, payload["steps"])))

    def render(self, large_text: gr.Checkbox):
        gr.Markdown(EXPLANATION, latex_delimiters=LATEX)
        with gr.Row():
            task = gr.Radio(list(TASKS), value="reverse", label="Task", elem_id="train-task")
            attention = gr.Dropdown([(KINDS[kind].title, kind) for kind in ATTENTION_TYPES], value="bahdanau",
                                    label="Attention", elem_id="train-attention-kind")
            beside = gr.Checkbox(True, label="Beside it, the same model without attention", elem_id="train-beside")
        with gr.Row():
            hidden = gr.Slider(16, 128, value=ToySettings.hidden, step=16, label="Hidden size H", elem_id="train-hidden")
            shortest = gr.Slider(1, 30, value=ToySettings.min_length, step=1, label="Shortest input trained on",
                                 info="digits (a date has its own lengths)", elem_id="train-shortest")
            longest = gr.Slider(1, 30, value=ToySettings.max_length, step=1, label="Longest input trained on",
                                elem_id="train-longest")
        with gr.Row(equal_height=True):
            seed = gr.Number(0, precision=0, label="Seed", info="the same settings and seed: the same run", minimum=0,
                             elem_id="train-seed")
            seconds = gr.Slider(5, MAX_SECONDS, value=30, step=5, label="Seconds of training", elem_id="train-seconds")
            train = gr.Button("Train", variant="primary", elem_id="train-start")
            stop = gr.Button("Stop", elem_id="train-stop")
            more = gr.Button("Go on", elem_id="train-more")
        shown = Frame(gr.Markdown("Press **Train**: the first frame shows at once.", elem_id="train-status"),
                      gr.Plot(show_label=False, elem_id="train-loss"), gr.Plot(show_label=False, elem_id="train-accuracy"),
                      gr.Plot(show_label=False, elem_id="train-grid"),
                      gr.Markdown(latex_delimiters=LATEX, elem_classes=HIDDEN_WHEN_EMPTY, elem_id="train-grid-note"))
        gr.Markdown("#### Type an input to the trained models, then step through it")
        with gr.Row():
            text = gr.Textbox(TASKS["reverse"].example, label="Input", max_length=30, elem_id="train-input", scale=3)
            run_it = gr.Button("Run it", elem_id="train-run", scale=0, min_width=120)
        said = gr.Markdown(elem_id="train-said")
        with gr.Column(elem_id=STEPS.element_id):
            slider = STEPS.scrubber("train_")
            with gr.Row():
                for side in RUN_SIDES:
                    with gr.Column():
                        step_slot(f"{side}-step")
        steps_json = gr.JSON(visible=False)  # the step views' payload, kept in the browser for step_views.js
        inputs = [task, attention, hidden, shortest, longest, seed, beside]
        watching = [train.click(self.watch, [*inputs, seconds, large_text], list(shown), api_name="train_watch", **WATCH_CALLS),
                    more.click(self.go_on, [*inputs, seconds, large_text], list(shown), api_name="train_more", **WATCH_CALLS)]
        stop.click(None, None, None, cancels=watching, api_name="train_stop")
        task.change(lambda name: TASKS[name].example, task, text, queue=False, show_progress="hidden",
                    api_name="train_example")
        run_it.click(self.try_input, [*inputs, text], [said, steps_json, slider], api_name="train_try").then(
            None, [steps_json, large_text], None, js=STEPS.load, api_name="train_load_steps")

    def warm_up(self):
        """Start the toy models' process (torch and its compiler imported, 3–6 s) while the page waits for visitors: a
        class's first Train then shows its first frame at once."""
        if isinstance(self.lessons.workshop, Worker):
            self.lessons.workshop.start()

    def render_api(self):
        gr.api(self.train_toy, api_name="train_toy", **TOY_CALLS)


def number(value, what: str) -> float:
    """A number from a client, or a ValueError naming `what`."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a number, not {str(value)[:20]!r}.") from None


def whole(value, what: str) -> int:
    """A whole number from a client (which may send 3.0), or a ValueError naming `what`."""
    value = number(value, what)
    if not value.is_integer():
        raise ValueError(f"The {what} must be a whole number, not {value:g}.")
    return int(value)
