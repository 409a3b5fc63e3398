"""Export: the whole translation on screen as one self-contained, interactive HTML file that opens
from disk without a network and shows the same numbers as the page: both alignment grids (Plotly,
its library inlined, each with its text alternative: figure_text.js) and both network and step
views with their scrubber, drawn by the page's own renderer (step_views.js, network_view.js) from
the same grids and payload the page receives (attn_demo.views.translation). A Transformer's side shows the layer and head
picked on the page: its grid, its coverage row, its self-attention and its step view.

Everything the user typed reaches the file as JSON or escaped text, never as markup."""
import hashlib
import html
import json

import gradio as gr
import plotly.offline

from attn_demo.decoding.grids import pick_key
from attn_demo.ui.page import FIGURE_TEXT_JS, PAGE_CHANGES_JS, SIDES
from attn_demo.ui.step_group import STEP_VIEWS_CSS, STEP_VIEWS_JS
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.views.figures import to_json
from attn_demo.views.translation import COVERAGE_CSS, grid_figure, read_pick, step_data, under_grid

GROUP = "export-steps"  # the element the file's step views are bound to
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 16px; color: #222; background: #f6f7f9; }}
.sides {{ display: flex; flex-wrap: wrap; gap: 16px; }} .side {{ flex: 1 1 360px; min-width: 0; }}
.grid {{ overflow-x: auto; background: white; }} .scrubber {{ display: flex; gap: 8px; align-items: center; margin: 12px 0; }}
.scrubber input {{ flex: 1; }} .translation {{ font-size: 1.25rem; background: white; padding: 8px; border-radius: 6px; }}
{css}
</style></head><body>
<h1>{title}</h1>
<p>English: <strong>{source}</strong> · beam {beam} · exported from attn-demo; every number is the model's.</p>
<div class="sides">{sides}</div>
<div id="{group}">
  <div class="scrubber attn-step-slider"><label>Output step t <input type="range" min="1" max="{steps}" value="1" step="1"></label>
    <span class="attn-step-number">1</span>
    <button class="attn-next-step" type="button">Next step ▶</button><button class="attn-play" type="button">▶ Play</button></div>
  <div class="sides">{slots}</div>
</div>
<script>{plotly}</script>
<script>
({step_views})();
({figure_text})(({page_changes})());
const payload = {payload};
const figures = {figures};
for (const [side, figure] of Object.entries(figures)) {{
  Plotly.newPlot(document.getElementById(`${{side}}-grid`), figure.data, figure.layout, {{ displaylogo: false }});
}}
const group = window.attnSteps.group({group_json});
const slider = group.find("input[type=range]"), number = group.find(".attn-step-number");
const to = (t) => {{ slider.value = t; number.textContent = t; }};
slider.addEventListener("input", () => {{ number.textContent = slider.value; }});
group.find(".attn-next-step").addEventListener("click", () => to(group.move(slider.value, +1)));
group.find(".attn-play").addEventListener("click", () => to(group.play(slider.value)));
group.load(payload, false);
</script></body></html>
"""
SIDE = """<div class="side"><h2>{title}</h2><div class="translation">{text}</div><div class="grid" id="{side}-grid">{no_grid}</div>
<div id="{side}-coverage">{coverage}</div></div>"""
# a side's self-attention (heads_view.js) and the layer and head it shows, then its network and step views
SLOT = """<div class="side"><div class="attn-self-slot" id="{side}-self-attention"></div>
<div class="attn-pick-slot" id="{side}-grid-pick"><input type="hidden" value="{grid}"></div>
<div class="attn-network-slot" id="{side}-network"></div><div class="attn-step-slot" id="{side}-step"></div></div>"""


def export_html(payload: dict, grids: dict, source: str, beam_size: int, texts: dict, coverages: dict,
                picks: dict | None = None) -> str:
    """The file's text: payload from step_data, grids {side: Plotly figure or None}, the translations {side: text},
    what is under each grid {side: HTML from views.under_grid} and a Transformer's layer and head {side: its key,
    grids.PICK_KEY, "" for its shown grid}."""
    titles, picks = [view["title"] for view in payload["views"]], picks or {}
    sides = "".join(SIDE.format(title=html.escape(title), text=html.escape(texts[side]), side=side,
                                no_grid="" if grids[side] is not None else "<p>No attention, so no grid.</p>",
                                coverage=coverages[side])
                    for side, title in zip(SIDES, titles))
    figures = {side: json.loads(to_json(figure)) for side, figure in grids.items() if figure is not None}
    return PAGE.format(
        title=html.escape(" | ".join(titles)), source=html.escape(source), beam=int(beam_size), css=STEP_VIEWS_CSS + COVERAGE_CSS,
        sides=sides, slots="".join(SLOT.format(side=side, grid=html.escape(picks.get(side, ""))) for side in SIDES),
        group=GROUP, group_json=json.dumps(GROUP),
        steps=int(payload["steps"]), payload=script_json(payload), figures=script_json(figures),
        plotly=plotly.offline.get_plotlyjs(), step_views=STEP_VIEWS_JS, figure_text=FIGURE_TEXT_JS, page_changes=PAGE_CHANGES_JS)


def script_json(value) -> str:
    """JSON that is safe inside a <script> element: no "</script>" or "<!--" can close it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class ExportSection:
    """The export button under the translate section: one file per translation, written on demand."""

    def __init__(self, models, files: TraceFiles):
        self.models = models  # ui.page.ModelsOnPage
        self.files = files

    def export(self, state, left_grid: str = "", right_grid: str = "") -> dict:
        """The file of the translation on the page, a Transformer's side at the layer and head picked there."""
        if not state:
            return gr.update(value=None, visible=False)
        sides = self.models.sides(state)
        payload = step_data(sides)
        picks = {side: read_pick(model, grid) for side, (model, _), grid in zip(SIDES, sides, (left_grid, right_grid))}
        grids = {side: grid_figure(model, view, False, pick=picks[side]) for side, (model, view) in zip(SIDES, sides)}
        texts = {side: view["result"].text for side, (_, view) in zip(SIDES, sides)}
        coverages = {side: under_grid(model, view, pick=picks[side]) for side, (model, view) in zip(SIDES, sides)}
        written = {side: pick_key(*pick) if pick else "" for side, pick in picks.items()}
        fingerprints = "|".join(model.fingerprint for model, _ in sides)
        # the renderer too: a restart with new drawing code must not serve a file drawn by the old one (the folder outlives it)
        renderer = STEP_VIEWS_JS + STEP_VIEWS_CSS + PAGE_CHANGES_JS + FIGURE_TEXT_JS + COVERAGE_CSS
        key = hashlib.sha1(f"{fingerprints}|{state['beam_size']}|{state['text']}|{written}|{renderer}".encode()).hexdigest()[:16]
        path = self.files.write(f"attention-{key}.html", lambda: export_html(
            payload, grids, state["text"], state["beam_size"], texts, coverages, written).encode("utf-8"))
        return gr.update(value=path, visible=True)

    def render(self, session: gr.State, grid_picks: list):
        """The button and its file; grid_picks, the translate section's layer and head of each side."""
        button = gr.Button("Export this translation as one interactive HTML file (works offline)", elem_id="export-html")
        file = gr.File(label="Interactive HTML", visible=False, elem_id="export-file")
        button.click(self.export, [session, *grid_picks], file, api_name="export_html")
