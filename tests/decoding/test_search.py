import math

import pytest
import torch

from attn_demo.decoding.search import (
    FATES, TRACE_FIELDS, Penalties, beam_search, beam_search_n_best, forced_search, greedy_search, max_target_length)
from conftest import tiny_model

EOS = 3


def source(model):
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 40, (3, 6), generator=g)
    src[:, -1] = EOS
    src[1, 4:], src[1, 3] = 0, EOS
    lengths = torch.tensor([6, 4, 6])
    return src, lengths, model.encode(src, lengths)


def teacher_forced(model, src, lengths, b, tokens):
    """Re-run the decoder on the chosen tokens: log p and the trace of every step (None where the
    model has no such thing: query, e and α without attention)."""
    y_in = torch.tensor([[model.config.bos_id] + tokens[:-1]])
    memory = model.encode(src[b:b + 1], lengths[b:b + 1])
    state, coverage, log_prob, rows = memory.init_state, None, 0.0, {name: [] for name in TRACE_FIELDS}
    for t, y in enumerate(tokens):
        step = model.decoder.step(y_in[:, t], state, memory, coverage=coverage)
        log_prob += float(step.logits.log_softmax(-1)[0, y])
        for name in TRACE_FIELDS:
            rows[name].append(getattr(step, name))
        state, coverage = step.state, step.coverage
    return log_prob, {name: None if r[0] is None else torch.cat(r).numpy() for name, r in rows.items()}


def assert_same_trace(actual, expected):
    for name in TRACE_FIELDS:
        if expected[name] is None:
            assert actual[name] is None, name
        else:
            torch.testing.assert_close(torch.from_numpy(actual[name]), torch.from_numpy(expected[name]), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("beam_size", [1, 3])
@torch.inference_mode()
def test_trace_and_score_are_those_of_the_returned_tokens(attention, beam_size):
    """Backtracking must pair every step's trace with the hypothesis that produced it."""
    model = tiny_model(attention, seed=3)
    src, lengths, memory = source(model)
    limits = max_target_length(lengths)
    hyps = greedy_search(model, memory, limits) if beam_size == 1 else beam_search(model, memory, limits, beam_size)
    for b, hyp in enumerate(hyps):
        assert hyp.tokens[-1] == EOS and EOS not in hyp.tokens[:-1]
        assert len(hyp.tokens) <= int(limits[b])
        log_prob, trace = teacher_forced(model, src, lengths, b, hyp.tokens)
        assert hyp.log_prob == pytest.approx(log_prob, abs=1e-4)
        assert hyp.trace["context"].shape == (len(hyp.tokens), model.config.annotation_size)
        if attention != "none":
            assert hyp.trace["attention"].shape == (len(hyp.tokens), src.size(1))
        assert_same_trace(hyp.trace, trace)


def greedy_and_beam(attention, seed, beam_size):
    model = tiny_model(attention, seed=seed)
    _, lengths, memory = source(model)
    limits = max_target_length(lengths)
    return greedy_search(model, memory, limits), beam_search(model, memory, limits, beam_size)


@torch.inference_mode()
def test_beam_of_one_is_greedy(attention):
    greedy, beam = greedy_and_beam(attention, seed=4, beam_size=1)
    assert [h.tokens for h in beam] == [h.tokens for h in greedy]


@torch.inference_mode()
def test_wider_beam_finds_a_hypothesis_at_least_as_probable_per_piece(attention):
    greedy, beam = greedy_and_beam(attention, seed=5, beam_size=4)
    for g, b in zip(greedy, beam):
        assert b.log_prob / len(b.tokens) >= g.log_prob / len(g.tokens) - 1e-5


@torch.inference_mode()
def test_length_limit_forces_eos(attention):
    model = tiny_model(attention, seed=6)
    with torch.no_grad():
        model.decoder.out_bias[EOS] = -1e4  # the model never wants to stop
    src, lengths, memory = source(model)
    limits = torch.tensor([2, 3, 4])
    for search in (lambda: greedy_search(model, memory, limits), lambda: beam_search(model, memory, limits, 2)):
        assert [len(h.tokens) for h in search()] == [2, 3, 4]


@torch.inference_mode()
def test_greedy_batch_gives_each_sentence_what_it_decodes_alone(attention):
    """Sentences leave the batch as they end; those still decoding must not notice."""
    model = tiny_model(attention, seed=6)
    src, lengths, memory = source(model)
    limits = torch.tensor([2, 5, 9])  # rows end at different steps whatever the model emits
    together = greedy_search(model, memory, limits)
    assert len({len(h.tokens) for h in together}) > 1
    for b, hyp in enumerate(together):
        alone = greedy_search(model, model.encode(src[b:b + 1], lengths[b:b + 1]), limits[b:b + 1])[0]
        assert hyp.tokens == alone.tokens and hyp.log_prob == pytest.approx(alone.log_prob, abs=1e-5)
        assert_same_trace(hyp.trace, alone.trace)


@torch.inference_mode()
def test_forcing_greedy_output_retraces_greedy_search(attention):
    """Teacher forcing the tokens greedy search chose must give back its every step."""
    model = tiny_model(attention, seed=7)
    _, lengths, memory = source(model)
    greedy = greedy_search(model, memory, max_target_length(lengths))
    forced = forced_search(model, memory, [h.tokens for h in greedy])
    for g, f in zip(greedy, forced):
        assert f.tokens == g.tokens and f.log_prob == pytest.approx(g.log_prob, abs=1e-6)
        assert_same_trace(f.trace, g.trace)


@torch.inference_mode()
def test_forced_log_prob_is_the_teacher_forced_model_score(attention):
    """Targets of different lengths in one batch: each scores as the training forward pass does."""
    model = tiny_model(attention, seed=8)
    src, lengths, memory = source(model)
    g = torch.Generator().manual_seed(2)
    targets = [torch.randint(4, 40, (n,), generator=g).tolist() + [EOS] for n in (1, 6, 3)]
    for b, hyp in enumerate(forced_search(model, memory, targets)):
        y = torch.tensor([targets[b]])
        y_in = torch.cat([torch.tensor([[model.config.bos_id]]), y[:, :-1]], 1)
        log_probs = model(src[b:b + 1], lengths[b:b + 1], y_in).log_softmax(-1)  # (1, T, V)
        assert hyp.log_prob == pytest.approx(float(log_probs.gather(2, y[..., None]).sum()), abs=1e-5)
        if attention == "none":  # no α: the trace says so instead of holding a made-up one
            assert hyp.trace["attention"] is None and hyp.trace["scores"] is None
        else:
            assert hyp.trace["attention"].shape == (len(targets[b]), src.size(1))
            assert hyp.trace["attention"][:, lengths[b]:].max(initial=0.0) == 0.0  # padding gets no attention


def paths(weighed):
    """Each Candidate's pieces from step 1, following the parents."""
    out = []
    for candidate in weighed:
        out.append((out[candidate.parent] if candidate.parent >= 0 else ()) + (candidate.token,))
    return out


@torch.inference_mode()
def test_the_search_weighed_is_the_models_and_keeps_the_k_best(attention):
    """Every candidate's log p is the model's for its piece after its beginning; the kept ones at a
    step are the k most probable non-EOS beginnings, the n best hypotheses end among the candidates,
    and nothing is recorded after a sentence's search stopped."""
    model = tiny_model(attention, seed=9)
    src, lengths, memory = source(model)
    K = 3
    best, weighed = beam_search_n_best(model, memory, max_target_length(lengths), K, K)
    for b, candidates in enumerate(weighed):
        walked = paths(candidates)
        for candidate, path in zip(candidates, walked):
            assert candidate.fate in FATES
            assert candidate.parent < 0 or candidates[candidate.parent].fate == "kept"
            assert candidate.parent < 0 or candidates[candidate.parent].step == candidate.step - 1
            parent_score = candidates[candidate.parent].score if candidate.parent >= 0 else 0.0
            assert candidate.score == pytest.approx(parent_score + candidate.log_p, abs=1e-4)
        for candidate, path in list(zip(candidates, walked))[::4]:  # the model's own numbers, a sample
            log_prob, _ = teacher_forced(model, src, lengths, b, list(path))
            assert candidate.score == pytest.approx(log_prob, abs=1e-4)
        for t in range(1, max(c.step for c in candidates) + 1):
            at_t = [c for c in candidates if c.step == t]
            kept = [c.score for c in at_t if c.fate == "kept"]
            assert len(kept) <= K and all(c.fate != "kept" or c.token != EOS for c in at_t)
            others = [c.score for c in at_t if c.fate == "pruned" and c.token != EOS]
            assert not others or min(kept) >= max(others)
        ended = {path for candidate, path in zip(candidates, walked) if candidate.fate == "ended"}
        assert len(ended) == K and {tuple(h.tokens) for h in best[b]} == ended
        last = max(c.step for c in candidates)
        assert last == max(len(h.tokens) for h in best[b])  # the search stops when its K-th hypothesis ends


def test_the_coverage_terms_are_those_of_wu_et_al_and_opennmt_s_summary_by_hand():
    """β_cov Σ_j log min(C_j, 1) − β_rep Σ_j (max(C_j, 1) − 1) over real pieces; padding counts for nothing."""
    coverage = torch.tensor([[0.5, 1.5, 1.0, 0.0]])
    mask = torch.tensor([[True, True, True, False]])
    term = Penalties(coverage=2.0, repeat=3.0).coverage_term(coverage, mask)
    assert math.isclose(float(term[0]), 2.0 * math.log(0.5) - 3.0 * 0.5, rel_tol=1e-6)
    assert Penalties().coverage_term(coverage, mask).tolist() == [0.0]
    assert Penalties(coverage=1.0).coverage_term(None, mask.expand(3, -1)).tolist() == [0.0] * 3
    assert Penalties().length_norm(7) == 7 and math.isclose(Penalties(length=0.6).length_norm(7), 2.0 ** 0.6)
    stepwise = Penalties(coverage=2.0, repeat=3.0, stepwise=True)  # the term ranks beginnings, not what finished
    assert stepwise.beginning_term(coverage, mask).tolist() == term.tolist() and stepwise.ending_term(coverage, mask).tolist() == [0.0]
    assert Penalties(coverage=2.0, repeat=3.0).beginning_term(coverage, mask).tolist() == [0.0]


@pytest.mark.parametrize("penalties", [Penalties(), Penalties(length=0.6, coverage=0.4, repeat=0.3),
                                       Penalties(length=0.6, coverage=0.1, repeat=2.0, stepwise=True)])
def test_each_finished_hypothesis_is_ranked_by_its_own_length_and_coverage(attention, penalties):
    """score = log p / lp(|Y|) + the coverage term of the α in the hypothesis's own trace (none when the
    term ranked the beginnings instead), best first."""
    model = tiny_model(attention)
    src, lengths, memory = source(model)
    K = 4
    best, _ = beam_search_n_best(model, memory, max_target_length(lengths), K, K, penalties)
    for b, hypotheses in enumerate(best):
        scores = [hyp.score for hyp in hypotheses]
        assert scores == sorted(scores, reverse=True)
        for hyp in hypotheses:
            alpha = hyp.trace["attention"]
            coverage = None if alpha is None else torch.from_numpy(alpha).sum(0, keepdim=True)  # (1, S)
            term = penalties.ending_term(coverage, memory.mask[b:b + 1])
            expected = hyp.log_prob / penalties.length_norm(len(hyp.tokens)) + float(term[0])
            assert math.isclose(hyp.score, expected, rel_tol=1e-4, abs_tol=1e-4)


@torch.inference_mode()
def test_stepwise_penalties_of_zero_change_nothing(attention):
    """Ranking beginnings by log p + 0 is ranking them by log p: the same search, candidate for candidate."""
    model = tiny_model(attention, seed=9)
    _, lengths, memory = source(model)
    limits = max_target_length(lengths)
    plain = beam_search_n_best(model, memory, limits, 3, 3, Penalties(length=0.6))
    stepwise = beam_search_n_best(model, memory, limits, 3, 3, Penalties(length=0.6, stepwise=True))
    assert [[h.tokens for h in hyps] for hyps in stepwise[0]] == [[h.tokens for h in hyps] for hyps in plain[0]]
    assert stepwise[1] == plain[1]


@torch.inference_mode()
def test_stepwise_penalties_rank_every_beginning_by_its_coverage_so_far(attention):
    """Each candidate's term is the coverage term of the α its pieces were written with (teacher-forced),
    its score stays its log p, and at every step the kept beginnings are the k best by score + term."""
    model = tiny_model(attention, seed=9)
    with torch.no_grad():  # a random model attends almost uniformly, so its beams would barely differ in coverage
        for name, weight in model.decoder.named_parameters():
            if name.startswith("attention."):
                weight.mul_(10)
    src, lengths, memory = source(model)
    K, penalties = 4, Penalties(coverage=1.0, repeat=5.0, stepwise=True)
    _, weighed = beam_search_n_best(model, memory, max_target_length(lengths), K, K, penalties)
    moved = 0
    for b, candidates in enumerate(weighed):
        walked = paths(candidates)
        for candidate, path in list(zip(candidates, walked))[::3]:
            log_prob, trace = teacher_forced(model, src, lengths, b, list(path))
            assert candidate.score == pytest.approx(log_prob, abs=1e-4)
            alpha = trace["attention"]
            coverage = None if alpha is None else torch.from_numpy(alpha).sum(0, keepdim=True)  # (1, S)
            expected = float(penalties.coverage_term(coverage, memory.mask[b:b + 1])[0])
            assert candidate.term == pytest.approx(expected, abs=1e-4)
        for t in range(1, max(c.step for c in candidates) + 1):
            at_t = [c for c in candidates if c.step == t]
            kept = [c.score + c.term for c in at_t if c.fate == "kept"]
            others = [c.score + c.term for c in at_t if c.fate == "pruned" and c.token != EOS]
            assert not others or min(kept) >= max(others) - 1e-5
            by_log_p = [c.score for c in at_t]
            moved += by_log_p != sorted(by_log_p, reverse=True)  # weighed in the order ranked
    assert (moved > 0) == (attention != "none")  # the terms reorder beginnings exactly where there is α
