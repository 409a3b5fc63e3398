"""Train attention live: a class trains a toy model (attn_demo.training.toy) on the server and watches it learn where
to look, with the same model without attention beside it failing on the long strings.

Train starts the lesson of the settings and seed on screen, or joins the class's (serving.toy_runs: one run per
settings, watched by all who ask, TRAINERS at once, the others queued and told their place); about every second the
page shows the loss, the held-out strings exactly right by length and α of one of them, drawn with the page's own
grid. Stop leaves it (it pauses when nobody watches), Go on asks for more seconds, and a typed input goes through
the trained models into the page's own step views. Share gives a link (and its QR code) that opens the section with
the lesson's settings and seed: pressing Train there trains the same run, update for update. The REST API's train_toy(task, attention, seconds, seed) trains
a new run for that long and answers one JSON object (toy.ToyRun.measure), for a lesson checked without a browser;
the same request asked by a class at once is one run (ComputedOnce), and it waits for a trainer like a lesson.
"""
import html
import threading
from collections import OrderedDict
from typing import NamedTuple
from urllib.parse import quote, urlencode

import gradio as gr

from attn_demo.models.attention import KINDS
from attn_demo.models.config import ATTENTION_TYPES
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.serving.toy_runs import ToyRuns, lesson_key
from attn_demo.serving.toy_worker import Worker
from attn_demo.training.toy import MAX_SECONDS, MAX_SEED, TASKS, ToySettings, read_input
from attn_demo.ui.page import HIDDEN_WHEN_EMPTY, LATEX, NO_GRID, plot, section_id
from attn_demo.ui.share import PAGE_ADDRESS, class_address, qr_code
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
SECTION = "train"  # this section's key in page.CONTENTS: where a lesson's link opens
# what the section's controls can hold, and so what a lesson's link may ask for
CHOICES = {"task": {task: task for task in TASKS}, "attention": {kind: kind for kind in ATTENTION_TYPES},
           "beside": {"1": True, "0": False}}
RANGES = {"hidden": range(16, 129, 16), "shortest": range(1, 31), "longest": range(1, 31), "seed": range(MAX_SEED + 1),
          "seconds": range(5, int(MAX_SECONDS) + 1, 5)}
LESSON_FIELDS = ("task", "attention", "hidden", "shortest", "longest", "seed", "beside", "seconds")  # a link's query
LESSON_DEFAULTS = {"task": ToySettings.task, "attention": ToySettings.attention, "hidden": ToySettings.hidden,
                   "shortest": ToySettings.min_length, "longest": ToySettings.max_length, "seed": ToySettings.seed,
                   "beside": True, "seconds": 30}
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

    def __init__(self, runs: ToyRuns | None = None, share=None):
        self.lessons = runs if runs is not None else ToyRuns()
        self.share = share  # the page's ShareSection: where the app opens, for a lesson's link (None: the page's own)
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

    def share_lesson(self, page: str, task, attention, hidden, shortest, longest, seed, beside, seconds) -> list:
        """The lesson's link and QR code: the app's address others can open (share.class_address), a line where it
        is not the page's own."""
        settings, seconds = settings_of(task, attention, hidden, shortest, longest, seed), seconds_of(seconds)
        address, note = class_address(page, self.share.reach) if self.share and self.share.reach else (page, "")
        url = lesson_link(address, settings, bool(beside), seconds)
        return [gr.update(value=url, visible=True), note, gr.update(value=qr_code(url), visible=True)]

    def open_lesson(self, request: gr.Request) -> list:
        """As the page opens: the controls set to the lesson its link asks for, and the status saying so (each value
        that was off named); nothing changed for a link without a lesson."""
        lesson, problems = read_lesson(dict(request.query_params) if request else {})
        if lesson is None:
            return [gr.update()] * (len(LESSON_FIELDS) + 1)
        settings = ToySettings(lesson["task"], lesson["attention"], lesson["hidden"], lesson["shortest"],
                               lesson["longest"], seed=lesson["seed"])
        said = (f"**A shared lesson:** {settings.task}, {KINDS[settings.attention].title}, H = {settings.hidden}, inputs "
                f"of {settings.min_length}–{settings.max_length} {unit(settings)}, seed {settings.seed}. Press **Train**: "
                "the same settings and seed train the same run, update for update.")
        return [*(lesson[name] for name in LESSON_FIELDS), " ".join(["⚠️", *map(html.escape, problems), said])
                if problems else said]

    def render(self, page: gr.Blocks, large_text: gr.Checkbox):
        """The section inside the page's gr.Blocks; large_text is the page's projector switch."""
        gr.Markdown(EXPLANATION, latex_delimiters=LATEX)
        with gr.Row():
            task = gr.Radio(list(TASKS), value=LESSON_DEFAULTS["task"], label="Task", elem_id="train-task")
            attention = gr.Dropdown([(KINDS[kind].title, kind) for kind in ATTENTION_TYPES],
                                    value=LESSON_DEFAULTS["attention"], label="Attention", elem_id="train-attention-kind")
            beside = gr.Checkbox(LESSON_DEFAULTS["beside"], label="Beside it, the same model without attention",
                                 elem_id="train-beside")
        with gr.Row():
            hidden = range_slider("hidden", label="Hidden size H", elem_id="train-hidden")
            shortest = range_slider("shortest", label="Shortest input trained on", info="digits (a date has its own lengths)",
                              elem_id="train-shortest")
            longest = range_slider("longest", label="Longest input trained on", elem_id="train-longest")
        with gr.Row(equal_height=True):
            seed = gr.Number(LESSON_DEFAULTS["seed"], precision=0, label="Seed", minimum=0, maximum=MAX_SEED,
                             info="the same settings and seed: the same run", elem_id="train-seed")
            seconds = range_slider("seconds", label="Seconds of training", elem_id="train-seconds")
            train = gr.Button("Train", variant="primary", elem_id="train-start")
            stop = gr.Button("Stop", elem_id="train-stop")
            more = gr.Button("Go on", elem_id="train-more")
        with gr.Row():
            share = gr.Button("Share this lesson: link and QR code", elem_id="train-share", scale=0, min_width=320)
            address = gr.Textbox(visible=False)  # the page's address, filled in by the browser
        link = gr.Textbox(label="Link to this lesson", visible=False, interactive=False, buttons=["copy"],
                          elem_id="train-share-link")
        link_note = gr.Markdown(elem_id="train-share-note", elem_classes=HIDDEN_WHEN_EMPTY)
        code = gr.HTML(visible=False, elem_id="train-share-qr")
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
        share.click(None, None, address, js=PAGE_ADDRESS, api_name="train_share_address").then(
            self.share_lesson, [address, *inputs, seconds], [link, link_note, code], api_name="train_share")
        controls = dict(zip(("task", "attention", "hidden", "shortest", "longest", "seed", "beside"), inputs),
                        seconds=seconds)
        page.load(self.open_lesson, None, [*(controls[name] for name in LESSON_FIELDS), shown.status], queue=False,
                  show_progress="hidden", api_name="train_open")
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


def range_slider(name: str, **labels) -> gr.Slider:
    """A slider over RANGES[name], at the lesson's default."""
    values = RANGES[name]
    return gr.Slider(values.start, values[-1], value=LESSON_DEFAULTS[name], step=values.step, **labels)


def lesson_link(address: str, settings: ToySettings, beside: bool, seconds: float) -> str:
    """The page's address with a lesson as its query (LESSON_FIELDS), opening on this section."""
    values = (settings.task, settings.attention, settings.hidden, settings.min_length, settings.max_length,
              settings.seed, int(beside), f"{seconds:g}")
    return f"{address}?{urlencode(dict(zip(LESSON_FIELDS, values)))}#{quote(section_id(SECTION))}"


def read_lesson(params: dict) -> tuple[dict | None, list[str]]:
    """The lesson a link asks for (LESSON_FIELDS), each value one the section's controls can hold, the default for
    what is missing or off, and a line for each value that was off (plain text: the caller escapes it); None where
    the link asks for no lesson."""
    if not any(name in params for name in LESSON_FIELDS):
        return None, []
    lesson, problems = dict(LESSON_DEFAULTS), []
    for name in (name for name in LESSON_FIELDS if name in params):
        value = lesson_value(name, str(params[name]))
        if value is None:
            problems.append(f"The link's {name} {str(params[name])[:20]!r} is not {offered(name)}; showing "
                            f"{LESSON_DEFAULTS[name]}.")
        else:
            lesson[name] = value
    if lesson["shortest"] > lesson["longest"]:
        problems.append(f"The link's shortest length {lesson['shortest']} is over its longest {lesson['longest']}; "
                        f"showing {LESSON_DEFAULTS['shortest']}–{LESSON_DEFAULTS['longest']}.")
        lesson.update(shortest=LESSON_DEFAULTS["shortest"], longest=LESSON_DEFAULTS["longest"])
    return lesson, problems


def lesson_value(name: str, text: str):
    """A link's value for the control `name`, or None where that control cannot hold it."""
    if name in CHOICES:
        return CHOICES[name].get(text)
    whole_number = text.isascii() and text.isdigit() and len(text) <= 10
    return int(text) if whole_number and int(text) in RANGES[name] else None


def offered(name: str) -> str:
    """What the control `name` can hold, in words."""
    if name in CHOICES:
        return "one of " + ", ".join(CHOICES[name])
    values = RANGES[name]
    return f"a whole number from {values.start} to {values[-1]}" + (f" in steps of {values.step}" if values.step > 1 else "")


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
