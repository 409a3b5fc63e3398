"""Why attention? The bottleneck on screen: BLEU by sentence length for every model, from the
scores its model card holds (evaluate --long), as Bahdanau et al. (2015, Figure 2) drew it for
their RNNenc and RNNsearch; and one click that puts the no-attention baseline beside an attention
model on a long sentence."""
import gradio as gr

from attn_demo.examples import LONG_EXAMPLE
from attn_demo.ui.page import plot
from attn_demo.ui.when_seen import when_seen
from attn_demo.views.figures import length_figure

EXPLANATION = """## Why attention?
An encoder–decoder without attention squeezes the whole English sentence into one fixed vector, and the
decoder reads only that vector at every step: the longer the sentence, the more of it is lost on the
way. Attention lets every decoder step look back at all the encoder annotations $h_j$ and build its own
$c_t$. The chart shows each model's BLEU on English inputs of growing length (Tatoeba test pairs joined
into 1–10 … 51–60-word inputs, never seen in training): a model that keeps its line flat as sentences
grow is one that does not depend on a single summary."""


class WhyAttentionSection:
    def __init__(self, models: list):
        self.models = models
        baselines = [model for model in models if not model.has_attention]
        attending = [model for model in models if model.has_attention]
        self.pair = (baselines[0].key, attending[0].key) if baselines and attending else None  # the one-click comparison

    def chart(self, large: bool) -> dict | None:
        """BLEU by length, a line per model with a length curve in its card (None: no card has one)."""
        curves = {model.title: model.translator.length_curve for model in self.models if model.translator.length_curve}
        return length_figure(curves, large) if curves else None

    def figure(self, large: bool):
        return plot(self.chart(large))

    def baseline_note(self) -> str:
        """What the chart shows about the baseline, in two sentences, from the cards' numbers."""
        kept = {model.title: (model.translator.length_curve["1-10"]["bleu"], model.translator.length_curve["41-50"]["bleu"])
                for model in self.models if {"1-10", "41-50"} <= set(model.translator.length_curve)}
        baseline = next((model.title for model in self.models if not model.has_attention and model.title in kept), None)
        others = [short_long for title, short_long in kept.items() if title != baseline]
        if baseline is None or not others:
            return ""
        short, long = kept[baseline]
        ratios = [b / a for a, b in others]
        return (f"**{baseline}** reads the sentence only through one fixed vector c: at 41–50 words it keeps "
                f"{long / short:.0%} of its BLEU at 1–10 words ({short:.1f} → {long:.1f}), while the attention models keep "
                f"{min(ratios):.0%}–{max(ratios):.0%} of theirs. It also translates short inputs less well ({short:.1f} "
                f"against {min(a for a, _ in others):.1f}–{max(a for a, _ in others):.1f} BLEU at 1–10 words), so compare "
                "how far each line falls, not only how high it starts.")

    def compare_long(self):
        """The long example, the baseline on the left and an attention model on the right."""
        return [LONG_EXAMPLE, *self.pair]

    def render(self, large_text: gr.Checkbox, controls):
        """The section; controls are the translate section's (ui.translate.TranslateControls)."""
        drawn = self.chart(False)
        watcher = when_seen("why", {"length-chart": drawn["layout"]["height"]} if drawn else {})
        gr.Markdown(EXPLANATION, latex_delimiters=[{"left": "$", "right": "$", "display": False}])
        chart = gr.Plot(show_label=False, elem_id="length-chart")
        gr.on([watcher.click, large_text.change], self.figure, large_text, chart, api_name="length_chart",
              queue=False)  # from the cards: no queue
        if self.pair:
            gr.Markdown(self.baseline_note(), elem_id="baseline-note")
            button = gr.Button(f"See it: a {len(LONG_EXAMPLE.split())}-word sentence, no attention beside attention",
                               elem_id="compare-long")
            controls.translate_after(button.click(self.compare_long, None, [controls.source, *controls.pickers],
                                                  api_name="compare_long", scroll_to_output=False), "compare_long_translate")
