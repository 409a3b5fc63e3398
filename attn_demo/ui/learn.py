"""Watch it learn: a model's training timeline (attn_demo.measures.timeline) on the page. Pick a model on
each side and one of the page's sentences; a slider (and Play) moves through the points of the
recorded runs and learn.js redraws, in the browser, each side's α grid and translation at that
point beside its run's validation BLEU and training loss. Both sides move together by target
pieces trained on, so a student sees which model learns to align first."""
import json
from pathlib import Path

import gradio as gr
from plotly.colors import convert_colors_to_same_type

from attn_demo.decoding.grids import grid_name
from attn_demo.measures.timeline import PROBES, probe_history
from attn_demo.views.figures import ALIGNMENT_COLORSCALE
from attn_demo.views.translation import read_pick

EXPLANATION = """## Watch it learn
Attention is not built in: it is learned. At the start of training the weights α are nearly uniform and the
translation is noise; the diagonal of a good alignment appears, sharpens, and the translation follows. Every
point below was recorded while the model trained (`timeline.json` beside its weights): what it wrote for the
sentence, its α, and its run's validation BLEU and training loss at that point. Nothing is recomputed."""
LEARN_JS = (Path(__file__).parent / "learn.js").read_text()  # defines window.attnLearn when the page loads
LEARN_CSS = """
.attn-learn-sides { display: flex; flex-wrap: wrap; gap: 16px; }
.attn-learn-side { flex: 1 1 340px; min-width: 0; }
.attn-learn-side h3 { font-weight: 700; font-size: 1.1rem; margin: 0.4em 0; }
.attn-learn-translation { font-size: 1.15rem; }
.attn-learn-grid-box { overflow: auto; max-height: 520px; }
.attn-learn-grid { display: grid; grid-template-columns: auto auto; width: max-content; font-size: 12px; }
.attn-learn-columns { display: flex; align-items: flex-end; }
.attn-learn-columns span { width: var(--attn-learn-cell); line-height: var(--attn-learn-cell); writing-mode: vertical-rl;
  transform: rotate(180deg); white-space: nowrap; padding-top: 2px; }
.attn-learn-rows { display: flex; flex-direction: column; align-items: flex-end; padding-right: 4px; }
.attn-learn-rows span { height: var(--attn-learn-cell); line-height: var(--attn-learn-cell); white-space: nowrap; }
.attn-learn-grid canvas { image-rendering: pixelated; }
"""
RGB_COLORSCALE = [[at, convert_colors_to_same_type(colour, "rgb")[0][0]] for at, colour in ALIGNMENT_COLORSCALE]  # the grids' colours
VIEW_ID = "learn-view"  # learn.js binds this section's two sides to this element
PLAY_INTERVAL_MS = 800
LOAD = f"(payload) => {{ window.attnLearn.view({json.dumps(VIEW_ID)}).load(payload); }}"
SHOW = f"(i) => {{ window.attnLearn.view({json.dumps(VIEW_ID)}).show(i); }}"
PLAY = f"(i) => window.attnLearn.view({json.dumps(VIEW_ID)}).play(i, {PLAY_INTERVAL_MS})"


def side(model, probe: int) -> dict:
    """One side's timeline of one probe sentence, with what the page must say about it."""
    timeline = model.translator.timeline
    if timeline is None:
        return {"title": model.title, "points": [],
                "message": f"{model.title} has no training timeline: it was trained before runs recorded one."}
    notes = []
    if not timeline["made_these_weights"]:
        notes.append("Recorded on a separate run of the same recipe, not the run that made the weights the rest of the page uses.")
    if not timeline["from_scratch"]:
        notes.append("This run continued from a trained model, so its first point already translates.")
    if not model.has_attention:
        notes.append("No attention: there is no α to learn, only the translation changes.")
    if model.kind.heads:
        notes.append(recorded_grid_note(model, timeline))
    return {"title": model.title, "points": probe_history(timeline, probe), "message": " ".join(notes) or None}


def recorded_grid_note(model, timeline: dict) -> str:
    """Which of a Transformer's grids its timeline holds (the one its config showed as it trained), and the grid the
    rest of the page shows where the alignment check has chosen another since."""
    recorded = [read_pick(model, key) for key in dict.fromkeys(p["grid"] for p in timeline["points"])]
    config = model.translator.config
    shown = (config.layer_shown, config.shown_head)
    note = f"α of {' then '.join(grid_name(*grid) for grid in recorded)}, the grid it showed as it trained."
    if recorded[-1] != shown:
        note += f" The rest of the page shows {grid_name(*shown)}, chosen after training by its alignment error rate."
    return note


class LearnSection:
    def __init__(self, models: list, opening: tuple[str, str]):
        self.models = {model.key: model for model in models}
        self.opening = opening

    def payload(self, left: str, right: str, probe: str) -> tuple[dict, dict]:
        """Both sides' timelines of the chosen sentence, and the slider over every point of either run
        (target pieces, merged), set at the last one: the trained models, as the rest of the page shows them."""
        index = PROBES.index(probe)
        sides = [side(self.models[key], index) for key in (left, right)]
        positions = sorted({point["target_pieces"] for s in sides for point in s["points"]}) or [0]
        payload = {"positions": positions, "colorscale": RGB_COLORSCALE, "sides": sides}
        return payload, gr.Slider(minimum=1, maximum=max(2, len(positions)), value=len(positions), step=1)

    def render(self, page: gr.Blocks):
        gr.Markdown(EXPLANATION)
        keys = list(self.models)
        with gr.Row():  # a phone stacks the pickers, each model's name whole
            pickers = [gr.Dropdown([(self.models[k].title, k) for k in keys], value=key, label=f"Model on the {where}",
                                   scale=1, min_width=220) for key, where in zip(self.opening, ("left", "right"))]
            probe = gr.Dropdown(PROBES, value=PROBES[0], label="Sentence", scale=2, min_width=200)
        with gr.Row(equal_height=True):
            point = gr.Slider(1, 2, value=1, step=1, label="Training point", info="each side says how many target pieces "
                              "it had trained on there", scale=4, elem_id=f"{VIEW_ID}-slider")
            play = gr.Button("▶ Play", scale=1, elem_id=f"{VIEW_ID}-play")
        gr.HTML(elem_id=VIEW_ID)
        payload = gr.JSON(visible=False)  # kept in the browser for learn.js
        inputs = [*pickers, probe]
        gr.on([page.load, *(box.change for box in inputs)], self.payload, inputs, [payload, point],
              api_name="learn_timeline").then(None, payload, None, js=LOAD, api_name="learn_draw")
        point.input(None, point, None, js=SHOW, api_name="learn_show", trigger_mode="always_last")
        play.click(None, point, point, js=PLAY, api_name="learn_play")
