"""Compare them all: every model the app serves in one table and one chart, from the model cards
(measured by the project's own commands: evaluate, evaluate --long, evaluate --alignments) and the
loaded weights (parameters)."""
import gradio as gr

from attn_demo.checkpoints.card import GENERAL_REFERENCE
from attn_demo.evaluation.evaluate import SHORT_RATIO
from attn_demo.serving.catalogue import summary
from attn_demo.ui.page import plot
from attn_demo.ui.when_seen import when_seen
from attn_demo.views.figures import comparison_figure

EXPLANATION = f"""## Compare them all
Every model on this page, measured the same way: BLEU and chrF on the Tatoeba test set (beam 5, each ranked as its card's
decoding says), BLEU on
the long-sentence test set at 41–50 English words, the share of its test translations of 16+ English words that
repeat a phrase or are short (under {SHORT_RATIO:.0%} of the reference's words, most often a dropped clause), the same
on general text (FLORES-200 devtest: Wikinews, Wikijunior and Wikivoyage sentences, never trained on; for scale, {GENERAL_REFERENCE}),
the time `translate()` takes for a 15-word sentence
(greedy, on one CPU thread as this app decodes; all models timed together, call by call in turn, so a busy
minute slows each alike), the best alignment error rate of its attention against the human
Hansards links (lower is better), its parameters and how it was trained (on a 2-core CPU unless a GPU is
named). A blank cell was not measured."""


def percent(share) -> str:
    return "–" if share is None else f"{share:.0%}"


def cell(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:.{digits}f}"


class CompareSection:
    def __init__(self, models: list):
        self.rows = [summary(model) for model in models]

    def table_markdown(self) -> str:
        header = ("| model | test BLEU / chrF | BLEU, 41–50 words | repeat or short, 16+ words "
                  "| general text: BLEU / chrF, repeat or short | ms / sentence | best AER "
                  "| attention parameters | parameters | training |\n|---|---|---|---|---|---|---|---|---|---|")
        lines = [f"| **{r['title']}** `{r['key']}` | {cell(r['test_bleu'])} / {cell(r['test_chrf'])} | {cell(r['long_41_50_bleu'])} "
                 f"| {percent(r['repeat_or_short'])} "
                 f"| {cell(r['general_bleu'])} / {cell(r['general_chrf'])}, {percent(r['general_repeat_or_short'])} "
                 f"| {cell(r['ms_per_sentence'], 1)} | {cell(r['best_aer'], 3)} | {cell(r['attention_parameters'])} "
                 f"| {cell(r['parameters'])} | {r['training']} |" for r in self.rows]
        return "\n".join([header, *lines])

    def figure(self, large: bool):
        return plot(comparison_figure(self.rows, large))

    def render(self, large_text: gr.Checkbox):
        watcher = when_seen("compare", {"compare-chart": comparison_figure(self.rows, False)["layout"]["height"]})
        gr.Markdown(EXPLANATION)
        gr.Markdown(self.table_markdown(), elem_id="compare-table")
        chart = gr.Plot(show_label=False, elem_id="compare-chart")
        gr.on([watcher.click, large_text.change], self.figure, large_text, chart, api_name="compare_chart",
              queue=False)  # from the cards: no queue
