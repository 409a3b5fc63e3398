"""Alignment check: does attention align words as a person would? The two models picked in the
translate section each read a Hansards sentence and its human French translation (teacher
forcing); a model's word-level α is drawn with the human links outlined, beside that sentence's
alignment error rate, and every model's AER on the whole test set is tabled next to a word
aligner's (from the model cards, measured by evaluate --alignments). A Transformer's side checks the layer and
head picked in the translate section. A model without attention has no α to check: its side says so."""
from pathlib import Path

import gradio as gr

from attn_demo.data.datasets import HANSARDS
from attn_demo.decoding.grids import grid_name
from attn_demo.measures.alignment import (
    GOLD_DIR, alignment_error, argmax_links, links_source, read_gold, reading_word_attention, sentence_reading)
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.ui.page import SIDES, plot
from attn_demo.ui.when_seen import when_seen
from attn_demo.views.figures import gold_check_figure
from attn_demo.views.titles import figure_title
from attn_demo.views.translation import read_pick

EXAMPLES = (28, 22, 110, 76)  # 1-based sentence numbers worth checking first: one-to-one, many-to-one, paraphrases
EXPLANATION = """## Alignment check: does attention align words?
The grids above are often called alignments. Here each model reads a sentence of the Canadian Hansards
together with its human French translation, and its attention is summed over each English word's pieces
(and averaged over each French word's). White boxes are the links human annotators drew (solid: sure,
dotted: possible); red dots are the links drawn from α by taking, for each French word, its most-attended
English word (**argmax**). The **alignment error rate** compares the two: AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|),
0 when every drawn link is one the annotators accept and every sure link is drawn.

Attention is not trained to align: it is trained to help predict the next French piece, and whatever
information helps may sit in a neighbouring annotation (each h_j has read the whole sentence in both
directions), in the end-of-sentence piece, or nowhere in particular. A word aligner trained for the task
does far better on the same sentences."""


def cell(value) -> str:
    return "–" if value is None else f"{value:.3f}"  # a rule not measured for a model


class AlignmentCheckSection:
    def __init__(self, models: list, gold_dir: Path | None = GOLD_DIR):
        """gold_dir: the Hansards folder (by default the data home's); None or a folder without them: no check here."""
        self.models = {model.key: model for model in models}
        has_gold = gold_dir is not None and (Path(gold_dir) / "test.wa.nonullalign").is_file()
        self.gold = read_gold(gold_dir) if has_gold else None
        self.reading = ComputedOnce(self._reading, 256)  # a model's reading of a sentence, whichever grid is then read

    def sentence_choices(self) -> list[tuple[str, int]]:
        """(label, 1-based number) of every test sentence, the examples first."""
        count = len(self.gold.english)
        examples = [n for n in EXAMPLES if n <= count]
        numbers = [*examples, *(n for n in range(1, count + 1) if n not in examples)]
        return [(f"{n}. {' '.join(self.gold.english[n - 1])}", n) for n in numbers]

    def _reading(self, key: str, number: int) -> tuple:
        return self.models[key].run(sentence_reading, self.gold.english[number - 1], self.gold.french[number - 1])

    def word_alpha(self, key: str, number: int, grid=None):
        """A model's word-level α of sentence `number`: its shown grid, or a Transformer's (layer, head) `grid`, read
        from the one reading of the sentence (a pick of another head decodes nothing)."""
        return reading_word_attention(self.reading(key, number), grid)

    def show(self, number: int, large: bool, left: str, right: str, left_grid: str = "", right_grid: str = "") -> list:
        """For each picked model: its grid of the sentence with the human links, and the sentence's AER; a Transformer's
        at the layer and head picked on its side (views.read_pick)."""
        return [*self.show_side(number, large, left, left_grid), *self.show_side(number, large, right, right_grid)]

    def show_side(self, number: int, large: bool, key: str, grid: str = "") -> list:
        """One picked model's grid and line (show's half), at the layer and head picked on its side."""
        model = self.models[key]
        return self.side(int(number), large, model, read_pick(model, grid))

    def side(self, number: int, large: bool, model, grid=None) -> list:
        """One model's grid (None without one: an empty plot takes no room, ui.page.CSS) and its line on the sentence;
        grid: a Transformer's (layer, head) picked, None for its shown grid."""
        english, french = self.gold.english[number - 1], self.gold.french[number - 1]
        sure, possible = self.gold.sure[number - 1], self.gold.possible[number - 1]
        if not model.has_attention:
            return [None, f"**{model.title}**: no attention, so no α to compare with the human links."]
        try:
            alpha = self.word_alpha(model.key, number, grid)
        except ValueError as error:  # e.g. characters the model never saw
            return [None, f"{model.title} cannot read this sentence: {error}"]
        links = argmax_links(alpha)
        score = alignment_error([links], [sure], [possible])
        which = f", {grid_name(*grid)}" if grid else ""
        figure = gold_check_figure(english, french, alpha, sure, possible, links,
                                   figure_title(f"{model.title}{which}", "word-level α and the human links"), large)
        return [plot(figure),
                f"**{model.title}**{which}, this sentence: AER **{score['aer']:.2f}** (argmax), precision "
                f"{score['precision']:.2f}, recall {score['recall']:.2f}"]

    def table_markdown(self) -> str:
        """Every model's AER on the whole test set, rule by rule, and the aligner's, from the cards."""
        scores = {key: m.translator.alignment_scores for key, m in self.models.items() if m.translator.alignment_scores}
        if not scores:
            return "No model card has alignment scores yet (`python -m attn_demo.evaluation.evaluate CHECKPOINT --alignments …`)."
        names = list(scores)
        first = scores[names[0]]
        header = "| links drawn from | " + " | ".join(self.models[n].title for n in names) + " |"
        rules = list(dict.fromkeys(rule for n in names for rule in scores[n]["aer"]))  # α's, then attribution's
        rows = [f"| {links_source(rule)} | " + " | ".join(cell(scores[n]["aer"].get(rule)) for n in names) + " |" for rule in rules]
        aligner = ", ".join(f"{kind.removeprefix('eflomal ')} {s['aer']:.3f}" for kind, s in first["aligner"].items())
        return (f"**AER on the whole test set** ({first['n']} sentences; lower is better; `+1` rules read a French word's "
                f"links from the next step's α, `threshold-τ` keeps every link with α ≥ τ, `intersect` keeps argmax links "
                f"that are also argmax the other way):\n\n{header}\n|---|" + "---|" * len(names) + "\n" + "\n".join(rows)
                + f"\n\nFor reference, the word aligner eflomal, trained without supervision on the same sentences plus "
                f"the Tatoeba pairs, scores AER {aligner}. Rows named after an attribution method draw each French word's link "
                "to the English word that raised its probability most (`evaluate --alignments --attribution`); the "
                "no-attention baseline, which has no α, has only those.")

    def render(self, large_text: gr.Checkbox, pickers: list, grid_picks: list):
        """The section; pickers and grid_picks are the translate section's: the check follows the models, and a
        Transformer's layer and head, picked there."""
        gr.Markdown(EXPLANATION, latex_delimiters=[])
        if self.gold is None:
            gr.Markdown(f"The human alignments are not on this machine (looked in the data home, `{GOLD_DIR}`), so no "
                        "sentence can be checked here; the scores below were measured where they were. "
                        f"`{HANSARDS.fetch_command()}` gets them.")
        else:
            watcher = when_seen("alignment", {})  # the first sentence's grids, drawn when the reader comes near
            choices = self.sentence_choices()
            sentence = gr.Dropdown(choices, value=choices[0][1], label="Hansards sentence (test set)", elem_id="gold-sentence")
            outputs = []
            with gr.Row():
                for i, side in enumerate(SIDES):
                    with gr.Column():
                        score = gr.Markdown(elem_id=f"{side}-gold-score")
                        grid = gr.Plot(show_label=False, elem_id=f"{side}-gold-grid")
                        outputs += [grid, score]
            gr.on([watcher.click, sentence.change, large_text.change, *(picker.change for picker in pickers)],
                  self.show, [sentence, large_text, *pickers, *grid_picks], outputs, api_name="alignment_check")
            for side, picker, grid_pick, side_outputs in zip(SIDES, pickers, grid_picks, (outputs[:2], outputs[2:])):
                # a Layer or Head picked redraws its own side's check: the other side's is as it was
                grid_pick.change(self.show_side, [sentence, large_text, picker, grid_pick], side_outputs,
                                 api_name=f"{side}_alignment_check")
        gr.Markdown(self.table_markdown())
