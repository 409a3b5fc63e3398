"""Is attention an explanation? On demand, for each model on screen: a gradient attribution of its
translation (attn_demo.decoding.attribution) drawn on the axes of its alignment grid, and how well α and
the attribution agree on this sentence. A model without attention has an attribution but no α:
its grid is drawn, and the agreement says there is nothing to compare with.

Attribution runs only when asked: a button, never on every translation (it costs ~100 times a
translation), and each result is kept for the next user who asks about the same sentence."""
import html
import json
from concurrent.futures import ThreadPoolExecutor

import gradio as gr

from attn_demo.decoding.attribution import JUMPING_GRADIENT_NOTE, METHODS, agreement, gradient_jumps
from attn_demo.decoding.grids import words_view
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.translator import Translator
from attn_demo.ui.page import SIDES, plot
from attn_demo.ui.translate import STEPS
from attn_demo.views.figures import attribution_figure
from attn_demo.views.steps import typed
from attn_demo.views.titles import figure_title

EXPLANATION = """## Is attention an explanation?
α says where the model looked; it does not say what the output depended on. A **gradient attribution**
asks the second question: how much does each English piece's embedding move the log-probability of each
French piece? **Integrated gradients** adds up the gradient along a straight path from an all-zero input
to the sentence (the attributions of a step add up to its change in log-probability); **input × gradient**
is its one-point shortcut. Blue raised the French piece's probability, red lowered it. Where α and the
attribution point at the same English pieces, attention is a fair account of this sentence; where they
do not, α showed where the model looked, not what it used."""
METHOD_LABELS = {"integrated-gradients": "integrated gradients", "input-x-gradient": "input × gradient"}
NOT_SHOWN = "Press **What did each model rely on?** to draw it for the sentence on screen."  # in place of a grid
CACHED = 64  # attributions kept (model, sentence, pieces, method): a class asking about one sentence computes it once
# Each side's integrated gradients on this many threads, the sides at once: the two cores share the work until one side
# is done, then the slower side has both (a Transformer's take about 4 times Luong's; BENCHMARKS.md).
WORKERS = 2


class AttributionSection:
    def __init__(self, models):
        self.models = models  # ui.page.ModelsOnPage
        self.attribution = ComputedOnce(self._attribution, CACHED)

    def _attribution(self, key: str, text: str, pieces: tuple[str, ...], method: str):
        return self.models[key].run(Translator.attribute, text, list(pieces), method, workers=WORKERS)

    def side(self, state, side: str, method: str, large: bool, unit: str) -> tuple[list, dict]:
        """One side's attribution grid and its agreement with α, in a sentence; and its bars for the
        step view (by piece, as the step view draws)."""
        model = self.models.picked(state, side)
        view = state["views"][side]["result"]
        result = self.attribution(model.key, state["text"], tuple(view.target_tokens), method)  # the pieces on screen
        source, target, scores = result.source_tokens, result.target_tokens, result.scores
        if unit == "words":
            source, target, scores = words_view(source, target, scores)
        title = figure_title(model.title, f"{METHOD_LABELS[method]} by {unit[:-1]}")
        figure = attribution_figure(source, target, scores, title, large, unit)
        bars = {"method": method, "label": METHOD_LABELS[method], "source": result.source_tokens,
                "target": result.target_tokens, "scores": typed(result.scores)}
        return [plot(figure), self.agreement_markdown(model, view, result)], bars

    def agreement_markdown(self, model, view, result) -> str:
        gap = (f" The attributions of each step add up to its change in log-probability within "
               f"{100 * result.completeness_gap.max():.1f}% ({result.path_points} path points)."
               if result.completeness_gap is not None else "")
        if result.completeness_gap is not None and gradient_jumps(model.translator.config):
            gap += f" {JUMPING_GRADIENT_NOTE}"
        if view.attention is None:
            return f"**{html.escape(model.title)}** has no α to compare with: this is what it relied on.{gap}"
        a = agreement(view.attention, result.scores)
        rho = "–" if a["spearman_mean"] is None else f"{a['spearman_mean']:.2f}"
        return (f"**{html.escape(model.title)}**: over {a['steps']} steps, α and the attribution rank the English pieces "
                f"alike with a mean Spearman ρ of **{rho}** (1: the same order, 0: unrelated), and their largest entries "
                f"fall on the same piece at **{a['argmax_agreement']:.0%}** of the steps.{gap}")

    def show(self, state, method: str, large: bool, unit: str) -> list:
        """Each side's grid and agreement, then every side's bars for the step views (JSON)."""
        if not state:
            return [None, "Translate a sentence first."] * len(SIDES) + [None]
        try:  # the sides at once, each on WORKERS threads: the app's torch uses one thread per call (app.py)
            with ThreadPoolExecutor(len(SIDES), thread_name_prefix="attribution") as pool:
                sides = list(pool.map(lambda side: self.side(state, side, method, large, unit), SIDES))
        except ValueError as error:  # e.g. a method the page does not offer, asked for through the API
            return [None, f"⚠️ {html.escape(str(error))}"] * len(SIDES) + [None]
        return [output for outputs, _ in sides for output in outputs] + [[bars for _, bars in sides]]

    def redraw(self, state, bars, large: bool, unit: str) -> list:
        """The grids and notes on screen again, by another unit or text size: the same method and sentence (bars
        say which; None when no attribution is on screen, and nothing is drawn). The attributions are kept."""
        if not (state and bars):
            return [gr.skip()] * (2 * len(SIDES))
        return self.show(state, bars[0]["method"], large, unit)[:-1]  # not the bars: the step views have them

    def render(self, controls, large_text: gr.Checkbox):
        """The section, under the translate section; controls are that section's."""
        gr.Markdown(EXPLANATION)
        with gr.Row():
            method = gr.Radio([(METHOD_LABELS[m], m) for m in METHODS], value=METHODS[0], label="Attribution",
                              elem_id="attribution-method")
            button = gr.Button("What did each model rely on?", elem_id="attribute", variant="secondary")
        outputs = []
        with gr.Row():
            for side in SIDES:
                with gr.Column():
                    outputs += [gr.Plot(show_label=False, elem_id=f"{side}-attribution"),
                                gr.Markdown(NOT_SHOWN, elem_id=f"{side}-agreement")]
        bars = gr.JSON(visible=False)  # kept in the browser for the step views (step_views.js)
        # another translation on screen: its grids, notes and bars would not be this section's any more. Cleared in
        # the browser (no server event, so a full class costs nothing), when the translation's step data arrives.
        controls.steps.change(None, None, [*outputs, bars], js=f"() => {json.dumps([None, NOT_SHOWN] * len(SIDES) + [None])}",
                              api_name="clear_attribution")
        gr.on([controls.unit.input, large_text.input], self.redraw, [controls.session, bars, large_text, controls.unit],
              outputs, api_name="redraw_attribution", queue=False)  # redrawn from the bars: nothing to queue for
        button.click(self.show, [controls.session, method, large_text, controls.unit], [*outputs, bars],
                     api_name="attribute").then(None, bars, None, js=f"(bars) => {{ if (bars) {STEPS.call('attribute(bars)')}; }}",
                                                api_name="attribute_steps")
