"""Translate and scrub: the models picked for the two sides translate the sentence side by side,
each with its alignment grid, and a decoder-step scrubber shows how every context vector c_t is
formed. The server sends every step of both sides once (step_data); step_views.js draws any step
from it in the browser, so scrubbing costs the server nothing and a step change takes milliseconds.

Nothing here names a model: the section works on the catalogue it is given (attn_demo.serving.catalogue),
and what it says about each one comes from its attention type's description (attention.KINDS)."""
import dataclasses
import functools
import hashlib
import html
import json
from collections.abc import Callable
from dataclasses import dataclass, fields

import gradio as gr
import numpy as np
import orjson

from attn_demo.examples import EXAMPLES
from attn_demo.models.attention import KINDS
from attn_demo.models.tokenizer import named, normalise_english
from attn_demo.training.coverage import LONG_WORDS, unseen_words
from attn_demo.ui.page import HIDDEN_WHEN_EMPTY, LATEX, SIDES, ModelsOnPage, grid_values
from attn_demo.ui.share import read_link
from attn_demo.ui.step_group import StepGroup, heads_slot, network_slot, pick_slot, self_attention_slot, step_slot
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.views.translation import coverage_marks, grid_figure, read_pick, step_data, steps_of, under_grid

UNITS = ("pieces", "words")  # what the alignment grids show: SentencePiece pieces, or whole words
CONCURRENCY = 48  # requests in /translate at once; they wait on the decoding workers (catalogue.Model)
STEPS = StepGroup("translate-steps")  # this section's scrubber and step views (step_views.js)
# a link's step t, kept within the translation, returned for the slider; step 1 (no step asked for)
# leaves the page as it is, in case the user has moved on before the page finished opening
MOVE_TO_STEP = f"(t) => t > 1 ? {STEPS.call('move(t, 0)')} : {STEPS.call('t')}"
# Each side's grid as an SVG file, drawn by the page's own plotly.js (its camera button saves a PNG);
# a side without a grid (no attention) is skipped.
GRIDS_AS_SVG = f"""() => {{
  for (const side of {json.dumps(SIDES)}) {{
    const plot = document.querySelector(`#${{side}}-grid .js-plotly-plot`);
    if (plot && plot.offsetParent !== null) window.Plotly.downloadImage(plot, {{ format: "svg", filename: `alignment-grid-${{side}}` }});
  }}
}}"""
# what a link sets as the page opens, before the translation
LINK_VIEW = ("q", "beam", "unit", "left", "right", "step", "left_grid", "right_grid")


@dataclass(frozen=True)
class Side:
    """What a translation shows on one side of the page."""

    heading: str
    equations: str
    text: str = ""
    grid: object = None  # the alignment grid as gr.Plot's value (ui.page.plot), None without one
    note: str = ""  # under the grid: why there is none, or which of a Transformer's grids it is
    coverage: str = ""  # under the grid: the coverage row, a Transformer's every note and row (views.under_grid)


FIELDS = tuple(field.name for field in fields(Side))
GRID_FIELDS = ("grid", "note", "coverage")  # what a redraw of the grids sends for each side (grids)


@dataclass(frozen=True)
class Reply:
    """What a translation, or a refusal (state None), puts on the page."""

    state: dict | None  # the session: the sentence, beam size, the key picked on each side and their views
    status: str  # a refusal, or the notices about the input
    sides: dict  # {side: Side}
    slider: dict  # the step slider's update

    def values(self) -> list:
        """The reply as Gradio takes it, in the order of the section's outputs."""
        return [self.state, self.status, *(getattr(self.sides[side], name) for side in SIDES for name in FIELDS), self.slider]


def replying(handler: Callable) -> Callable:
    """handler, answering Gradio with its Reply's values (the signature stays handler's, gr.Request included)."""
    @functools.wraps(handler)
    def event(*args, **kwargs):
        return handler(*args, **kwargs).values()
    return event


def equations_markdown(model) -> str:
    """The picked model's attention, from its type's description, with this checkpoint's sizes; for a kind that
    grows from another (KINDS' grows_from), the bridge from that kind's score and what changed."""
    kind, config = model.kind, model.translator.config
    if not model.has_attention:
        return (f"{kind.context}\n\nSizes: H = {config.dec_hidden_size}, D = {config.annotation_size}; c has "
                f"D = {config.annotation_size} numbers for a sentence of any length.")
    if kind.heads:
        sizes = (f"Sizes: D = {config.d_model}, H = {config.heads} heads of d_k = {kind.keys(config)}, L = {config.dec_layers} "
                 f"decoder layers ({config.enc_layers} encoder); each layer's keys and values, computed once per sentence "
                 f"from the $h_j$, are (B, L, 2, H, S, {kind.keys(config)}).")
    else:
        sizes = (f"Sizes: H = {config.dec_hidden_size}, D = {config.annotation_size}; the keys, computed once per "
                 f"sentence from the $h_j$, are (B, S, {kind.keys(config)}).")
    text = (f"$${kind.score}$$\n"
            f"$$\\alpha_{{tj}} = \\frac{{\\exp e_{{tj}}}}{{\\sum_k \\exp e_{{tk}}}} \\qquad {kind.combine}$$"
            f"\n\n{kind.context}\n\n{sizes}")
    if kind.grows_from:
        before, changes = kind.grows_from
        text += f"\n\n**From {KINDS[before].title}**, $${KINDS[before].score}$$\n{changes}"
    return text


def heading_markdown(model) -> str:
    metrics = model.translator.metrics
    bleu = f" · test BLEU {metrics['bleu']}" if "bleu" in metrics else ""
    return f"## {model.title}\n`{model.key}`{bleu}"


def unknown_notice(views) -> str:
    """The status of a translated input: the characters the models read as <unk>, named (escaped:
    the status is Markdown, and a '<' must show as text), or nothing when they know them all."""
    unknown = list(dict.fromkeys(ch for view in views.values() for ch in view["result"].unknown_characters))
    if not unknown:
        return ""
    return "ℹ️ " + html.escape(f"Not in the models' vocabulary, read as <unk>: {named(unknown)}")


def unseen_notice(text: str, models) -> str:
    """The status line for the input's words that the picked models never saw in training (they
    can only guess them from their pieces), or nothing."""
    unseen = list(dict.fromkeys(word for model in models if model.translator.training_data
                                for word in unseen_words(text, model.translator.training_data["english_words"])))
    if not unseen:
        return ""
    it, them = ("it", "it") if len(unseen) == 1 else ("any of them", "them")
    return ("ℹ️ Never seen in training: " + ", ".join(f"**{html.escape(word)}**" for word in unseen) +
            f". No English sentence the models learned from contains {it}, so they can only guess {them} from pieces.")


def data_line(models) -> str:
    """One line under the input: what the models learned from, so a long or technical sentence is
    met with the right expectations."""
    facts = {d and (d["dataset"], d["pairs"], d["mean_english_words"], d["pairs_16_plus_words"])
             for d in (model.translator.training_data for model in models)}
    if len(facts) != 1 or None in facts:  # unrecorded, or models that learned from different data: their cards say
        return "What each model learned from: see its model card (Compare them all)."
    dataset, pairs, mean, long = facts.pop()
    return (f"These models learned from {pairs:,} everyday sentence pairs of Tatoeba ({dataset}), {mean:.1f} English words "
            f"on average and {long:,} of {LONG_WORDS} words or more: expect less of long, technical or rare-word sentences.")


def client_reply(values) -> dict:
    """/translate's reply as an API client (gradio_client) receives it, the session state left out
    (Reply's values but the first): {"status": …, "left": {"heading": …, "text": …, …}, "right": {…}, "slider": …}."""
    status, *values, slider = values
    sides = {side: dict(zip(FIELDS, values[len(FIELDS) * i:len(FIELDS) * (i + 1)])) for i, side in enumerate(SIDES)}
    return {"status": status, **sides, "slider": slider}


class TranslateSection:
    """The section's handlers over the models on the page (ui.page.ModelsOnPage), shared by every
    session. A session's state holds its sentence, beam size, the key picked on each side and those
    models' (cached, read-only) views of the sentence."""

    def __init__(self, models: ModelsOnPage, files: TraceFiles):
        self.models = models
        self.files = files

    def trace_file(self, state) -> str | None:
        """The session's traces as a JSON file for the download button; written once per input, beam
        size and pair of models (a restart with other weights writes new files), after the
        translation is on screen, and removed after an hour."""
        if not state:
            return None
        models = [self.models.picked(state, side) for side in SIDES]
        fingerprints = "|".join(model.fingerprint for model in models)
        key = hashlib.sha1(f"{fingerprints}|{state['beam_size']}|{state['text']}".encode()).hexdigest()[:16]

        def contents() -> bytes:
            payload = {"source": state["text"], "beam_size": state["beam_size"],
                       "models": {model.key: {"title": model.title, **state["views"][side]["result"].to_dict(),
                                              "coverage_marks": coverage_marks(model, state["views"][side])}
                                  for side, model in zip(SIDES, models)}}
            # orjson writes the float32 arrays as they are, each number in the fewest digits that read
            # back to it: 25 times faster than json with lists of Python floats (BENCHMARKS.md)
            return orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY, default=np.ascontiguousarray)
        return self.files.write(f"attention-trace-{key}.json", contents)

    def warm_up(self):
        """The examples answer at once with the models the page opens on, from the first click on."""
        for example in EXAMPLES:
            for key in set(self.models.opening.values()):
                self.models[key].view(example, 1)

    def grid(self, model, view, large, unit="pieces", grid_pick: str = "") -> dict:
        """A model's alignment grid, its note and what is under it, by GRID_FIELDS: without attention, no grid
        and a note saying why (ui.page.grid_values); a Transformer's, the grid its Layer and Head pick (views.read_pick),
        with every grid's note and coverage row under it (views.under_grid)."""
        pick = read_pick(model, grid_pick)
        grid, note = grid_values(grid_figure(model, view, large, unit, pick))
        return {"grid": grid, "note": note, "coverage": under_grid(model, view, unit, pick)}

    def side(self, model, view, large, unit, grid_pick: str = "") -> Side:
        """One side of the page: the model's heading and equations, and its translation of the sentence (if any)."""
        if view is None:
            return Side(heading_markdown(model), equations_markdown(model))
        return Side(heading_markdown(model), equations_markdown(model), view["result"].text,
                    **self.grid(model, view, large, unit, grid_pick))

    def reply(self, state, picks: dict, status: str, large: bool, unit: str, grid_picks: dict | None = None) -> Reply:
        """What a translation (or a refusal, state None) puts on the page."""
        views, grid_picks = (state["views"] if state else {}), grid_picks or {}
        sides = {side: self.side(self.models[picks[side]], views.get(side), large, unit, grid_picks.get(side, ""))
                 for side in SIDES}
        return Reply(state, status, sides, gr.update(value=1, maximum=max(2, steps_of(self.models.sides(state))) if state else 2))

    def translate(self, text: str, beam_size: float, large: bool, unit: str = "pieces", left: str | None = None,
                  right: str | None = None, left_grid: str = "", right_grid: str = "") -> Reply:
        """Translate with the picked models: the session state, the status (a refusal, or the
        characters read as <unk>), each side's heading, equations, translation, grid and grid note,
        and the step slider. The step views follow in a chained event (step_data), so the
        translation shows sooner. left_grid, right_grid: a Transformer's grid to show (views.read_pick)."""
        picks = {"left": left or self.models.opening["left"], "right": right or self.models.opening["right"]}
        unknown = [key for key in picks.values() if key not in self.models]
        if unknown:
            return self.reply(None, self.models.opening, "⚠️ " + html.escape(f"No model is called {unknown[0]!r} here."), large, unit)
        try:
            text = normalise_english(text)
            views = {side: self.models[key].view(text, int(beam_size)) for side, key in picks.items()}
        except ValueError as error:
            return self.reply(None, picks, f"⚠️ {html.escape(str(error))}", large, unit)
        state = {"text": text, "beam_size": int(beam_size), "picks": picks, "views": views}
        notices = (unknown_notice(views), unseen_notice(text, [self.models[key] for key in picks.values()]))
        return self.reply(state, picks, "\n\n".join(notice for notice in notices if notice), large, unit,
                          {"left": left_grid, "right": right_grid})

    def repick(self, state, large: bool, unit: str, left: str, right: str, left_grid: str = "", right_grid: str = "") -> Reply:
        """A picker changed: the session's sentence with the new pair of models. The model kept on
        the other side answers from its cache, so only the new pick decodes."""
        if not state:
            return self.translate_nothing(large, unit, left, right)
        return self.translate(state["text"], state["beam_size"], large, unit, left, right, left_grid, right_grid)

    def translate_nothing(self, large: bool, unit: str, left: str, right: str) -> Reply:
        """Before any translation: the picked models' headings and equations, nothing else."""
        picks = {"left": left, "right": right}
        if any(key not in self.models for key in picks.values()):
            picks = self.models.opening
        return self.reply(None, picks, "", large, unit)

    def open_link(self, large: bool, request: gr.Request) -> list:
        """The page as it opens: the view a shared link asks for (attn_demo.ui.share), or the first
        example with the opening models, translated; a link's values that are off are named in the status.
        The view's values (LINK_VIEW), then the translation's Reply."""
        defaults = {"q": EXAMPLES[0], **self.models.opening, "beam": 1, "step": 1, "unit": UNITS[0], "left_grid": "",
                    "right_grid": ""}
        view, problems = read_link(dict(request.query_params) if request else {}, defaults, list(self.models.by_key), UNITS)
        for side in SIDES:  # a layer and head the side's model does not have: its shown grid, and a line saying so
            model, grid = self.models[view[side]], view[f"{side}_grid"]
            if grid and read_pick(model, grid) is None:
                problems.append(f"The link's {side} grid {grid!r} is not a layer and head of {model.key}; showing its own.")
                view[f"{side}_grid"] = ""
        reply = self.translate(view["q"], view["beam"], large, view["unit"], view["left"], view["right"],
                               view["left_grid"], view["right_grid"])
        if problems:
            status = " ".join(["⚠️", *map(html.escape, problems), reply.status.removeprefix("⚠️ ")]).strip()
            reply = dataclasses.replace(reply, status=status)
        return [*(view[name] for name in LINK_VIEW), *reply.values()]

    def step_data(self, state) -> dict | None:
        """Every decoder step of both sides (views.step_data), drawn by the page's step and network
        views; None before any translation."""
        return step_data(self.models.sides(state)) if state else None

    def steps_and_trace(self, state) -> tuple:
        """The step data and the trace file, in the one event that follows a translation: every event a
        student waits for costs the framework more than either does (BENCHMARKS.md)."""
        return self.step_data(state), self.trace_file(state)

    def grids(self, state, large, unit="pieces", left_grid: str = "", right_grid: str = "") -> list:
        """Both sides' alignment grids, notes and coverage rows (GRID_FIELDS a side), redrawn from the session;
        nothing before a translation."""
        if not state:
            return [gr.update()] * len(GRID_FIELDS) * len(SIDES)
        redrawn = [self.grid(model, view, large, unit, pick)
                   for (model, view), pick in zip(self.models.sides(state), (left_grid, right_grid))]
        return [side[field] for side in redrawn for field in GRID_FIELDS]

    def side_grid(self, side: str):
        """The handler redrawing one side's grid by word when its Layer or Head changes (GRID_FIELDS, the others
        skipped): the browser draws the grid by piece and shows the pick's note and coverage row at once
        (heads_view.js's drawPick), and sending them again would cost a phone a second redraw of the same."""
        def redraw(state, large, unit, grid_pick: str = "") -> list:
            skipped = {field: gr.skip() for field in GRID_FIELDS}
            if not state or unit != "words":
                return list(skipped.values())
            model = self.models.picked(state, side)
            grid, _ = grid_values(grid_figure(model, state["views"][side], large, unit, read_pick(model, grid_pick)))
            return [{**skipped, "grid": grid}[field] for field in GRID_FIELDS]
        return redraw

    def render(self, page: gr.Blocks, large_text: gr.Checkbox) -> "TranslateControls":
        """The section's components and events, inside the page's gr.Blocks (`page`, which opens translated);
        large_text is the page's projector switch, which redraws this section's figures. Returns what later sections use:
        the session state (the last translation), the pickers, and a way to translate on their events."""
        session = gr.State(None)
        with gr.Row(equal_height=True):
            source_box = gr.Textbox(EXAMPLES[0], label="English sentence", placeholder="Type a sentence and press Enter",
                                    scale=5, max_length=5000, autofocus=True, min_width=300)  # a phone: the row wraps
            beam_slider = gr.Slider(1, 8, value=1, step=1, label="Beam size (1 = greedy)", scale=2,
                                    info="The page opens greedy; the models' scores (cards, Compare) use beam 5.")
            translate_button = gr.Button("Translate", variant="primary", scale=1)
        gr.Markdown(data_line(self.models), elem_id="training-data")
        status = gr.Markdown(elem_id="status")
        opening = self.translate_nothing(False, "pieces", self.models.opening["left"], self.models.opening["right"]).sides
        pickers, sides, grid_picks = [], {}, []
        # step_views.js binds this section's step views, and heads_view.js its heads views, to this element
        with gr.Column(elem_id=STEPS.element_id):
            with gr.Row():
                for side in SIDES:
                    with gr.Column():
                        pickers.append(gr.Dropdown(self.models.choices(), value=self.models.opening[side], label="Model",
                                                   elem_id=f"{side}-model"))
                        sides[side] = {
                            "heading": gr.Markdown(opening[side].heading, elem_id=f"{side}-heading"),
                            "text": gr.Textbox(label="French", interactive=False, elem_classes="translation",
                                               elem_id=f"{side}-text"),
                            "grid": gr.Plot(label="Alignment grid", show_label=False, elem_id=f"{side}-grid"),
                            "note": gr.Markdown(elem_id=f"{side}-grid-note", elem_classes=HIDDEN_WHEN_EMPTY,
                                                latex_delimiters=LATEX),
                            "coverage": gr.HTML(elem_id=f"{side}-coverage"),
                            "equations": opening[side].equations}
                        heads_slot(f"{side}-heads")
                        self_attention_slot(f"{side}-self-attention")
                        grid_picks.append(pick_slot(f"{side}-grid-pick"))
            # under the translations, so that a phone's first screen shows one (the page opens translated)
            unit = gr.Radio(list(UNITS), value="pieces", label="Alignment grids by", elem_id="grid-unit",
                            info="By word: an English word's α is the sum of its pieces' α (the attention on the "
                                 "word); a French word's row is the mean of its pieces' rows, so rows still sum to 1.")
            gr.Examples(EXAMPLES, inputs=source_box, label="Examples worth watching")
            gr.Markdown("## Decoder steps: how each context vector $c_t$ is formed\nShapes are printed as an "
                        "implementer sees them for this sentence: B sentences in the batch (1 here), S English pieces "
                        "(&lt;/s&gt; included), H the size of a decoder state $s_t$, D the size of an annotation $h_j$; "
                        "for a Transformer, H heads of size $d_k$ and D the size of its $x_t$ and $h_j$.",
                        latex_delimiters=LATEX)
            step_slider = STEPS.scrubber()
            with gr.Row():
                for side in SIDES:
                    with gr.Column():
                        sides[side]["equations"] = gr.Markdown(sides[side]["equations"], latex_delimiters=LATEX,
                                                               elem_id=f"{side}-equations")
                        network_slot(f"{side}-network")
                        step_slot(f"{side}-step")
        with gr.Row():
            trace_download = gr.DownloadButton("Download the traces (JSON)", value=None)
            grids_svg = gr.Button("Download the grids (SVG)", elem_id="grids-svg")
        gr.Markdown("Pieces come from SentencePiece; ▁ marks the start of a word and &lt;/s&gt; ends the sentence.")

        steps_json = gr.JSON(visible=False)  # step_data's output, kept in the browser for step_views.js
        outputs = [session, status, *(sides[side][field] for side in SIDES for field in FIELDS), step_slider]
        # a translation's progress shows on the French texts: an empty grid would be drawn for it (page.CSS),
        # and a side without attention has no grid to draw
        progress_on = [sides[side]["text"] for side in SIDES]
        grid_outputs = [sides[side][field] for side in SIDES for field in GRID_FIELDS]

        def with_steps(event, prefix: str, cancellable: bool = False) -> tuple:
            """The step data and trace file follow every translation, then the browser draws the step views;
            returns the server event and the drawing. They decode nothing (the translation is in the session),
            so they skip the queue, a single HTTP request instead of a queued event, which costs the framework
            more than this work (BENCHMARKS.md); unless `cancellable`: only a queued event can be."""
            steps = event.then(self.steps_and_trace, session, [steps_json, trace_download], api_name=f"{prefix}step_data",
                               queue=cancellable)
            drawn = steps.then(None, [steps_json, large_text], None, js=STEPS.load, api_name=f"{prefix}load_steps")
            return steps, drawn

        def open_page() -> tuple:
            """When the page loads: the view of its link (or the first example), then that link's step; returns the
            events a user's own translation cancels."""
            requested_step = gr.Number(1, visible=False)  # not a State: the browser reads it (MOVE_TO_STEP)
            link_view = {"q": source_box, "beam": beam_slider, "unit": unit, "left": pickers[0], "right": pickers[1],
                         "step": requested_step, "left_grid": grid_picks[0], "right_grid": grid_picks[1]}
            opening = page.load(self.open_link, large_text, [*(link_view[name] for name in LINK_VIEW), *outputs],
                                api_name="open_page", show_progress_on=progress_on)
            steps, drawn = with_steps(opening, "open_page_", cancellable=True)
            drawn.then(None, requested_step, step_slider, js=MOVE_TO_STEP, api_name="open_page_step")
            return opening, steps

        # The page opens on its link's view, or on the first example: from the cache (warm_up), so a full room costs
        # nothing. A user who translates or picks before it has opened wins: what is left of the opening is cancelled,
        # so its view is never drawn over the user's. Gradio runs one event's listeners in turn, each to the end of its
        # server call: the cancelling is registered first, to come before the user's translation, not after it.
        gr.on([translate_button.click, source_box.submit, *(picker.input for picker in pickers)], None, None,
              cancels=list(open_page()), api_name="open_page_cancel")
        translate_inputs = [source_box, beam_slider, large_text, unit, *pickers, *grid_picks]
        with_steps(gr.on([translate_button.click, source_box.submit], replying(self.translate), translate_inputs, outputs,
                         api_name="translate", concurrency_limit=CONCURRENCY, show_progress_on=progress_on), "")
        with_steps(gr.on([picker.input for picker in pickers], replying(self.repick), [session, large_text, unit, *pickers, *grid_picks], outputs,
                         api_name="pick_model", concurrency_limit=CONCURRENCY, show_progress_on=progress_on), "pick_")
        # a redraw from the session decodes nothing: it skips the queue, as the step data does (a class switching to
        # words together pays one HTTP request each), and shows no progress: it would draw the baseline's empty grid
        unit.change(self.grids, [session, large_text, unit, *grid_picks], grid_outputs, api_name="grid_unit", queue=False,
                    show_progress="hidden")
        large_text.change(self.grids, [session, large_text, unit, *grid_picks], grid_outputs, api_name="restyle", queue=False,
                          show_progress="hidden")
        for side, grid_pick in zip(SIDES, grid_picks):  # a Transformer's Layer or Head, picked in the browser
            grid_pick.change(self.side_grid(side), [session, large_text, unit, grid_pick],
                             [sides[side][field] for field in GRID_FIELDS], api_name=f"{side}_grid", queue=False,
                             show_progress="hidden")
        grids_svg.click(None, None, None, js=GRIDS_AS_SVG, api_name="grids_svg")

        def translate_after(event, name: str):
            """Translate what the box and the pickers hold once `event` has run (another section's preset)."""
            with_steps(event.then(replying(self.translate), translate_inputs, outputs, api_name=name, show_progress_on=progress_on),
                       f"{name}_")

        return TranslateControls(session, source_box, beam_slider, unit, pickers, grid_picks, step_slider, steps_json,
                                 translate_after)


@dataclass(frozen=True)
class TranslateControls:
    """What later sections and the page use of this one: its session state and inputs, its step
    slider, its step data (in the browser; it changes with every translation shown),
    and translate_after(event, api_name), which translates what the inputs hold once the event has run."""

    session: gr.State
    source: gr.Textbox
    beam: gr.Slider
    unit: gr.Radio
    pickers: list
    grid_picks: list  # each side's Transformer layer and head, "layer.head" (views.read_pick); "" for its shown grid
    step: gr.Slider
    steps: gr.JSON
    translate_after: Callable
