"""Why attention? The bottleneck on screen: BLEU by sentence length for every model on the page,
from the scores its model card holds (evaluate --long), as Bahdanau et al. (2015, Figure 2) drew
it for their RNNenc and RNNsearch."""
import gradio as gr

from attn_demo.figures import length_figure
from attn_demo.ui.translate import model_title

EXPLANATION = """## Why attention?
An encoder–decoder without attention squeezes the whole English sentence into one fixed vector, and the
decoder reads only that vector at every step: the longer the sentence, the more of it is lost on the
way. Attention lets every decoder step look back at all the encoder annotations $h_j$ and build its own
$c_t$. The chart shows each model's BLEU on English inputs of growing length (Tatoeba test pairs joined
into 1–10 … 51–60-word inputs, never seen in training): a model that keeps its line flat as sentences
grow is one that does not depend on a single summary."""


class WhyAttentionSection:
    def __init__(self, models: dict):
        self.models = models

    def figure(self, large: bool):
        curves = {model_title(t): t.length_curve for t in self.models.values() if t.length_curve}
        return length_figure(curves, large) if curves else None

    def render(self, large_text: gr.Checkbox):
        gr.Markdown(EXPLANATION, latex_delimiters=[{"left": "$", "right": "$", "display": False}])
        chart = gr.Plot(self.figure(False), show_label=False, elem_id="length-chart")
        large_text.change(self.figure, large_text, chart, api_name="length_chart")
