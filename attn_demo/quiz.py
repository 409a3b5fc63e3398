"""Check your understanding: multiple-choice questions with one right answer and an explanation.

Two kinds. Conceptual questions are the same for everyone, with the sizes of the models on the
page. Trace questions are generated from the user's own translation and answered from its trace
(which piece got the most attention at a step, which model spreads its attention more, how big
c_t is), so every answer can be checked against the numbers on screen.
"""
from dataclasses import dataclass

import numpy as np

from attn_demo.attention import KINDS


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


def concept_questions(H: int, D: int) -> list[Question]:
    """The ideas every course asks about, with this app's sizes: decoder state H, annotation D. The two orders
    of a decoder step come from attention.KINDS: the first kind whose c_t feeds the GRU (attention runs
    first), and the first whose c_t feeds only the output (the GRU runs first)."""
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


def most_attended(result, title: str, t: int, n_choices: int = 4) -> Question:
    """Which English piece got the most attention at step t (1-based)? Choices: the pieces with
    the highest α at that step, in sentence order."""
    row = result.attention[t - 1]
    options = sorted(np.argsort(-row, kind="stable")[:n_choices].tolist())
    best = int(row.argmax())
    runner_up = int(np.argsort(-row, kind="stable")[1]) if len(row) > 1 else best
    return Question(
        f"At step {t}, {title} emitted `{result.target_tokens[t - 1]}`. Which English piece got the most attention?",
        tuple(_piece_choice(result.source_tokens, j) for j in options), options.index(best),
        f"Row {t} of {title}'s grid: α = {row[best]:.2f} on `{result.source_tokens[best]}`"
        + (f", then {row[runner_up]:.2f} on `{result.source_tokens[runner_up]}`." if runner_up != best else "."))


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


def context_size(result, title: str) -> Question:
    """How many numbers does c_t hold? The annotation size D, not the sentence length; without
    attention, the one c has D numbers too."""
    S, D = result.encoder_states.shape
    choices = (f"{D}", f"{S}", f"{S * D:,}", "1")
    if result.attention is None:
        return Question(
            f"Your sentence is S = {S} English pieces. How many numbers does the fixed c of {title} hold?",
            choices, 0,
            f"c = [→h_S; ←h_1] joins the last state of each encoder direction: D = {D} numbers, for a sentence of "
            "any length. Everything the decoder learns of the English must fit in them: the bottleneck.")
    return Question(
        f"Your sentence is S = {S} English pieces. How many numbers does each c_t of {title} hold?",
        choices, 0,
        f"c_t = Σ_j α_tj h_j mixes the {S} annotations h_j, each of D = {D} numbers, so c_t has {D}: "
        "attention chooses how much of each h_j to take, it does not line them up.")


def trace_questions(results: list) -> list[Question]:
    """Questions about one translation by the models on screen, [(title, Translation)], answered from
    the traces. Questions about α ask only about models that have it, and comparing two needs two
    different models (the same one may be on both sides)."""
    attending = dict((title, result) for title, result in results if result.attention is not None)
    questions = []
    if attending:
        title, result = next(iter(attending.items()))
        step = min(4, max(1, len(result.target_tokens) - 1))  # a step before the final </s> where there is one
        questions.append(most_attended(result, title, step))
    if len(attending) > 1:
        shortest = min(len(result.target_tokens) for result in attending.values())
        questions.append(more_spread(attending, min(2, shortest)))
    questions.append(context_size(results[0][1], results[0][0]))
    return questions
