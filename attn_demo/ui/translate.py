"""Translate and scrub: both models translate the sentence side by side, each with its alignment
grid, and a decoder-step scrubber shows how every context vector c_t is formed. The server sends
every step of both models once (step_data); step_views.js draws any step from it in the browser,
so scrubbing costs the server nothing and a step change takes milliseconds."""
import functools
import hashlib
import html
import json
import os
import tempfile
import time
from pathlib import Path

import gradio as gr
import torch

from attn_demo.alignment import words_view
from attn_demo.batching import MicroBatcher
from attn_demo.checkpoint import TITLES as CARD_TITLES
from attn_demo.figures import alignment_figure
from attn_demo.steps import VECTOR_COLORSCALE, pca_projection, step_payload
from attn_demo.tokenizer import named, normalise_english

TITLES = {**CARD_TITLES, "none": "No attention (baseline)"}  # the cards' "no" reads "no attention" there
SCORE_EQUATIONS = {
    "bahdanau": r"e_{tj} = v^\top \tanh(W_h h_j + W_s s_{t-1})",
    "luong-general": r"e_{tj} = s_t^\top W h_j",
    "luong-dot": r"e_{tj} = s_t^\top h_j",
    "luong-concat": r"e_{tj} = v^\top \tanh(W [s_t; h_j])",
    "luong-lowrank": r"e_{tj} = (U s_t)^\top (V h_j)",
}
QUERY_WORDS = {
    "s_{t-1}": "The query is the **previous** decoder state $s_{t-1}$: Bahdanau attends first, then the GRU "
               "reads $c_t$ to make the new state, $s_t = \\mathrm{GRU}([E y_{t-1}; c_t], s_{t-1})$.",
    "s_t": "The query is the **current** decoder state $s_t = \\mathrm{GRU}(E y_{t-1}, s_{t-1})$: Luong updates the "
           "state first, then attends; $c_t$ feeds the output, $\\tilde h_t = \\tanh(W_c [c_t; s_t])$.",
}
EXAMPLES = [
    "The red car is in front of the house.",
    "I don't like coffee.",
    "I have never seen such a beautiful sunset.",
    "We are going to the cinema tomorrow evening.",
    "She gave the book to her little brother yesterday.",
    "If you have any questions, please don't hesitate to ask me after the lesson.",
]
UNITS = ("pieces", "words")  # what the alignment grids show: SentencePiece pieces, or whole words
CONCURRENCY = 48  # requests in /translate at once; they all wait on one decoding worker (the batcher)
TRACE_DIR = Path(tempfile.gettempdir()) / "attn-demo-traces"  # shared by restarts; files older than an hour go
TRACE_MAX_AGE_S = 3600
LATEX = [{"left": "$$", "right": "$$", "display": True}, {"left": "$", "right": "$", "display": False}]
STEP_VIEWS_JS = (Path(__file__).parent / "step_views.js").read_text()  # defines window.attnSteps when the page loads
STEP_VIEWS_CSS = (Path(__file__).parent / "step_views.css").read_text()
LOAD_STEPS = "(payload, large) => { window.attnSteps.load(payload, large); }"
SHOW_STEP = "(t) => { window.attnSteps.show(t); }"
PREVIOUS_STEP = "(t) => window.attnSteps.move(t, -1)"
NEXT_STEP = "(t) => window.attnSteps.move(t, +1)"
PLAY = "(t) => window.attnSteps.play(t)"
RELAYOUT_STEPS = "(large) => { window.attnSteps.relayout(large); }"


def model_title(translator) -> str:
    return TITLES[translator.config.attention]


def key_size(translator) -> int:
    """The size of the keys attention computes once per sentence from h_j (project_keys)."""
    annotations = torch.zeros(1, 1, translator.config.annotation_size, device=translator.device)
    with torch.inference_mode():
        return translator.model.decoder.attention.project_keys(annotations).shape[-1]


def equations_markdown(translator) -> str:
    config = translator.config
    return (f"$${SCORE_EQUATIONS[config.attention]}$$\n"
            r"$$\alpha_{tj} = \frac{\exp e_{tj}}{\sum_k \exp e_{tk}} \qquad c_t = \sum_j \alpha_{tj} h_j$$"
            f"\n\n{QUERY_WORDS[translator.model.query_symbol]}\n\n"
            f"Sizes: H = {config.dec_hidden_size}, D = {config.annotation_size}; the keys, computed once per "
            f"sentence from the $h_j$, are (B, S, {key_size(translator)}).")


def unknown_notice(views) -> str:
    """The status of a translated input: the characters the models read as <unk>, named (escaped:
    the status is Markdown, and a '<' must show as text), or nothing when they know them all."""
    unknown = list(dict.fromkeys(ch for view in views.values() for ch in view["result"].unknown_characters))
    if not unknown:
        return ""
    return "ℹ️ " + html.escape(f"Not in the models' vocabulary, read as <unk>: {named(unknown)}")


def steps_of(state) -> int:
    return max(len(view["result"].target_tokens) for view in state["views"].values())


class TranslateSection:
    """The section's handlers over one set of loaded models ({"bahdanau": Translator, "luong": …}),
    shared by every session: the models keep no per-call state and the cached results are read-only."""

    def __init__(self, models: dict):
        self.models = models
        weights = b"".join((translator.folder / "model.safetensors").read_bytes() for translator in models.values())
        self.fingerprint = hashlib.sha1(weights).hexdigest()  # trace files of other weights are never served
        self.batcher = MicroBatcher(self.translate_requests, key=lambda request: request[1], max_batch=CONCURRENCY,
                                    window_s=0.005)
        # a class typing the same example 60 times costs one translation
        self.translate_both = functools.lru_cache(maxsize=512)(self._translate_both)

    def trace_file(self, state) -> str | None:
        """The session's traces as a JSON file for the download button; written once per input and
        beam size and set of models (a restart with other weights writes new files), after the
        translation is on screen, and removed after an hour."""
        if not state:
            return None
        TRACE_DIR.mkdir(exist_ok=True)
        key = hashlib.sha1(f"{self.fingerprint}|{state['beam_size']}|{state['text']}".encode()).hexdigest()[:16]
        path = TRACE_DIR / f"attention-trace-{key}.json"
        if not path.exists():
            for old in TRACE_DIR.glob("*.json"):
                if time.time() - old.stat().st_mtime > TRACE_MAX_AGE_S:
                    old.unlink(missing_ok=True)
            payload = {"source": state["text"], "beam_size": state["beam_size"],
                       **{name: view["result"].to_dict() for name, view in state["views"].items()}}
            partial = path.with_suffix(f".{os.getpid()}.{time.monotonic_ns()}.part")
            partial.write_text(json.dumps(payload))
            partial.replace(path)  # atomic: two users asking at once never see half a file
        return str(path)

    def translate_requests(self, requests: list) -> list:
        """[(text, beam size)] sharing one beam size → {model name: Translation} per request; each
        model decodes them as one batch."""
        texts, beam_size = [text for text, _ in requests], requests[0][1]
        per_model = {name: translator.translate_batch(texts, beam_size=beam_size) for name, translator in self.models.items()}
        return [{name: results[i] for name, results in per_model.items()} for i in range(len(texts))]

    def _translate_both(self, text: str, beam_size: int) -> dict:
        """Both models' views of a normalised input (normalise_english): the translation and the PCA
        projection of its encoder states. Concurrent requests are decoded together (self.batcher);
        the results are read-only, so sharing them between sessions is safe."""
        for translator in self.models.values():
            translator.encode(text)  # a bad input fails here, alone, before it can join a batch
        results = self.batcher((text, beam_size))  # the one decoding thread does nothing but decode
        return {name: {"result": result, "projection": pca_projection(result.encoder_states)}
                for name, result in results.items()}

    def warm_up(self):
        """The examples answer at once, from the first click on."""
        for example in EXAMPLES:
            self.translate_both(example, 1)

    def grid(self, name, view, large, unit="pieces"):
        """A model's alignment grid, by piece or by word: an English word's α is the sum of its
        pieces' (the attention mass on the word), a French word's row the mean of its pieces' rows."""
        result, title = view["result"], model_title(self.models[name])
        if unit == "words":
            source, target, attention = words_view(result.source_tokens, result.target_tokens, result.attention)
            return alignment_figure(source, target, attention, f"{title}: α by word", large, unit="words")
        return alignment_figure(result.source_tokens, result.target_tokens, result.attention,
                                f"{title}: α<sub>tj</sub> by piece", large)

    def model_steps(self, name, view) -> dict:
        """One model's steps for step_views.js (attn_demo.steps.step_payload)."""
        result = view["result"]
        return step_payload(model_title(self.models[name]), result.source_tokens, result.target_tokens,
                            result.query_symbol, result.queries, result.scores, result.attention,
                            result.encoder_states, result.contexts, view["projection"])

    def translate(self, text: str, beam_size: float, large: bool, unit: str = "pieces"):
        """Translate with both models: the session state, the status (a refusal, or the characters read
        as <unk>), the translations and the alignment grids. The step views follow in a chained event
        (step_data), so the translation shows sooner."""
        try:
            text = normalise_english(text)
            views = self.translate_both(text, int(beam_size))
        except ValueError as error:
            return [None, f"⚠️ {html.escape(str(error))}", "", None, "", None, gr.update(value=1, maximum=2)]
        state = {"text": text, "beam_size": int(beam_size), "views": views}
        return [state, unknown_notice(views),
                views["bahdanau"]["result"].text, self.grid("bahdanau", views["bahdanau"], large, unit),
                views["luong"]["result"].text, self.grid("luong", views["luong"], large, unit),
                gr.update(value=1, maximum=max(2, steps_of(state)))]

    def step_data(self, state) -> dict | None:
        """Every decoder step of both models in one compact payload: the page draws any step from it
        (step_views.js), so scrubbing costs the server nothing. None before any translation."""
        if not state:
            return None
        return {"steps": steps_of(state), "colorscale": VECTOR_COLORSCALE,
                "models": {name: self.model_steps(name, view) for name, view in state["views"].items()}}

    def grids(self, state, large, unit="pieces"):
        """Both alignment grids of the session's translation (nothing before one)."""
        if not state:
            return None, None
        return tuple(self.grid(name, state["views"][name], large, unit) for name in ("bahdanau", "luong"))

    def render(self, large_text: gr.Checkbox) -> gr.State:
        """The section's components and events, inside the page's gr.Blocks; large_text is the page's
        projector switch, which redraws this section's figures. Returns the session state (the last
        translation), which later sections ask about."""
        session = gr.State(None)
        with gr.Row(equal_height=True):
            source_box = gr.Textbox(label="English sentence", placeholder="Type a sentence and press Enter", scale=5,
                                    max_length=5000, autofocus=True, min_width=300)  # a phone: the row wraps
            beam_slider = gr.Slider(1, 8, value=1, step=1, label="Beam size (1 = greedy)", scale=2)
            translate_button = gr.Button("Translate", variant="primary", scale=1)
        gr.Examples(EXAMPLES, inputs=source_box, label="Examples worth watching")
        status = gr.Markdown(elem_id="status")
        unit = gr.Radio(list(UNITS), value="pieces", label="Alignment grids by", elem_id="grid-unit",
                        info="By word: an English word's α is the sum of its pieces' α (the attention on the "
                             "word); a French word's row is the mean of its pieces' rows, so rows still sum to 1.")
        columns = {}
        with gr.Row():
            for name, translator in self.models.items():
                with gr.Column():
                    gr.Markdown(f"## {model_title(translator)}")
                    text = gr.Textbox(label="French", interactive=False, elem_classes="translation", elem_id=f"{name}-text")
                    grid = gr.Plot(label="Alignment grid", show_label=False, elem_id=f"{name}-grid", elem_classes="attn-wide")
                    columns[name] = (text, grid)
        gr.Markdown("## Decoder steps: how each context vector $c_t$ is formed\nShapes are printed as an "
                    "implementer sees them for this sentence: B sentences in the batch (1 here), S English pieces "
                    "(&lt;/s&gt; included), H the size of a decoder state $s_t$, D the size of an annotation $h_j$.",
                    latex_delimiters=LATEX)
        with gr.Row(equal_height=True):
            previous_button = gr.Button("◀ Previous step", scale=1)
            step_slider = gr.Slider(1, 2, value=1, step=1, label="Output step t", scale=4, elem_id="step-slider")
            next_button = gr.Button("Next step ▶", scale=1, elem_id="next-step")
            play_button = gr.Button("▶ Play", scale=1, elem_id="play-steps")
        with gr.Row():
            for name, translator in self.models.items():
                with gr.Column():
                    gr.Markdown(equations_markdown(translator), latex_delimiters=LATEX)
                    gr.HTML(elem_id=f"{name}-step")  # step_views.js draws the step view in here
        trace_download = gr.DownloadButton("Download the traces (JSON)", value=None)
        gr.Markdown("Pieces come from SentencePiece; ▁ marks the start of a word and &lt;/s&gt; ends the sentence.")

        steps_json = gr.JSON(visible=False)  # step_data's output, kept in the browser for step_views.js
        (b_text, b_grid), (l_text, l_grid) = columns["bahdanau"], columns["luong"]
        translate_outputs = [session, status, b_text, b_grid, l_text, l_grid, step_slider]
        gr.on([translate_button.click, source_box.submit], self.translate, [source_box, beam_slider, large_text, unit],
              translate_outputs, api_name="translate", concurrency_limit=CONCURRENCY).then(
            self.step_data, session, steps_json, api_name="step_data").then(
            None, [steps_json, large_text], None, js=LOAD_STEPS, api_name="load_steps").then(
            self.trace_file, session, trace_download, api_name="trace_file")
        # scrubbing runs in the browser only: no round trip, no server work
        step_slider.input(None, step_slider, None, js=SHOW_STEP, api_name="show_step", trigger_mode="always_last")
        previous_button.click(None, step_slider, step_slider, js=PREVIOUS_STEP, api_name="previous_step")
        next_button.click(None, step_slider, step_slider, js=NEXT_STEP, api_name="next_step")
        play_button.click(None, step_slider, step_slider, js=PLAY, api_name="play")
        unit.change(self.grids, [session, large_text, unit], [b_grid, l_grid], api_name="grid_unit")
        large_text.change(self.grids, [session, large_text, unit], [b_grid, l_grid], api_name="restyle")
        large_text.change(None, large_text, None, js=RELAYOUT_STEPS, api_name="relayout_steps")
        return session
