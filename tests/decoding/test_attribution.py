import dataclasses
import threading
from contextlib import nullcontext

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from attn_demo import load_translator
from attn_demo.decoding import attribution
from attn_demo.decoding.attribution import METHODS, agreement, gradient_jumps, ranks
from attn_demo.models.config import MODEL_KINDS
from attn_demo.models.rnn import FixedContextDecoder, gradients_through_eval_gru
from conftest import DEVICE, ROOT, tiny_config

SENTENCE = "I see the red cat."


@pytest.fixture
def translator(toy_checkpoint):
    return load_translator(toy_checkpoint, device=DEVICE)


def test_integrated_gradients_is_complete_within_five_percent_at_every_step(translator):
    result = translator.attribute(SENTENCE, method="integrated-gradients")
    T, S = len(result.target_tokens), len(result.source_tokens)
    assert result.scores.shape == (T, S) and result.completeness_gap.shape == (T,)
    assert (result.completeness_gap <= 0.05).all(), result.completeness_gap
    assert result.target_tokens == translator.translate(SENTENCE).target_tokens  # the model's own translation


def test_integrated_gradients_on_two_workers_are_the_same_batches_integrated_at_once(translator, monkeypatch):
    """workers=2 cuts the path points into twice as many batches and integrates them in two threads: the numbers
    are those of the same batches one after the other, bit for bit."""
    with pytest.raises(ValueError, match="at least one worker"):
        translator.attribute(SENTENCE, workers=0)
    at_once = translator.attribute(SENTENCE, workers=2)
    monkeypatch.setattr(attribution, "threads", lambda count: nullcontext(attribution.Workers(count)))  # in turn
    in_turn = translator.attribute(SENTENCE, workers=2)
    np.testing.assert_array_equal(at_once.scores, in_turn.scores)
    np.testing.assert_array_equal(at_once.completeness_gap, in_turn.completeness_gap)
    alone = translator.attribute(SENTENCE, workers=1)  # other batches: the same integral to float rounding
    np.testing.assert_allclose(at_once.scores, alone.scores, rtol=1e-4, atol=1e-6)


def test_input_x_gradient_is_the_embedding_times_its_gradient(translator):
    """By hand with autograd, step by step: Σ_d x_jd ∂ log p(y_t) / ∂x_jd."""
    result = translator.attribute(SENTENCE, method="input-x-gradient")
    model = translator.model
    source = torch.tensor([translator.encode(SENTENCE)], device=DEVICE)
    target = [translator.target_tokenizer.sp.piece_to_id(p) for p in result.target_tokens]
    y_in = torch.tensor([[model.config.bos_id, *target[:-1]]], device=DEVICE)
    for t in range(len(target)):
        embedded = model.encoder.embed(source).detach().requires_grad_()
        with torch.enable_grad(), gradients_through_eval_gru():
            original = model.encoder.embed.forward
            model.encoder.embed.forward = lambda ids: embedded  # the embeddings, as attribution hands them in
            try:
                log_p = model(source, torch.tensor([source.size(1)], device=DEVICE), y_in).log_softmax(-1)[0, t, target[t]]  # the training pass
            finally:
                model.encoder.embed.forward = original
            (grad,) = torch.autograd.grad(log_p, embedded)
        np.testing.assert_allclose(result.scores[t], (embedded * grad).sum(-1)[0].detach().cpu().numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(result.log_probs.sum(), translator.translate(SENTENCE).log_prob, rtol=1e-5)


def test_a_given_french_sentence_is_attributed_as_read_and_bad_requests_are_refused(translator):
    result = translator.attribute(SENTENCE, "je vois le chat rouge.", method="input-x-gradient")
    assert result.target_tokens == translator.force_decode(SENTENCE, "je vois le chat rouge.").target_tokens
    with pytest.raises(ValueError, match="unknown attribution method"):
        translator.attribute(SENTENCE, method="lime")


@pytest.mark.parametrize("method", METHODS)
def test_a_shipped_model_is_attributed_with_a_small_completeness_gap(method):
    translator = load_translator(ROOT / "checkpoints" / "luong-en-fr", device=DEVICE)
    result = translator.attribute("The red car is in front of the house.", method=method)
    assert np.isfinite(result.scores).all()
    if method == "integrated-gradients":
        assert (result.completeness_gap <= 0.05).all(), result.completeness_gap


@pytest.mark.parametrize("method", METHODS)
def test_the_baselines_attribution_is_that_of_its_whole_teacher_forced_pass(method, monkeypatch):
    """The model without attention runs its GRU only as far as a batch's steps ask, reading c once a row
    (FixedContextDecoder.readout_at): what it attributes is what the whole target's readouts give, to float rounding."""
    translator = load_translator(ROOT / "checkpoints" / "no-attention-en-fr", device=DEVICE)
    sentence = "The red car is in front of the house."
    fast = translator.attribute(sentence, method=method)
    monkeypatch.setattr(FixedContextDecoder, "readout_at", lambda decoder, y_in, memory, steps: decoder.readouts(
        y_in, memory)[torch.arange(y_in.size(0), device=y_in.device), steps])
    whole = translator.attribute(sentence, method=method)
    np.testing.assert_allclose(fast.scores, whole.scores, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fast.log_probs, whole.log_probs, rtol=1e-5, atol=1e-5)
    assert fast.path_points == whole.path_points


def test_ranks_share_ties_and_agreement_counts_steps():
    np.testing.assert_array_equal(ranks(np.array([0.3, 0.1, 0.3, 0.2])), [2.5, 0.0, 2.5, 1.0])
    alpha = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    same = agreement(alpha, alpha * 3)
    assert same == {"spearman_mean": pytest.approx(1.0), "argmax_agreement": 1.0, "steps": 2}
    flipped = agreement(alpha, alpha[:, ::-1])
    assert flipped["spearman_mean"] == pytest.approx(-1.0) and flipped["argmax_agreement"] == 0.0


def test_more_path_points_are_taken_only_where_the_first_pieces_leave_a_gap(translator, monkeypatch):
    monkeypatch.setattr(attribution, "FIRST_PIECES", 1)  # the whole path first
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 2)
    monkeypatch.setattr(attribution, "MAX_GAP", -1.0)  # no integral is ever close enough: every piece is halved, twice
    assert translator.attribute(SENTENCE).path_points == 4 * attribution.PIECE_POINTS
    monkeypatch.setattr(attribution, "MAX_GAP", float("inf"))
    assert translator.attribute(SENTENCE).path_points == attribution.PIECE_POINTS


@pytest.mark.parametrize("values, ends", [
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [0, 4, 8, 12]),  # a straight line: equal lengths
    ([0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6], [0, 6, 12]),  # a jump within one interval: cut just after it
    ([0, 0, 0, 3, 6, 9, 12, 12, 12, 12, 12, 12, 12], [0, 4, 5, 12]),  # a slope: the pieces hold equal shares of it
    ([0, 6, 0, 6, 0, 6, 0, 6, 0, 6, 0, 6, 0], [0, 4, 8, 12]),  # up and down: |Δf| counts both ways
    ([5] * 13, [0, 12]),  # no change: the whole path
])
def test_the_first_pieces_hold_equal_shares_of_the_change_along_the_scan(values, ends):
    grid = np.linspace(0.0, 1.0, 13)  # the scan's points of the path, from x' to x
    pieces = attribution.first_pieces(2, np.array(values, dtype=float))
    assert [piece.start for piece in pieces] + [pieces[-1].end] == [grid[i] for i in ends]
    assert [(piece.f_start, piece.f_end) for piece in pieces] == [(values[i], values[j]) for i, j in zip(ends, ends[1:])]
    assert {piece.step for piece in pieces} == {2}


def test_the_completeness_gap_is_what_the_scores_miss(translator, monkeypatch):
    """The reported gap, path cut into pieces or not, or evenly spread (attribution.evenly), is
    |Σ_j A_tj − (f_t(x) − f_t(x'))| / |f_t(x) − f_t(x')| with f_t computed here afresh: the pieces' own misses add up
    to the whole path's."""
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 3)
    results = []
    for gap in (float("inf"), -1.0):
        monkeypatch.setattr(attribution, "MAX_GAP", gap)
        results.append(translator.attribute(SENTENCE))
    results.append(translator.attribute(SENTENCE, results[0].target_tokens, integrator=attribution.evenly(3, 2)))
    model, T = translator.model, len(results[0].target_tokens)
    source = torch.tensor([translator.encode(SENTENCE)] * T, device=DEVICE)
    target = [translator.target_tokenizer.sp.piece_to_id(p) for p in results[0].target_tokens]
    args = [torch.tensor(x, device=DEVICE) for x in ([source.size(1)] * T, [[model.config.bos_id, *target[:-1]]] * T,
                                                      [target] * T, list(range(T)))]
    with torch.no_grad(), gradients_through_eval_gru():  # the GRU kernels attribution ran: a gap is float noise
        embedded = model.encoder.embed(source)
        change = (attribution.log_likelihood(model, embedded, *args) - attribution.log_likelihood(model, 0 * embedded, *args)).cpu().numpy()
    for result in results:
        # float32 sums divided by a change that can be small: another CPU (AVX-512) moved a gap by 3e-5
        np.testing.assert_allclose(result.completeness_gap, np.abs(result.scores.sum(1) - change) / np.abs(change), rtol=1e-3, atol=1e-4)


def test_halved_steps_come_closer_to_the_integral_and_the_others_keep_their_pieces(translator, monkeypatch):
    monkeypatch.setattr(attribution, "FIRST_PIECES", 1)
    monkeypatch.setattr(attribution, "MAX_GAP", float("inf"))
    monkeypatch.setattr(attribution, "PIECE_POINTS", 64)
    exact = translator.attribute(SENTENCE)  # 64 points on a tiny model: the integral, near enough
    monkeypatch.setattr(attribution, "PIECE_POINTS", 1)
    whole = translator.attribute(SENTENCE)
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 1)
    monkeypatch.setattr(attribution, "MAX_GAP", float(np.median(whole.completeness_gap)))
    mixed = translator.attribute(SENTENCE)
    halved = whole.completeness_gap > attribution.MAX_GAP
    assert halved.any() and not halved.all() and mixed.path_points == 2
    np.testing.assert_array_equal(mixed.scores[~halved], whole.scores[~halved])
    error = lambda result: np.abs(result.scores[halved] - exact.scores[halved]).sum(1)  # noqa: E731
    assert (error(mixed) < error(whole)).all(), (error(mixed), error(whole))


ROW_SUM = 10.0  # Σx of every row of the sharp turn's input


class SharpTurn(torch.nn.Module):
    """f(x) = σ(k (Σ x − c)) of each row: a step function of the path's position where a·Σx = c, whose
    integrated gradients are known exactly, A_j = x_j / Σx · (f(x) − f(0)) (the gradient is the same for every x_j)."""

    def forward(self, embedded, *row_args):
        return torch.sigmoid(400 * (embedded.sum((1, 2)) - 0.58 * ROW_SUM))


def test_a_sharp_turn_of_the_path_is_found_and_integrated(monkeypatch):
    generator = torch.Generator().manual_seed(3)
    x = torch.rand(5, 7, 3, generator=generator) + 0.1  # (T, S, E): 5 steps
    x = x / x.sum((1, 2), keepdim=True) * ROW_SUM
    args = tuple(torch.arange(5) for _ in range(4))
    f = SharpTurn()
    exact = (x.sum(-1) / ROW_SUM * (f(x) - f(0 * x))[:, None]).numpy()
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 0)  # the first pieces only: the turn lies inside one of them
    scores, gap, points = attribution.integrated_gradients(IntegratedGradients(f), x, args, f(x))
    assert (gap > 0.05).all() and points == 2 * attribution.PIECE_POINTS  # cut once, just after the turn
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 12)
    scores, gap, points = attribution.integrated_gradients(IntegratedGradients(f), x, args, f(x))
    assert (gap <= 0.05).all() and points > 2 * attribution.PIECE_POINTS
    np.testing.assert_allclose(scores, exact, atol=0.05 * np.abs(exact).max())


def test_a_path_cut_where_it_changes_comes_closer_to_the_integral_than_evenly_spread_points(monkeypatch):
    """A turn of the path that evenly spread points straddle: the scan cuts the path just after it, so the piece
    that holds it is short and its points fall on the turn."""
    generator = torch.Generator().manual_seed(4)
    x = torch.rand(5, 7, 3, generator=generator) + 0.1
    x = x / x.sum((1, 2), keepdim=True) * ROW_SUM
    args = tuple(torch.arange(5) for _ in range(4))
    f = lambda embedded, *row_args: torch.sigmoid(4 * (embedded.sum((1, 2)) - 0.3 * ROW_SUM))  # noqa: E731
    exact = (x.sum(-1) / ROW_SUM * (f(x) - f(0 * x))[:, None]).numpy()
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 0)
    error, points = {}, 0
    for pieces in (3, 1):  # cut where it changes, 6 points on each piece; then the whole path on as many points
        monkeypatch.setattr(attribution, "FIRST_PIECES", pieces)
        monkeypatch.setattr(attribution, "PIECE_POINTS", points or 6)
        scores, gap, points = attribution.integrated_gradients(IntegratedGradients(f), x, args, f(x))
        error[pieces] = np.abs(scores - exact).max() / np.abs(exact).max()
    assert error[3] < error[1] / 10, error  # 0.8% against 17% of the largest score, both on 12 points


def test_attributions_running_at_once_on_the_shared_model_each_equal_their_own_result(translator):
    """A class presses the button together: several sentences and both methods in threads on the one
    model, started at once, each as computed alone (a hook on the shared model mixed them up)."""
    jobs = [(sentence, method) for sentence in (SENTENCE, "the blue dog", "I see the green truck.", "the white boat")
            for method in METHODS]
    alone = {job: translator.attribute(job[0], method=job[1]) for job in jobs}
    together, start = {}, threading.Barrier(len(jobs))

    def run(job):
        start.wait()
        together[job] = [translator.attribute(job[0], method=job[1]) for _ in range(3)]

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for job in jobs:
        assert len(together[job]) == 3, job  # a thread that raised left nothing
        for result in together[job]:
            assert result.target_tokens == alone[job].target_tokens
            np.testing.assert_allclose(result.scores, alone[job].scores, rtol=1e-6, atol=1e-7, err_msg=str(job))


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_only_a_transformer_with_relu_is_said_to_have_a_gradient_that_jumps_along_the_path(attention):
    config = tiny_config(attention)
    assert gradient_jumps(config) == (attention == "transformer")  # the GRUs' tanh and σ are smooth
    if attention == "transformer":
        assert not gradient_jumps(dataclasses.replace(config, activation="gelu"))


def test_an_even_integral_of_more_pieces_comes_closer_to_the_page_s(translator):
    french = translator.translate(SENTENCE).target_tokens
    page = translator.attribute(SENTENCE, french)
    coarse, fine = (translator.attribute(SENTENCE, french, integrator=attribution.evenly(pieces, 4)) for pieces in (1, 32))
    assert coarse.path_points == 4 and fine.path_points == 128
    assert np.abs(fine.scores - page.scores).max() < np.abs(coarse.scores - page.scores).max()


def test_legendre_turns_samples_of_a_polynomial_into_its_coefficients_and_its_integral():
    nodes, weights, transform = attribution.legendre(6)
    samples = np.polynomial.legendre.legval(nodes, [2.0, -1.0, 0.0, 0.5, 0.0, 0.25])  # 2 P_0 − P_1 + P_3 / 2 + P_5 / 4
    np.testing.assert_allclose(transform @ samples, [2.0, -1.0, 0.0, 0.5, 0.0, 0.25], atol=1e-12)
    assert (weights * samples).sum() == pytest.approx(4.0)  # ∫_{−1}^{1}: 2 c_0


def rows_summing_to(total: float, seed: int) -> torch.Tensor:
    """Five steps' inputs (T, S, E) = (5, 7, 3), positive, each summing to `total`."""
    x = torch.rand(5, 7, 3, generator=torch.Generator().manual_seed(seed)) + 0.1
    return x / x.sum((1, 2), keepdim=True) * total


def test_error_controlled_leaves_a_smooth_path_as_first_cut_and_integrates_it_exactly():
    """f = (Σx / 10)³: its integrand is a quadratic in a, nothing left unresolved on any piece."""
    x, args = rows_summing_to(ROW_SUM, 5), tuple(torch.arange(5) for _ in range(4))
    cube = lambda embedded, *row_args: (embedded.sum((1, 2)) / ROW_SUM) ** 3  # noqa: E731
    exact = (x.sum(-1) / ROW_SUM * (cube(x) - cube(0 * x))[:, None]).numpy()
    scores, gap, points = attribution.error_controlled(1e-4)(IntegratedGradients(cube), x, args, cube(x))
    assert points == attribution.FIRST_PIECES * attribution.PIECE_POINTS and (gap < 1e-5).all()
    np.testing.assert_allclose(scores, exact, rtol=1e-5, atol=1e-7)


def test_error_controlled_goes_on_where_completeness_is_met_and_its_scores_are_still_off(monkeypatch):
    """The sharp turn: completeness alone stops once a step's sum is within MAX_GAP, here with every score off by that
    same share (the step function's gradient is the same for every x_j), 4.9% of the largest; the pieces' own points
    see what they leave unresolved, and a tighter tolerance takes more of them, closer still."""
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 12)
    x, args, f = rows_summing_to(ROW_SUM, 3), tuple(torch.arange(5) for _ in range(4)), SharpTurn()
    exact = (x.sum(-1) / ROW_SUM * (f(x) - f(0 * x))[:, None]).numpy()
    error = lambda scores: np.abs(scores - exact).max() / np.abs(exact).max()  # noqa: E731
    page, _, page_points = attribution.integrated_gradients(IntegratedGradients(f), x, args, f(x))
    found = {tolerance: attribution.error_controlled(tolerance)(IntegratedGradients(f), x, args, f(x))
             for tolerance in (0.3, 0.003)}
    assert error(page) > 0.02 and all(error(scores) < 1e-3 for scores, _, _ in found.values())
    assert page_points < found[0.3][2] < found[0.003][2]
    assert error(found[0.003][0]) <= error(found[0.3][0])


def test_error_controlled_halves_a_turn_between_its_points_where_completeness_misses_it(monkeypatch):
    """A turn so sharp that no point of its piece falls on it leaves nothing unresolved there; the piece's miss of
    completeness still halves it, as integrated_gradients does."""
    x, args, f = rows_summing_to(ROW_SUM, 3), tuple(torch.arange(5) for _ in range(4)), SharpTurn()
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 0)
    _, gap, _ = attribution.error_controlled(0.01)(IntegratedGradients(f), x, args, f(x))
    assert (gap > 0.05).all()  # the first pieces alone: the turn missed
    monkeypatch.setattr(attribution, "MAX_HALVINGS", 12)
    _, gap, _ = attribution.error_controlled(0.01)(IntegratedGradients(f), x, args, f(x))
    assert (gap <= 0.05).all()


def test_error_controlled_comes_as_close_to_the_integral_as_the_page_s_rule_on_every_kind(translator):
    french = translator.translate(SENTENCE).target_tokens
    reference = translator.attribute(SENTENCE, french, integrator=attribution.evenly(48, 4)).scores
    distance = lambda result: (np.abs(result.scores - reference).max(1) / np.abs(reference).max(1)).max()  # noqa: E731
    page = translator.attribute(SENTENCE, french)
    controlled = translator.attribute(SENTENCE, french, integrator=attribution.error_controlled(0.01))
    assert (controlled.completeness_gap <= 0.05).all() and distance(controlled) <= max(distance(page), 1e-3)

