"""Explore the decoding: the beam search laid open (its best hypotheses with their scores, and what
it kept and pruned at every step), and "what if?" on the hypothesis picked: change the piece at a
step (the model keeps the prefix and goes on) or move the attention at a step onto one English
piece (c_t = that h_j, and the model goes on from there), with what it changed and what it cost in
log-probability; or, in a model with heads, turn one head of its cross-attention off (its output zeroed,
Michel et al. 2019) and search again. The hypothesis and the what-if each get their grid, network view and step
view, side by side.

Every number is the model's: the searches are Translator.beam's and Translator.translate's (prefix,
force_attention, heads_off), and the choices at a step are its own probabilities (Translator.choices)."""
import dataclasses
import html
from typing import NamedTuple

import gradio as gr
import numpy as np

from attn_demo.decoding.grids import grid_name
from attn_demo.decoding.search import Penalties
from attn_demo.measures.heads import alpha_moved, every_head, same_reading
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.translator import Translator
from attn_demo.ui.page import HIDDEN_WHEN_EMPTY, LATEX, SIDES, grid_values, plot
from attn_demo.ui.step_group import StepGroup, network_slot, step_slot
from attn_demo.views.figures import alignment_figure, beam_search_figure
from attn_demo.views.steps import pca_projection
from attn_demo.views.translation import read_pick, step_views

EXPLANATION = """## Explore the decoding
Beam search keeps the k most probable beginnings at every step. Here are the best finished ones, ranked by
log p / length, and the tree of the beginnings they share. Pick one, then ask **what if?**: choose another
piece at a step (the model keeps everything before it and goes on by itself), or put all the attention of a
step on one English piece ($\\alpha_t$ one-hot, so $c_t = h_j$) and see what the model writes from there. A
Transformer's heads can be turned off one at a time: the search runs again without that head's output."""
SEARCH_CAPTION = ("Each column is an output step $t$. The search extends each of its $k$ kept beginnings by every "
                  "French piece and weighs the $2k$ most probable extensions (drawn most probable on top): the $k$ best "
                  "that do not end are kept (blue), an ending among the $k$ best is a finished hypothesis (◆), the "
                  "rest are pruned (grey). Red: the path of each of the best hypotheses, #rank where it ends. "
                  "With the penalties at every step, the extensions are weighed by log p plus the coverage term of "
                  "their α so far instead. Hover over (or tap) a piece for its probability and its beginning's log p.")
STEPS = StepGroup("explore-steps")  # the picked hypothesis's step view and the what-if's, side by side
NO_MOVE = ("This model has no attention: there is no α to move (it reads one fixed c at every step). "
           "Changing a piece works for it as for the others.")
TOP_CHOICES = 5
NOT_SHOWN = "Press **Show the beam** to lay open the beam search of the sentence on screen."  # in place of a table
BEAMS_KEPT = 64  # searches kept (model, sentence, k, n), shared by every session
EVERY_HEAD = "none"  # the head picker's value with no head turned off
SHOW_FIRST = "Press Show the beam first: the head is turned off in that search."


PENALTY_NOTE = ("The search ranks what it finishes by its **score**: log p over a length penalty, plus the coverage "
                "penalties below: $\\beta_{cov} \\sum_j \\log \\min(C_j, 1)$ for English pieces left (partly) unattended "
                "and $-\\beta_{rep} \\sum_j (\\max(C_j, 1) - 1)$ for pieces attended more than once in all, "
                "$C_j = \\sum_t \\alpha_{tj}$. They change the ranking, never what the search finds. **At every "
                "step** they rank every beginning instead (its log p plus the terms of its $C$ so far, all of the "
                "same length), and what finished by log p over the length penalty alone: a beginning that attends "
                "again to what it has covered falls behind its rivals while they are still in the beam, so the "
                "search finds other hypotheses.")


def hypothesis_table(hypotheses) -> str:
    rows = "\n".join(f"| {i} | {html.escape(h.text)} | {h.log_prob:.2f} | {h.log_prob / len(h.target_tokens):.3f} | "
                     f"{h.score:.3f} |" for i, h in enumerate(hypotheses, start=1))
    return f"| rank | French | log p | log p / length | score |\n|---|---|---|---|---|\n{rows}"


def on_one_map(views: list[tuple]) -> dict:
    """The step views of one sentence's translations [(title, Translation, steps whose α was set by
    hand)] (views.step_views); one projection for all, from their shared annotations, so their c_t
    land on the same map; none for a Transformer's, whose heads weigh the v_j, not the h_j (steps.step_payload)."""
    projection = None if views[0][1].heads is not None else pca_projection(views[0][1].encoder_states)
    return step_views([(title, result, projection, forced) for title, result, forced in views])


def slider_for(payload: dict) -> dict:
    return gr.update(value=1, maximum=max(2, payload["steps"]))


class WhatIf(NamedTuple):
    """What a what-if puts on the page, in the order of its outputs."""

    summary: str  # what changed and what it cost, or why nothing was done
    grid: object  # the what-if's alignment grid (gr.Plot's value), None without one
    note: str  # under the grid: why there is none
    steps: object  # the step views' payload of the hypothesis and the what-if (on_one_map), or gr.skip()
    slider: object  # the step slider's update, or gr.skip()


def refused(summary: str) -> WhatIf:
    """A what-if not done: the reason, the grid cleared, the step views left as they are."""
    return WhatIf(summary, None, "", gr.skip(), gr.skip())


def head_choices(model) -> list[tuple[str, str]]:
    """The head picker's choices for a model: "none", then each cross-attention head as "layer 2, head 3" with the
    value "2.3" (views.read_pick's, from 1); "none" alone for a model without heads."""
    heads = every_head(model.translator.config) if model.kind.heads else []
    return [(EVERY_HEAD, EVERY_HEAD), *((grid_name(layer, head), f"{layer + 1}.{head + 1}") for layer, head in heads)]


def head_picker(model) -> dict:
    """The head picker's choices, value and line for a model explored (None: none yet): its heads
    (head_choices), or a line saying it has none."""
    if model is None:
        return {"choices": [(EVERY_HEAD, EVERY_HEAD)], "value": EVERY_HEAD, "info": SHOW_FIRST}
    config = model.translator.config
    info = (f"{config.dec_layers} layers of {config.heads} heads: the search runs again without the one picked"
            if model.kind.heads else no_heads(model))
    return {"choices": head_choices(model), "value": EVERY_HEAD, "info": info}


def no_heads(model) -> str:
    """Why a model has no head to turn off."""
    how = "it attends with one score, one α per step" if model.has_attention else "it has no attention at all, one fixed c"
    return f"{model.title} has no heads to turn off: {how}."


def head_off_summary(name: str, original, result) -> str:
    """What turning head `name` off changed: the French beside hypothesis 1's, the log p each model gives its own,
    and how far each layer's α moved while both read the same French."""
    steps = same_reading(original.target_tokens, result.target_tokens)
    shifts = alpha_moved(original.heads, result.heads, steps)
    moved = ", ".join(f"layer {layer} by {shift:.2f}" for layer, shift in enumerate(shifts, start=1))
    french = ("the same French" if original.target_tokens == result.target_tokens else
              f"French that parts from hypothesis 1's at step {steps}")
    return (f"**What if {name} were off?** {html.escape(result.text)}\n\nWith every head at work (hypothesis 1): "
            f"{html.escape(original.text)}\n\nWithout it, {french}; log p {original.log_prob:.2f} → {result.log_prob:.2f}, "
            f"each by the model that wrote it. The head still computes its α, but its output is zero at every step. "
            f"The largest change of a head's α over the {steps} steps that read the same French: {moved}; a layer "
            "at or below the head turned off cannot change there.")


class ExploreSection:
    def __init__(self, models):
        self.models = models  # ui.page.ModelsOnPage
        self.searched = ComputedOnce(self._beam, BEAMS_KEPT)  # a class exploring one sentence searches it once
        self.searched_without = ComputedOnce(self._head_off, BEAMS_KEPT)  # and turning one head off, once a head

    def _beam(self, key: str, text: str, k: int, n: int, coverage: float, repeat: float, stepwise: bool):
        return self.model(key).run(Translator.beam, text, k, n, self.ranking(key, coverage, repeat, stepwise))

    def _head_off(self, key: str, text: str, k: int, penalties: Penalties, pick: tuple[int, int]):
        return self.model(key).run(Translator.translate, text, beam_size=k, penalties=penalties, heads_off=[pick])

    def ranking(self, key: str, coverage: float, repeat: float, stepwise: bool) -> Penalties:
        """The model's own ranking (its card's) with the coverage penalties the sliders ask for."""
        return dataclasses.replace(self.model(key).translator.penalties, coverage=coverage, repeat=repeat, stepwise=stepwise)

    def model(self, key: str):
        return self.models[key]

    def grid(self, result, title: str, large: bool, marked=None) -> tuple:
        """A hypothesis's grid and its note, as the translate section's (ui.page.grid_values)."""
        figure = None if result.attention is None else alignment_figure(
            result.source_tokens, result.target_tokens, result.attention, title, large, marked=marked)
        return grid_values(figure)

    def beam(self, state, key: str, beam_size: float, n_best: float, large: bool, coverage: float = 0.0,
             repeat: float = 0.0, stepwise: bool = False) -> list:
        """The beam search of the session's sentence with the chosen model laid open: the n best
        (table and picker), ranked with the coverage penalties asked for (at every step, if asked),
        and the search figure."""
        if not state:
            return [None, "Translate a sentence first.", None, gr.update(choices=[], value=None)]
        k, n = int(beam_size), min(int(n_best), int(beam_size))
        if not self.model(key).has_attention:
            coverage, repeat, stepwise = 0.0, 0.0, False  # no α, no coverage: only the length penalty ranks
        beam = self.searched(key, state["text"], k, n, float(coverage), float(repeat), bool(stepwise))
        hypotheses = beam.translations
        explored = {"key": key, "text": state["text"], "beam_size": k, "hypotheses": hypotheses,
                    "penalties": self.ranking(key, float(coverage), float(repeat), bool(stepwise))}
        figure = beam_search_figure(beam.weighed, beam.pieces, [h.target_tokens for h in hypotheses], large)
        return [explored, hypothesis_table(hypotheses), plot(figure), gr.update(choices=[(f"{i}. {h.text}", i - 1)
                for i, h in enumerate(hypotheses, start=1)], value=0)]

    def pick(self, explored, rank, large: bool) -> list:
        """A hypothesis: its grid and step view, and the steps and English pieces a what-if can name."""
        if not explored or rank is None:
            return [None, "", gr.update(choices=[]), gr.update(choices=[]), None, gr.skip()]
        model, result = self.model(explored["key"]), explored["hypotheses"][int(rank)]
        title = f"{model.title}, hypothesis {int(rank) + 1}"
        grid, note = self.grid(result, f"{title}: α", large)
        steps = [(f"{t}. {piece}", t) for t, piece in enumerate(result.target_tokens, start=1)]
        pieces = [(f"{j}. {piece}", j - 1) for j, piece in enumerate(result.source_tokens, start=1)]
        payload = on_one_map([(title, result, ())])
        return [grid, note, gr.update(choices=steps, value=min(2, len(steps))), gr.update(choices=pieces, value=0),
                payload, slider_for(payload)]

    def choices(self, explored, rank, t) -> dict:
        """The model's most probable pieces at step t of the picked hypothesis, with their probabilities."""
        if not explored or rank is None or t is None:
            return gr.update(choices=[], value=None)
        result = explored["hypotheses"][int(rank)]
        top = self.model(explored["key"]).run(Translator.choices, explored["text"], result.target_tokens, int(t), TOP_CHOICES)
        return gr.update(choices=[(f"{piece}  (p = {p:.3f})", piece) for piece, p in top], value=top[0][0])

    def change(self, explored, rank, t, piece, typed, source_piece, large: bool) -> list:
        return self.what_if(explored, rank, t, piece, typed, source_piece, "change", large)

    def move(self, explored, rank, t, piece, typed, source_piece, large: bool) -> list:
        return self.what_if(explored, rank, t, piece, typed, source_piece, "move", large)

    def forget(self, state, explored) -> list:
        """The beam on screen and all that follows from it, gone once another sentence is translated
        (their numbers are the old sentence's); another model pair on the same sentence keeps them.
        Clearing the hypothesis picked clears its grid, step choices and step view (pick)."""
        if not explored or (state and state["text"] == explored["text"]):
            return [gr.skip()] * 8
        return [None, NOT_SHOWN, None, gr.update(choices=[], value=None), gr.update(choices=[], value=None), "", None, ""]

    def what_if(self, explored, rank, t, piece: str | None, typed: str, source_piece, how: str, large: bool) -> WhatIf:
        """Change the piece at step t (a choice, or typed French that replaces it), or move step t's α
        onto one English piece; the model goes on with the same beam size. Its text and cost, its grid
        with the change outlined, and the step views of the hypothesis and the what-if."""
        if not explored or rank is None or t is None:
            return refused("Pick a hypothesis first.")
        model, original = self.model(explored["key"]), explored["hypotheses"][int(rank)]
        t, k = int(t), explored["beam_size"]
        try:
            if how == "move":
                if not model.has_attention:
                    return refused(NO_MOVE)
                j = int(source_piece)
                weights = np.eye(len(original.source_tokens), dtype=np.float32)[j]
                # the steps before t as the hypothesis took them, then α_t one-hot, then the model's own steps
                result = model.run(Translator.translate, explored["text"], beam_size=k, prefix=original.target_tokens[:t - 1],
                                   force_attention={t: weights})
                change, marked, forced = f"α at step {t} all on `{html.escape(original.source_tokens[j])}`", (t - 1, j), (t,)
            else:
                before = original.target_tokens[:t - 1]
                if typed.strip():  # French text from step t on, after the hypothesis's own beginning
                    prefix = f"{model.translator.target_tokenizer.decode_pieces(before)} {typed}"
                else:
                    prefix = [*before, piece]
                result = model.run(Translator.translate, explored["text"], beam_size=k, prefix=prefix)
                change, marked, forced = f"step {t} written as `{html.escape(typed.strip() or piece or '')}`", (t - 1, None), ()
        except ValueError as error:
            return refused(f"⚠️ {html.escape(str(error))}")
        title = f"{model.title}, what if: {change.replace('`', '')}"
        grid, note = self.grid(result, title, large, marked)
        cost = result.log_prob - original.log_prob
        summary = (f"**What if {change}?** {html.escape(result.text)}\n\nlog p {original.log_prob:.2f} → {result.log_prob:.2f} "
                   f"({cost:+.2f}): the model finds the new translation e^{cost:+.2f} = {np.exp(cost):.3g} times as likely. "
                   "Outlined in red in its grid: what was changed.")
        steps = on_one_map([(f"{model.title}, hypothesis {int(rank) + 1}", original, ()), (title, result, forced)])
        return WhatIf(summary, grid, note, steps, slider_for(steps))

    def heads(self, explored) -> dict:
        """The head picker for the model explored (head_picker)."""
        return gr.update(**head_picker(self.model(explored["key"]) if explored else None))

    def turn_off(self, explored, head, large: bool) -> WhatIf:
        """Turn one cross-attention head off (head: "layer.head" from 1, views.read_pick) and search the sentence
        again with the explored beam's size and ranking: the best found, its grid, and the step views of
        hypothesis 1 (every head at work) and of it; a model without heads does nothing and says why."""
        if not explored:
            return refused(SHOW_FIRST)
        model = self.model(explored["key"])
        if not model.kind.heads:
            return refused(no_heads(model))
        if head in (None, "", EVERY_HEAD):
            return refused("Every head is at work: pick one to turn off.")
        pick = read_pick(model, head)
        if pick is None or pick[1] is None:  # a REST call's, or a mean of heads
            config = model.translator.config
            return refused(f"⚠️ “{html.escape(str(head)[:40])}” is not a head of {model.title}: it has {config.dec_layers} "
                           f"decoder layers of {config.heads} heads, named layer.head from 1 (2.3: layer 2, head 3).")
        original = explored["hypotheses"][0]
        try:
            result = self.searched_without(explored["key"], explored["text"], explored["beam_size"], explored["penalties"], pick)
        except ValueError as error:
            return refused(f"⚠️ {html.escape(str(error))}")
        name = grid_name(*pick)
        title = f"{model.title}, what if: {name} off"
        grid, note = self.grid(result, f"{title}: α of {grid_name(*result.heads.shown)}", large)
        steps = on_one_map([(f"{model.title}, hypothesis 1", original, ()), (title, result, ())])
        return WhatIf(head_off_summary(name, original, result), grid, note, steps, slider_for(steps))

    def render(self, controls, large_text: gr.Checkbox):
        gr.Markdown(EXPLANATION, latex_delimiters=LATEX)
        explored = gr.State(None)
        with gr.Row():
            key = gr.Dropdown(self.models.choices(), value=self.models.opening[SIDES[0]], label="Model", elem_id="explore-model",
                              min_width=260)  # a model's name and key: a row of its own on a phone
            beam_size = gr.Slider(2, 8, value=5, step=1, label="Beam size k")
            n_best = gr.Slider(1, 8, value=5, step=1, label="Hypotheses shown (at most k)")
            show = gr.Button("Show the beam", variant="secondary", elem_id="explore-beam")
        with gr.Row():
            coverage = gr.Slider(0, 1, value=0, step=0.05, label="Coverage penalty β_cov", elem_id="explore-coverage",
                                 info="against English pieces left unattended")
            repeat = gr.Slider(0, 3, value=0, step=0.1, label="Repeat penalty β_rep", elem_id="explore-repeat",
                               info="against pieces attended more than once in all")
            stepwise = gr.Checkbox(False, label="At every step", elem_id="explore-stepwise",
                                   info="rank every beginning by them, instead of what the search finished")
        gr.Markdown(PENALTY_NOTE, latex_delimiters=LATEX)
        table = gr.Markdown(NOT_SHOWN, elem_id="explore-table")
        search = gr.Plot(show_label=False, elem_id="explore-search")
        gr.Markdown(SEARCH_CAPTION, latex_delimiters=LATEX)
        rank = gr.Radio([], label="Hypothesis", elem_id="explore-rank")
        grid = gr.Plot(show_label=False, elem_id="explore-grid")
        note = gr.Markdown(latex_delimiters=LATEX, elem_classes=HIDDEN_WHEN_EMPTY)
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
        # a REST client, which never receives the picker's choices for its model, names its head ("1.2"): turn_off
        # checks it against the model and says what is wrong with it
        head = gr.Dropdown(**head_picker(None), label="Turn a head off", elem_id="explore-head-off", allow_custom_value=True)
        result = gr.Markdown(elem_id="explore-result")
        result_grid = gr.Plot(show_label=False, elem_id="explore-result-grid")
        result_note = gr.Markdown(latex_delimiters=LATEX, elem_classes=HIDDEN_WHEN_EMPTY)
        gr.Markdown("#### Step by step: the hypothesis (left) and the what-if (right)")
        with gr.Column(elem_id=STEPS.element_id):
            slider = STEPS.scrubber("explore_")
            with gr.Row():  # columns: side by side on a wide screen, one under the other on a phone
                for view in ("explore-hypothesis", "explore-what-if"):
                    with gr.Column():
                        network_slot(f"{view}-network")
                        step_slot(f"{view}-step")
        steps_json = gr.JSON(visible=False)  # the step views' payload, kept in the browser for step_views.js

        def then_load(event, name: str):
            event.then(None, [steps_json, large_text], None, js=STEPS.load, api_name=f"{name}_load_steps")

        show.click(self.beam, [controls.session, key, beam_size, n_best, large_text, coverage, repeat, stepwise],
                   [explored, table, search, rank], api_name="explore_beam").then(
            self.heads, explored, head, queue=False, show_progress="hidden", api_name="explore_heads")
        then_load(rank.change(self.pick, [explored, rank, large_text], [grid, note, step, source_piece, steps_json, slider],
                              api_name="explore_pick"), "explore_pick")
        # after every translation shown; off the queue and without a spinner: it decodes nothing, and a full class
        # waiting for translations must not hold it up
        controls.steps.change(self.forget, [controls.session, explored],
                              [explored, table, search, rank, piece, result, result_grid, result_note],
                              queue=False, show_progress="hidden", api_name="explore_forget")
        ask.click(self.choices, [explored, rank, step], piece, api_name="explore_choices")
        inputs = [explored, rank, step, piece, typed, source_piece]
        outputs = [result, result_grid, result_note, steps_json, slider]
        then_load(change_button.click(self.change, [*inputs, large_text], outputs, api_name="explore_change"), "explore_change")
        then_load(move_button.click(self.move, [*inputs, large_text], outputs, api_name="explore_move"), "explore_move")
        then_load(head.input(self.turn_off, [explored, head, large_text], outputs, api_name="explore_head_off"),
                  "explore_head_off")
        # the model explored follows the left side's pick, a link's included; in the browser, with no request
        controls.pickers[0].change(None, controls.pickers[0], key, js="(left) => left", api_name="explore_follow_left")
