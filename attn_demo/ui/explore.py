"""Explore the decoding: the beam's best hypotheses with their scores and a tree of their shared
prefixes, and "what if?" on the hypothesis picked: change the piece at a step (the model keeps the
prefix and goes on) or move the attention at a step onto one English piece (c_t = that h_j, and the
model goes on from there), with what it changed and what it cost in log-probability.

Every number is the model's: the searches are Translator.translate's (n_best, prefix,
force_attention), and the choices at a step are its own probabilities (Translator.choices)."""
import html

import gradio as gr
import numpy as np

from attn_demo.figures import alignment_figure, beam_tree_figure
from attn_demo.ui.translate import NO_GRID, SIDES

EXPLANATION = """## Explore the decoding
Beam search keeps the k most probable beginnings at every step. Here are the best finished ones, ranked by
log p / length, and the tree of the beginnings they share. Pick one, then ask **what if?**: choose another
piece at a step (the model keeps everything before it and goes on by itself), or put all the attention of a
step on one English piece ($\\alpha_t$ one-hot, so $c_t = h_j$) and see what the model writes from there."""
NO_MOVE = ("This model has no attention: there is no α to move (it reads one fixed c at every step). "
           "Changing a piece works for it as for the others.")
TOP_CHOICES = 5


def hypothesis_table(hypotheses) -> str:
    rows = "\n".join(f"| {i} | {html.escape(h.text)} | {h.log_prob:.2f} | {h.log_prob / len(h.target_tokens):.3f} |"
                     for i, h in enumerate(hypotheses, start=1))
    return f"| rank | French | log p | log p / length |\n|---|---|---|---|\n{rows}"


class ExploreSection:
    def __init__(self, translate_section):
        self.translate = translate_section

    def model(self, key: str):
        return self.translate.models[key]

    def grid(self, model, result, title: str, large: bool):
        if result.attention is None:
            return gr.update(value=None, visible=False), gr.update(value=NO_GRID, visible=True)
        figure = alignment_figure(result.source_tokens, result.target_tokens, result.attention, title, large)
        return gr.update(value=figure, visible=True), gr.update(value="", visible=False)

    def beam(self, state, key: str, beam_size: float, n_best: float, large: bool) -> list:
        """The n best hypotheses of the session's sentence with the chosen model: table, tree, picker."""
        if not state:
            return [None, "Translate a sentence first.", None, gr.update(choices=[], value=None)]
        k, n = int(beam_size), min(int(n_best), int(beam_size))
        hypotheses = self.model(key).translator.translate(state["text"], beam_size=k, n_best=n)
        explored = {"key": key, "text": state["text"], "beam_size": k, "hypotheses": hypotheses}
        tree = beam_tree_figure([h.target_tokens for h in hypotheses], [h.log_prob / len(h.target_tokens) for h in hypotheses], large)
        return [explored, hypothesis_table(hypotheses), tree, gr.update(choices=[(f"{i}. {h.text}", i - 1)
                for i, h in enumerate(hypotheses, start=1)], value=0)]

    def pick(self, explored, rank, large: bool) -> list:
        """A hypothesis: its grid, and the steps and English pieces a what-if can name."""
        if not explored or rank is None:
            return [gr.update(visible=False), gr.update(visible=False), gr.update(choices=[]), gr.update(choices=[])]
        model, result = self.model(explored["key"]), explored["hypotheses"][int(rank)]
        grid, note = self.grid(model, result, f"{model.title}, hypothesis {int(rank) + 1}: α", large)
        steps = [(f"{t}. {piece}", t) for t, piece in enumerate(result.target_tokens, start=1)]
        pieces = [(f"{j}. {piece}", j - 1) for j, piece in enumerate(result.source_tokens, start=1)]
        return [grid, note, gr.update(choices=steps, value=min(2, len(steps))), gr.update(choices=pieces, value=0)]

    def choices(self, explored, rank, t) -> dict:
        """The model's most probable pieces at step t of the picked hypothesis, with their probabilities."""
        if not explored or rank is None or t is None:
            return gr.update(choices=[], value=None)
        result = explored["hypotheses"][int(rank)]
        top = self.model(explored["key"]).translator.choices(explored["text"], result.target_tokens, int(t), TOP_CHOICES)
        return gr.update(choices=[(f"{piece}  (p = {p:.3f})", piece) for piece, p in top], value=top[0][0])

    def change(self, explored, rank, t, piece, typed, source_piece, large: bool) -> list:
        return self.what_if(explored, rank, t, piece, typed, source_piece, "change", large)

    def move(self, explored, rank, t, piece, typed, source_piece, large: bool) -> list:
        return self.what_if(explored, rank, t, piece, typed, source_piece, "move", large)

    def what_if(self, explored, rank, t, piece: str | None, typed: str, source_piece, how: str, large: bool) -> list:
        """Change the piece at step t (a choice, or typed French that replaces it), or move step t's α
        onto one English piece; the model goes on with the same beam size. Its text, grid and cost."""
        if not explored or rank is None or t is None:
            return ["Pick a hypothesis first.", gr.update(visible=False), gr.update(visible=False)]
        model, original = self.model(explored["key"]), explored["hypotheses"][int(rank)]
        translator, t, k = model.translator, int(t), explored["beam_size"]
        try:
            if how == "move":
                if not model.has_attention:
                    return [NO_MOVE, gr.update(visible=False), gr.update(visible=False)]
                weights = np.eye(len(original.source_tokens), dtype=np.float32)[int(source_piece)]
                # the steps before t as the hypothesis took them, then α_t one-hot, then the model's own steps
                result = translator.translate(explored["text"], beam_size=k, prefix=original.target_tokens[:t - 1],
                                              force_attention={t: weights})
                change = f"α at step {t} all on `{html.escape(original.source_tokens[int(source_piece)])}`"
            else:
                before = original.target_tokens[:t - 1]
                if typed.strip():  # French text from step t on, after the hypothesis's own beginning
                    prefix = f"{translator.target_tokenizer.decode_pieces(before)} {typed}"
                else:
                    prefix = [*before, piece]
                result = translator.translate(explored["text"], beam_size=k, prefix=prefix)
                change = f"step {t} written as `{html.escape(typed.strip() or piece or '')}`"
        except ValueError as error:
            return [f"⚠️ {html.escape(str(error))}", gr.update(visible=False), gr.update(visible=False)]
        grid, note = self.grid(model, result, f"{model.title}, what if: {change.replace('`', '')}", large)
        cost = result.log_prob - original.log_prob
        summary = (f"**What if {change}?** {html.escape(result.text)}\n\nlog p {original.log_prob:.2f} → {result.log_prob:.2f} "
                   f"({cost:+.2f}): the model finds the new translation e^{cost:+.2f} = {np.exp(cost):.3g} times as likely.")
        return [summary, grid, note]

    def render(self, controls, large_text: gr.Checkbox):
        gr.Markdown(EXPLANATION, latex_delimiters=[{"left": "$", "right": "$", "display": False}])
        explored = gr.State(None)
        choices = self.translate.choices()
        with gr.Row():
            key = gr.Dropdown(choices, value=self.translate.picks[SIDES[0]], label="Model", elem_id="explore-model")
            beam_size = gr.Slider(2, 8, value=5, step=1, label="Beam size k")
            n_best = gr.Slider(1, 8, value=5, step=1, label="Hypotheses shown (at most k)")
            show = gr.Button("Show the beam", variant="secondary", elem_id="explore-beam")
        table = gr.Markdown(elem_id="explore-table")
        tree = gr.Plot(show_label=False, elem_id="explore-tree", elem_classes="attn-wide")
        rank = gr.Radio([], label="Hypothesis", elem_id="explore-rank")
        grid = gr.Plot(show_label=False, elem_id="explore-grid", elem_classes="attn-wide", visible=False)
        note = gr.Markdown(visible=False, latex_delimiters=[{"left": "$", "right": "$", "display": False}])
        gr.Markdown("### What if?")
        with gr.Row():
            step = gr.Dropdown([], label="Output step t", elem_id="explore-step")
            ask = gr.Button("The model's choices at this step", elem_id="explore-choices")
        with gr.Row():
            piece = gr.Radio([], label="Write instead", elem_id="explore-piece")
            typed = gr.Textbox(label="…or type French to write from step t on", elem_id="explore-typed")
            change_button = gr.Button("Change the piece and go on", elem_id="explore-change")
        with gr.Row():
            source_piece = gr.Dropdown([], label="Put all of step t's attention on", elem_id="explore-source")
            move_button = gr.Button("Move the attention and go on", elem_id="explore-move")
        result = gr.Markdown(elem_id="explore-result")
        result_grid = gr.Plot(show_label=False, elem_id="explore-result-grid", elem_classes="attn-wide", visible=False)
        result_note = gr.Markdown(visible=False, latex_delimiters=[{"left": "$", "right": "$", "display": False}])

        show.click(self.beam, [controls.session, key, beam_size, n_best, large_text], [explored, table, tree, rank],
                   api_name="explore_beam")
        rank.change(self.pick, [explored, rank, large_text], [grid, note, step, source_piece], api_name="explore_pick")
        ask.click(self.choices, [explored, rank, step], piece, api_name="explore_choices")
        inputs = [explored, rank, step, piece, typed, source_piece]
        change_button.click(self.change, [*inputs, large_text], [result, result_grid, result_note], api_name="explore_change")
        move_button.click(self.move, [*inputs, large_text], [result, result_grid, result_note], api_name="explore_move")
