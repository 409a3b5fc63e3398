"""attn-demo: two trained English→French models translate side by side, and the page shows
what each one attended to, step by step.

    pip install -r requirements.txt && python app.py

Environment: ATTN_DEMO_BAHDANAU and ATTN_DEMO_LUONG take a checkpoint folder or a Hub repo id
(default: the checkpoints bundled in checkpoints/). A Hub checkpoint that cannot be fetched or
found in the cache is replaced by the bundled one of the same kind, and the page says so.
"""
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

from attn_demo import load_or_bundled
from attn_demo.batching import MicroBatcher
from attn_demo.figures import alignment_figure, pca_projection, step_views
from attn_demo.tokenizer import check_text

ROOT = Path(__file__).resolve().parent
# One intra-op thread: requests decode at small batch sizes, where a second thread costs more in
# synchronisation than it saves, and the other core is left to the web server (BENCHMARKS.md).
torch.set_num_threads(1)
BUNDLED = {"bahdanau": ROOT / "checkpoints" / "bahdanau-en-fr", "luong": ROOT / "checkpoints" / "luong-en-fr"}
ENVIRONMENT = {"bahdanau": "ATTN_DEMO_BAHDANAU", "luong": "ATTN_DEMO_LUONG"}


def load_models() -> tuple[dict, list[str]]:
    """Each model the environment asks for, or the bundled one where a Hub checkpoint is out of
    reach, and the notices that say so. Where nothing can stand in, one line and exit."""
    models, notices = {}, []
    for name, bundled in BUNDLED.items():
        try:
            models[name], notice = load_or_bundled(os.environ.get(ENVIRONMENT[name], str(bundled)), bundled)
        except (OSError, ValueError) as error:
            raise SystemExit(f"attn-demo cannot start: {ENVIRONMENT[name]}: {error}") from None
        if notice:
            print(f"attn-demo: {notice}", flush=True)
            notices.append(notice)
    return models, notices


MODELS, LOAD_NOTICES = load_models()
TITLES = {"bahdanau": "Bahdanau (additive)", "luong-general": "Luong (general)", "luong-dot": "Luong (dot)",
          "luong-concat": "Luong (concat)"}
SCORE_EQUATIONS = {
    "bahdanau": r"e_{tj} = v^\top \tanh(W_h h_j + W_s s_{t-1})",
    "luong-general": r"e_{tj} = s_t^\top W h_j",
    "luong-dot": r"e_{tj} = s_t^\top h_j",
    "luong-concat": r"e_{tj} = v^\top \tanh(W [s_t; h_j])",
}
QUERY_WORDS = {
    "s_{t-1}": "The query is the **previous** decoder state $s_{t-1}$: Bahdanau attends first, then the GRU "
               "reads $c_t$ to make the new state, $s_t = \\mathrm{GRU}([E y_{t-1}; c_t], s_{t-1})$.",
    "s_t": "The query is the **current** decoder state $s_t = \\mathrm{GRU}(E y_{t-1}, s_{t-1})$: Luong updates the "
           "state first, then attends; $c_t$ feeds the output, $\\tilde h_t = \\tanh(W_c [c_t; s_t])$.",
}
QUERY_LABELS = {"s_{t-1}": "s<sub>t−1</sub>", "s_t": "s<sub>t</sub>"}
EXAMPLES = [
    "The red car is in front of the house.",
    "I don't like coffee.",
    "I have never seen such a beautiful sunset.",
    "We are going to the cinema tomorrow evening.",
    "She gave the book to her little brother yesterday.",
    "If you have any questions, please don't hesitate to ask me after the lesson.",
]
TRANSLATE_CONCURRENCY = 48  # requests in /translate at once; they all wait on one decoding worker (BATCHER)
QUEUE_SIZE = 100  # requests waiting beyond those; the next one is told the app is busy, at once
# Gradio runs each call of a plain function in a worker thread (40 by default), and a translation
# holds one while it waits for its batch. Without threads to spare, a full class would also stall
# what needs no decoding, queue joins included (tests/test_app.py).
MAX_THREADS = TRANSLATE_CONCURRENCY + 16
TRACE_DIR = Path(tempfile.gettempdir()) / "attn-demo-traces"  # shared by restarts; files older than an hour go
TRACE_MAX_AGE_S = 3600
LATEX = [{"left": "$$", "right": "$$", "display": True}, {"left": "$", "right": "$", "display": False}]
CSS = """
body.attn-large .prose, body.attn-large textarea, body.attn-large input, body.attn-large button,
body.attn-large label span { font-size: 1.4rem !important; }
.translation textarea { font-size: 1.25rem !important; }
.katex { font-size: 1.2em; }
body.attn-large .katex { font-size: 1.6em; }
"""
TOGGLE_LARGE_TEXT = "(large) => { document.body.classList.toggle('attn-large', large); }"
STEP_VIEWS_JS = (ROOT / "step_views.js").read_text()  # defines window.attnSteps when the page loads
FIRST_STEP = "(views) => window.attnSteps.show(views, 1)"
SHOW_STEP = "(views, t) => window.attnSteps.show(views, t)"
PREVIOUS_STEP = "(views, t) => window.attnSteps.move(views, t, -1)"
NEXT_STEP = "(views, t) => window.attnSteps.move(views, t, +1)"


def device_name() -> str:
    device = next(iter(MODELS.values())).device
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type.upper()


def model_title(name: str) -> str:
    return TITLES[MODELS[name].config.attention]


def header_markdown() -> str:
    scores = " · ".join(f"{model_title(n)}: test BLEU {MODELS[n].metrics.get('bleu', 'n/a')}" for n in MODELS)
    notices = "".join(f"\n\n⚠️ {html.escape(notice)}" for notice in LOAD_NOTICES)
    return (f"# Watch attention translate English into French\n"
            f"Running on **{device_name()}** · {scores} (Tatoeba test set, beam 5, sacreBLEU){notices}")


def equations_markdown(name: str) -> str:
    translator = MODELS[name]
    return (f"$${SCORE_EQUATIONS[translator.config.attention]}$$\n"
            r"$$\alpha_{tj} = \frac{\exp e_{tj}}{\sum_k \exp e_{tk}} \qquad c_t = \sum_j \alpha_{tj} h_j$$"
            f"\n\n{QUERY_WORDS[translator.model.query_symbol]}")


def piece(p: str) -> str:
    """A piece for a Markdown component: shown as text, whatever it contains."""
    return f"<code>{html.escape(p)}</code>"


def grid(name, view, large):
    result = view["result"]
    return alignment_figure(result.source_tokens, result.target_tokens, result.attention,
                            f"{model_title(name)}: α<sub>tj</sub>, English across, French down", large)


def step_caption(result, t: int) -> str:
    """The caption of output step t (1-based); past the model's last step, that step's, saying so."""
    T = len(result.target_tokens)
    i = min(t, T) - 1
    best = int(result.attention[i].argmax())
    caption = (f"**Step {i + 1} of {T}** — emitted {piece(result.target_tokens[i])}; most attention on "
               f"{piece(result.source_tokens[best])} (α = {result.attention[i, best]:.2f})")
    if t > T:
        caption += f". This model stopped after {T} steps."
    return caption


def model_steps(name, view, steps: int, large: bool) -> dict:
    """One model's step views (attn_demo.figures.step_views) and its captions for steps 1 … steps."""
    result = view["result"]
    titles = [f"{model_title(name)}: how c<sub>{t}</sub> is formed" for t in range(1, len(result.target_tokens) + 1)]
    views = step_views(result.source_tokens, result.target_tokens, result.queries, QUERY_LABELS[result.query_symbol],
                       result.scores, result.attention, result.encoder_states, result.contexts, view["projection"],
                       titles, large)
    return {**views, "captions": [step_caption(result, t) for t in range(1, steps + 1)]}


def translate_requests(requests: list) -> list:
    """[(text, beam size)] sharing one beam size → {model name: Translation} per request; each
    model decodes them as one batch."""
    texts, beam_size = [text for text, _ in requests], requests[0][1]
    per_model = {name: translator.translate_batch(texts, beam_size=beam_size) for name, translator in MODELS.items()}
    return [{name: results[i] for name, results in per_model.items()} for i in range(len(texts))]


BATCHER = MicroBatcher(translate_requests, key=lambda request: request[1], max_batch=TRANSLATE_CONCURRENCY, window_s=0.005)


@functools.lru_cache(maxsize=512)
def translate_both(text: str, beam_size: int) -> dict:
    """Both models' views of a normalised input: the translation and the PCA projection of its
    encoder states. Concurrent requests are decoded together (BATCHER), and a class typing the
    same example 60 times costs one translation: the results are read-only, so sharing them
    between sessions is safe."""
    for translator in MODELS.values():
        translator.encode(text)  # a bad input fails here, alone, before it can join a batch
    results = BATCHER((text, beam_size))  # the one decoding thread does nothing but decode
    return {name: {"result": result, "projection": pca_projection(result.encoder_states)} for name, result in results.items()}


def trace_file(state) -> str | None:
    """The session's traces as a JSON file for the download button; written once per input and
    beam size, after the translation is on screen, and removed after an hour."""
    if not state:
        return None
    TRACE_DIR.mkdir(exist_ok=True)
    key = hashlib.sha1(f"{state['beam_size']}|{state['text']}".encode()).hexdigest()[:16]
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


def steps_of(state) -> int:
    return max(len(view["result"].target_tokens) for view in state["views"].values())


def translate(text: str, beam_size: float, large: bool):
    """Translate with both models: the session state, the translations and the alignment grids.
    The step views follow in a chained event (step_data), so the translation shows sooner."""
    try:
        text = check_text(text)
        views = translate_both(text, int(beam_size))
    except ValueError as error:
        return [None, f"⚠️ {html.escape(str(error))}", "", None, "", None, gr.update(value=1, maximum=2)]
    state = {"text": text, "beam_size": int(beam_size), "views": views}
    return [state, "", views["bahdanau"]["result"].text, grid("bahdanau", views["bahdanau"], large),
            views["luong"]["result"].text, grid("luong", views["luong"], large),
            gr.update(value=1, maximum=max(2, steps_of(state)))]


def step_data(state, large: bool) -> dict | None:
    """Every decoder step of both models in one compact payload: the page draws any step from it
    (step_views.js), so scrubbing costs the server nothing. None before any translation."""
    if not state:
        return None
    steps = steps_of(state)
    return {"steps": steps, **{name: model_steps(name, view, steps, large) for name, view in state["views"].items()}}


def restyle(state, large):
    """Redraw every figure (text size changed) from the session state."""
    if not state:
        return None, None, None
    views = state["views"]
    return grid("bahdanau", views["bahdanau"], large), grid("luong", views["luong"], large), step_data(state, large)


with gr.Blocks(title="attn-demo: attention in neural machine translation", delete_cache=(3600, 3600)) as demo:
    session = gr.State(None)
    gr.Markdown(header_markdown(), elem_id="header")
    with gr.Row(equal_height=True):
        source_box = gr.Textbox(label="English sentence", placeholder="Type a sentence and press Enter", scale=5,
                                max_length=5000, autofocus=True)
        beam_slider = gr.Slider(1, 8, value=1, step=1, label="Beam size (1 = greedy)", scale=2)
        translate_button = gr.Button("Translate", variant="primary", scale=1)
    gr.Examples(EXAMPLES, inputs=source_box, label="Examples worth watching")
    status = gr.Markdown(elem_id="status")
    with gr.Row():
        with gr.Column():
            gr.Markdown(f"## {model_title('bahdanau')}")
            bahdanau_text = gr.Textbox(label="French", interactive=False, elem_classes="translation", elem_id="bahdanau-text")
            bahdanau_grid = gr.Plot(label="Alignment grid", show_label=False, elem_id="bahdanau-grid")
        with gr.Column():
            gr.Markdown(f"## {model_title('luong')}")
            luong_text = gr.Textbox(label="French", interactive=False, elem_classes="translation", elem_id="luong-text")
            luong_grid = gr.Plot(label="Alignment grid", show_label=False, elem_id="luong-grid")
    gr.Markdown("## Decoder steps: how each context vector $c_t$ is formed", latex_delimiters=LATEX)
    with gr.Row(equal_height=True):
        previous_button = gr.Button("◀ Previous step", scale=1)
        step_slider = gr.Slider(1, 2, value=1, step=1, label="Output step t", scale=4, elem_id="step-slider")
        next_button = gr.Button("Next step ▶", scale=1)
    with gr.Row():
        with gr.Column():
            gr.Markdown(equations_markdown("bahdanau"), latex_delimiters=LATEX)
            bahdanau_caption = gr.Markdown(elem_id="bahdanau-caption")
            bahdanau_step = gr.Plot(label="Step view", show_label=False, elem_id="bahdanau-step")
        with gr.Column():
            gr.Markdown(equations_markdown("luong"), latex_delimiters=LATEX)
            luong_caption = gr.Markdown(elem_id="luong-caption")
            luong_step = gr.Plot(label="Step view", show_label=False, elem_id="luong-step")
    with gr.Row():
        large_text = gr.Checkbox(label="Large text (projector)", value=False)
        trace_download = gr.DownloadButton("Download the traces (JSON)", value=None)
    gr.Markdown("Pieces come from SentencePiece; ▁ marks the start of a word and &lt;/s&gt; ends the sentence. "
                "Every figure has a camera button (top right) that saves it as PNG. Models trained on "
                "[Tatoeba](https://tatoeba.org) pairs from [manythings.org/anki](https://www.manythings.org/anki/) (CC-BY 2.0 FR).")

    step_payload = gr.JSON(visible=False)  # step_data's output, kept in the browser for step_views.js
    step_outputs = [bahdanau_step, bahdanau_caption, luong_step, luong_caption]
    translate_outputs = [session, status, bahdanau_text, bahdanau_grid, luong_text, luong_grid, step_slider]
    gr.on([translate_button.click, source_box.submit], translate, [source_box, beam_slider, large_text],
          translate_outputs, api_name="translate", concurrency_limit=TRANSLATE_CONCURRENCY).then(
        step_data, [session, large_text], step_payload, api_name="step_data").then(
        None, step_payload, step_outputs, js=FIRST_STEP, api_name="first_step").then(
        trace_file, session, trace_download, api_name="trace_file")
    # scrubbing runs in the browser only: no round trip, no server work
    step_slider.input(None, [step_payload, step_slider], step_outputs, js=SHOW_STEP, api_name="show_step",
                      trigger_mode="always_last")
    previous_button.click(None, [step_payload, step_slider], [step_slider, *step_outputs], js=PREVIOUS_STEP,
                          api_name="previous_step")
    next_button.click(None, [step_payload, step_slider], [step_slider, *step_outputs], js=NEXT_STEP, api_name="next_step")
    large_text.change(None, large_text, None, js=TOGGLE_LARGE_TEXT, api_name="toggle_large_text")
    large_text.change(restyle, [session, large_text], [bahdanau_grid, luong_grid, step_payload], api_name="restyle").then(
        None, [step_payload, step_slider], step_outputs, js=SHOW_STEP, api_name="redraw_step")

demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=2)
for example in EXAMPLES:  # the examples answer at once, from the first click on
    translate_both(example, 1)

LAUNCH = dict(theme=gr.themes.Soft(), css=CSS, js=STEP_VIEWS_JS, max_threads=MAX_THREADS)

if __name__ == "__main__":
    demo.launch(**LAUNCH)
