"""Check your understanding: multiple-choice questions with one right answer and an explanation.

Two kinds. Conceptual questions are the same for everyone, with the sizes of a GRU model on the page
(left out where no model has a GRU's decoder state). Trace questions are generated from the user's own
translation and answered from its trace (which piece got the most attention at a step, which model spreads
its attention more, how big c_t is; for a model with heads, where one head looks and what its scores are
divided by), so every answer can be checked against the numbers on screen.
"""
import math
from dataclasses import dataclass

import numpy as np

from attn_demo.decoding.grids import grid_name
from attn_demo.models.attention import KINDS


@dataclass(frozen=True)
class Question:
    prompt: str  # Markdown
    choices: tuple[str, ...]  # plain text
    answer: int  # index of the right choice
    explanation: str  # Markdown: why that choice is right

    def check(self, choice: str | None) -> tuple[bool, str]:
        """(right?, feedback) for the choice a user made."""
        if choice not in self.choices:
            return False, "Choose an answer first."
        if self.choices.index(choice) == self.answer:
            return True, f"**Right.** {self.explanation}"
        return False, f"**Not quite:** the answer is “{self.choices[self.answer]}”. {self.explanation}"


def plain(latex: str) -> str:
    """A query of attention.KINDS (LaTeX) as a choice's plain text shows it: s_{t-1} → s_{t−1}."""
    return latex.replace("-", "−")


def concept_questions(H: int | None, D: int | None) -> list[Question]:
    """The ideas every course asks about: how attention reads, and, with the sizes of a GRU model (decoder state H,
    annotation D), what c_t holds and what the dot, general and low-rank scores need. Without a GRU model (a page
    of Transformers, which have no decoder state H) the questions about its sizes are left out."""
    return [*reading_questions(), *(size_questions(H, D) if H is not None and D is not None else [])]


def reading_questions() -> list[Question]:
    """What attention reads, and why the two orders of a decoder step differ, from attention.KINDS: the first kind
    whose c_t feeds the GRU (attention runs first), and the first whose c_t feeds only the output (the GRU runs first)."""
    first = next(kind for kind in KINDS.values() if kind.score and kind.context_into == "gru")
    second = next(kind for kind in KINDS.values() if kind.score and kind.context_into == "output")
    return [
        Question(
            "What does the attention model read at output step t?",
            ("Only the encoder's last state", "A decoder state (the query) and every encoder annotation h_j",
             "The French pieces emitted so far", "The English sentence as text"),
            1, "It scores each annotation h_j against the query (a decoder state) and mixes all of them; "
               "the last encoder state alone is the bottleneck attention removes."),
        Question(
            f"{first.title}'s query is {plain(first.query)}, {second.title}'s is {plain(second.query)}. Why does "
            f"{first.title} attend with the *previous* state?",
            ("s_t is too large to compare", "s_{t−1} has already seen y_t", f"In {first.title}, c_t is an input "
             "of the GRU that makes s_t, so s_t does not exist yet when attention runs", f"{second.title} has no previous state"),
            2, f"{first.title}: c_t = attend({plain(first.query)}), then s_t = GRU([E y_{{t−1}}; c_t], s_{{t−1}}). "
               f"{second.title} runs the GRU first, s_t = GRU(E y_{{t−1}}, s_{{t−1}}), then attends with "
               f"{plain(second.query)} and uses c_t only in the output layer."),
    ]


def size_questions(H: int, D: int) -> list[Question]:
    """What c_t holds and what the dot, general and low-rank scores need, with a GRU model's decoder state H and
    annotation D."""
    return [
        Question(
            "c_t is a weighted sum. Of what, and how many numbers does it hold here?",
            (f"Of the annotations h_j, weighted by α_tj: {D} numbers, like each h_j",
             "Of the scores e_tj: one number per English piece", f"Of the French embeddings: {H} numbers",
             "Of the annotations: as many numbers as the sentence has pieces"),
            0, f"c_t = Σ_j α_tj h_j mixes the annotations, so it has their size, D = {D}, whatever the "
               "length of the sentence: a longer sentence means more vectors to mix, not a bigger mix."),
        Question(
            "Why does the dot score e_tj = s_tᵀ h_j need the decoder state and the annotations to be the same size (H = D)?",
            ("It doesn't: dot products work for any sizes", "Softmax needs it", "So that c_t has the size of s_t",
             "A dot product pairs the entries of two vectors one by one, so it is only defined for vectors of the same length"),
            3, f"s_tᵀ h_j = Σ_i s_t,i h_j,i needs one h entry per s entry. The general score s_tᵀ W h_j "
               f"puts a matrix W of H × D = {H} × {D} in between, which maps one size to the other."),
        Question(
            f"The general score uses W with H × D = {H * D:,} numbers. The reduced-rank score writes "
            f"W = UᵀV with U of k × H and V of k × D. With k = 64, what does that save?",
            ("Nothing: UᵀV has H × D entries too", f"Parameters: k(H + D) = {64 * (H + D):,} instead of "
             f"{H * D:,}, at the price of scores limited to rank k", "The softmax", "The encoder"),
            1, f"Only U and V are learned: 64 × ({H} + {D}) = {64 * (H + D):,} numbers, "
               f"{H * D / (64 * (H + D)):.0f}× fewer than W. UᵀV can only express rank-k interactions, "
               "and V h_j is still computed once per sentence."),
    ]


def entropy(weights) -> float:
    """−Σ α log α in nats: 0 when all attention is on one piece, log S when it is spread evenly."""
    weights = np.asarray(weights, dtype=np.float64)
    weights = weights[weights > 0]
    return float(-(weights * np.log(weights)).sum())


def _piece_choice(tokens, j: int) -> str:
    return f"{tokens[j]} (piece {j + 1})"  # a piece may occur twice: its position tells them apart


def _piece_question(row, tokens, prompt: str, where: str, n_choices: int) -> Question:
    """Which English piece got the most of one row of α (prompt asks it, `where` names the row)? Choices: the
    pieces with the highest α in that row, in sentence order."""
    options = sorted(np.argsort(-row, kind="stable")[:n_choices].tolist())
    best = int(row.argmax())
    runner_up = int(np.argsort(-row, kind="stable")[1]) if len(row) > 1 else best
    return Question(
        prompt, tuple(_piece_choice(tokens, j) for j in options), options.index(best),
        f"{where}: α = {row[best]:.2f} on `{tokens[best]}`"
        + (f", then {row[runner_up]:.2f} on `{tokens[runner_up]}`." if runner_up != best else "."))


def most_attended(result, title: str, t: int, n_choices: int = 4) -> Question:
    """Which English piece got the most attention at step t (1-based), in the grid Translation.attention is
    (for a model with heads, the one its config shows, named in the explanation)?"""
    shown = f" ({grid_name(*result.heads.shown)})" if result.heads is not None else ""
    return _piece_question(
        result.attention[t - 1], result.source_tokens,
        f"At step {t}, {title} emitted `{result.target_tokens[t - 1]}`. Which English piece got the most attention?",
        f"Row {t} of {title}'s grid{shown}", n_choices)


def head_most_attended(result, title: str, layer: int, head: int, t: int, n_choices: int = 4) -> Question:
    """Which English piece does one head (layer, head from 0) of a model with heads attend to most at step t
    (1-based)? The answer is the argmax of that head's cross-attention row, heads.cross[layer, head, t − 1]."""
    return _piece_question(
        result.heads.cross[layer, head, t - 1], result.source_tokens,
        f"At step {t}, {title} emitted `{result.target_tokens[t - 1]}`. Which English piece does head {head + 1} "
        f"of layer {layer + 1} attend to most?", f"Row {t} of {title}'s grid of {grid_name(layer, head)}", n_choices)


def head_to_ask(heads, t: int, shown_best: int) -> tuple[int, int]:
    """(layer, head) from 0 of the head to ask about at step t (1-based): the most confident (largest max_j α_tj)
    of those whose most attended piece differs from shown_best (the shown grid's), so the answer is not the
    grid's; the most confident of all where every head agrees with the grid."""
    rows = heads.cross[:, :, t - 1]  # (L, H, S)
    confidence = rows.max(-1)  # (L, H)
    elsewhere = np.where(rows.argmax(-1) != shown_best, confidence, -np.inf)
    pick = elsewhere if np.isfinite(elsewhere).any() else confidence
    layer, head = np.unravel_index(int(pick.argmax()), pick.shape)
    return int(layer), int(head)


def _number(value: float) -> str:
    """A size or its square root as a choice shows it: 8, 3.46."""
    return str(round(value)) if float(value).is_integer() else f"{value:.2f}"


def score_scale(result, title: str, layer: int, head: int, t: int) -> Question:
    """What a head's scores are divided by: e_tj = q_t · k_j / √d_k, d_k the size of the trace's own queries. The
    explanation divides one q_t · k_j of the trace (head `head` of layer `layer`, step t, the piece of the largest
    |e_tj|) by its e_tj, and says why: without it the dot products grow with d_k and the softmax saturates."""
    heads = result.heads
    H, d_k = heads.queries.shape[1], heads.queries.shape[-1]
    D, scale = H * d_k, math.sqrt(d_k)
    wrong = [value for value in dict.fromkeys((d_k, math.sqrt(D), D, H)) if not math.isclose(value, scale)][:3]
    values = sorted([scale, *wrong])
    scores = heads.cross_scores[layer, head, t - 1]  # (S,)
    j = int(np.abs(scores).argmax())
    dot = float(heads.queries[layer, head, t - 1] @ heads.keys[layer, head, j])
    return Question(
        f"Each head of {title} compares a query q_t with every key k_j, vectors of d_k = {d_k} numbers (D = {D} "
        f"split into H = {H} heads). Its score e_tj is q_t · k_j divided by what number?",
        tuple(_number(value) for value in values), values.index(scale),
        f"e_tj = q_t · k_j / √d_k, and √{d_k} = {_number(scale)}. The trace shows it: at step {t}, "
        f"{grid_name(layer, head)}, on `{result.source_tokens[j]}`, q_t · k_j = {dot:.3f} and e_tj = {scores[j]:.3f}, and {dot:.3f} / "
        f"{scores[j]:.3f} = {dot / scores[j]:.2f}. Without the division the dot product would grow with d_k (a sum of "
        "d_k products of numbers of variance 1 has variance d_k): the scores would spread ever wider and the softmax "
        "would saturate, all of α on one piece and its gradients vanishing.")


def more_spread(results: dict, t: int) -> Question:
    """Which model spreads its attention more at step t? Measured by the entropy of α_t; results
    are {title: Translation} of models with attention."""
    titles = list(results)
    spread = {title: entropy(results[title].attention[t - 1]) for title in titles}
    numbers = "; ".join(f"{title}: {spread[title]:.2f} nats, largest α {results[title].attention[t - 1].max():.2f}"
                        for title in titles)
    return Question(
        f"At step {t}, which model spreads its attention more widely over the English pieces?",
        tuple(titles), int(np.argmax([spread[title] for title in titles])),
        f"The entropy −Σ_j α_tj log α_tj measures the spread (0: all on one piece). {numbers}.")


def size_choices(D: int, S: int) -> tuple[tuple[str, ...], int]:
    """The choices of the c_t question, smallest first, and where its size D is among them: D and three different
    wrong ones, the sentence length S, all S annotations (S × D), one number, twice D. Where sizes coincide (S = D,
    a one-piece sentence, a tiny model) those repeat one another or D, so the next sizes above D stand in: no
    choice is offered twice."""
    wrong = [size for size in dict.fromkeys((S, S * D, 1, 2 * D, *range(D + 1, D + 4))) if size != D]
    sizes = sorted((D, *wrong[:3]))
    return tuple(f"{size:,}" for size in sizes), sizes.index(D)


def context_size(result, title: str) -> Question:
    """How many numbers does c_t hold? The annotation size D, not the sentence length; without
    attention, the one c has D numbers too; with heads, c_t is the shown layer's cross-attention output
    W_O [o_t^1; …; o_t^H] + b_O, of D numbers too."""
    S, D = result.encoder_states.shape
    choices, answer = size_choices(D, S)
    if result.attention is None:
        return Question(
            f"Your sentence is S = {S} English pieces. How many numbers does the fixed c of {title} hold?",
            choices, answer,
            f"c = [→h_S; ←h_1] joins the last state of each encoder direction: D = {D} numbers, for a sentence of "
            "any length. Everything the decoder learns of the English must fit in them: the bottleneck.")
    if result.heads is not None:
        H, d_k = result.heads.queries.shape[1], result.heads.queries.shape[-1]
        return Question(
            f"Your sentence is S = {S} English pieces. How many numbers does the cross-attention output "
            f"W_O [o_t^1; …; o_t^H] + b_O of {title}'s layer {result.heads.shown[0] + 1} hold at each step?",
            choices, answer,
            f"Each of its H = {H} heads mixes the {S} values v_j, each of d_k = {d_k} numbers, into "
            f"o_t = Σ_j α_tj v_j of {d_k}; the {H} o_t side by side hold {H * d_k}, and W_O maps them to D = {D}: "
            "attention chooses how much of each v_j to take, it does not line them up.")
    return Question(
        f"Your sentence is S = {S} English pieces. How many numbers does each c_t of {title} hold?",
        choices, answer,
        f"c_t = Σ_j α_tj h_j mixes the {S} annotations h_j, each of D = {D} numbers, so c_t has {D}: "
        "attention chooses how much of each h_j to take, it does not line them up.")


def _asked_step(result) -> int:
    """The step (1-based) the questions about one translation ask about: the 4th, or a step before the final
    </s> where there is one."""
    return min(4, max(1, len(result.target_tokens) - 1))


def head_questions(result, title: str) -> list[Question]:
    """The questions about a model with heads (KINDS[…].heads set): where one head looks at the asked step
    (head_to_ask: one that looks elsewhere than the shown grid, where one does), and what its scores are divided by."""
    t = _asked_step(result)
    layer, head = head_to_ask(result.heads, t, int(result.attention[t - 1].argmax()))
    return [head_most_attended(result, title, layer, head, t), score_scale(result, title, layer, head, t)]


def trace_questions(results: list) -> list[Question]:
    """Questions about one translation by the models on screen, [(title, Translation)], answered from
    the traces. Questions about α ask only about models that have it, about heads only about models that
    have them (the first such side), and comparing two needs two different models (the same one may be on
    both sides)."""
    attending = dict((title, result) for title, result in results if result.attention is not None)
    with_heads = [(title, result) for title, result in results if KINDS[result.attention_type].heads]
    questions = []
    if attending:
        title, result = next(iter(attending.items()))
        questions.append(most_attended(result, title, _asked_step(result)))
    if len(attending) > 1:
        shortest = min(len(result.target_tokens) for result in attending.values())
        questions.append(more_spread(attending, min(2, shortest)))
    if with_heads:
        title, result = with_heads[0]
        questions += head_questions(result, title)
    questions.append(context_size(results[0][1], results[0][0]))
    return questions
