import pytest
import torch

from attn_demo.models.config import ModelConfig, TransformerConfig, read_config
from attn_demo.models.rnn import gradients_through_eval_gru
from conftest import tiny_config, tiny_model

B, S, T, V = 3, 5, 4, 40


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (B, S), generator=g)
    lengths = torch.tensor([S, 3, 2])
    src[1, 3:] = 0
    src[2, 2:] = 0
    y_in = torch.randint(4, V, (B, T), generator=g)
    return src, lengths, y_in


def test_teacher_forced_logits_equal_step_by_step_decoding(attention):
    """Training (whole target at once) and decoding (one step at a time) must be the same model."""
    model = tiny_model(attention)
    src, lengths, y_in = batch()
    with torch.no_grad():
        memory = model.encode(src, lengths)
        forced = model.decoder(y_in, memory)  # (B, T, V)
        state, coverage, stepped = memory.init_state, None, []
        for t in range(T):
            step = model.decoder.step(y_in[:, t], state, memory, coverage=coverage)
            stepped.append(step.logits)
            state, coverage = step.state, step.coverage
    assert forced.shape == (B, T, V)
    torch.testing.assert_close(torch.stack(stepped, 1), forced, atol=1e-5, rtol=1e-5)


def test_readout_at_a_row_s_own_step_equals_the_teacher_forced_readout_there_with_its_gradient(attention):
    """Attribution reads one step per row (Decoder.readout_at): its values and its gradient to the source
    embeddings must be those of the whole teacher-forced pass, whatever order the steps come in."""
    model = tiny_model(attention)
    src, lengths, y_in = batch()
    rows, steps = torch.tensor([0, 1, 2, 0, 2, 1, 0]), torch.tensor([3, 0, 2, 0, 3, 1, 1])  # repeats, unsorted, ties
    size = model.decoder.embed.weight.size(1)  # what the output layer reads (it is the target embedding)
    weights = torch.randn(len(rows), size, generator=torch.Generator().manual_seed(1))
    results = []
    for at_steps in (False, True):
        embedded = model.encoder.embed(src[rows]).detach().requires_grad_()  # (R, S, E)
        with torch.enable_grad():
            memory = model.decoder.memory(*model.encoder.annotate(embedded, lengths[rows]), src[rows] != 0)
            if at_steps:
                readout = model.decoder.readout_at(y_in[rows], memory, steps)  # (R, E)
            else:
                readout = model.decoder.readouts(y_in[rows], memory)[torch.arange(len(rows)), steps]
            (grad,) = torch.autograd.grad((readout * weights).sum(), embedded)
        results.append((readout.detach(), grad))
    assert results[1][0].shape == (len(rows), size)
    for whole, at_steps in zip(*results):
        torch.testing.assert_close(at_steps, whole, atol=1e-6, rtol=1e-6)


def test_query_is_previous_state_for_bahdanau_current_state_for_luong_and_per_head_or_absent_otherwise(attention):
    model = tiny_model(attention)
    src, lengths, y_in = batch()
    with torch.no_grad():
        memory = model.encode(src, lengths)
        step = model.decoder.step(y_in[:, 0], memory.init_state, memory)
    if attention == "none":
        assert step.query is None and model.query_symbol is None
        return
    if attention == "transformer":  # a query per head and layer, in Translation.heads: none is the query
        assert step.query is None and model.query_symbol == "q_t"
        return
    previous = attention.startswith("bahdanau")
    assert torch.equal(step.query, memory.init_state if previous else step.state)
    assert model.query_symbol == ("s_{t-1}" if previous else "s_t")


def test_each_step_s_coverage_is_the_running_sum_of_its_attention(attention):
    """Step.coverage = Σ_{t'≤t} α_t' exactly; the coverage model's scores read it (teacher forcing, which
    sums α inside the decoder, gives the same logits: test_teacher_forced_logits_equal_step_by_step_decoding)."""
    model = tiny_model(attention)
    src, lengths, y_in = batch()
    with torch.no_grad():
        memory = model.encode(src, lengths)
        state, coverage, total = memory.init_state, None, torch.zeros(B, S)
        for t in range(T):
            step = model.decoder.step(y_in[:, t], state, memory, coverage=coverage)
            if attention == "none":
                assert step.coverage is None
                return
            total = total + step.attention
            assert torch.equal(step.coverage, total)
            previous, state, coverage = state, step.state, step.coverage
        forgetful = model.decoder.step(y_in[:, -1], previous, memory)  # the last step as if nothing had been attended yet
    assert torch.equal(forgetful.attention, step.attention) != (attention == "bahdanau-coverage")


def test_the_baseline_trains_with_one_gru_call_that_matches_its_cell_step_by_step():
    """The decoder without attention runs nn.GRU over the whole target with the GRUCell's own weights."""
    model = tiny_model("none")
    src, lengths, y_in = batch()
    memory = model.encode(src, lengths)
    readouts, alpha = model.decoder.readouts_and_attention(y_in, memory)
    readouts.sum().backward()
    assert alpha is None and model.decoder.cell.weight_hh.grad.abs().sum() > 0  # gradients reach the cell's weights
    assert not any(name.startswith("decoder.") and "gru" in name.lower() and "cell" not in name
                   for name in model.state_dict())  # the borrowed nn.GRU adds nothing to a checkpoint


def test_without_attention_every_step_reads_the_final_states_of_both_encoder_directions():
    """c = [→h_S; ←h_1]: the forward GRU's state at each sentence's own last piece, not at the padding."""
    model = tiny_model("none")
    src, lengths, y_in = batch()
    half = model.config.enc_hidden_size
    with torch.no_grad():
        memory = model.encode(src, lengths)
        _, last = model.encoder.rnn(model.encoder.embed(src[2:, :2]))  # sentence 2 alone, unpadded
        state, contexts = memory.init_state, []
        for t in range(T):
            step = model.decoder.step(y_in[:, t], state, memory)
            assert step.scores is None and step.attention is None
            contexts.append(step.context)
            state = step.state
    h = memory.annotations
    expected = torch.stack([torch.cat([h[b, lengths[b] - 1, :half], h[b, 0, half:]]) for b in range(B)])
    for context in contexts:
        assert torch.equal(context, expected)
    torch.testing.assert_close(expected[2], torch.cat([last[0, 0], last[1, 0]]), atol=1e-6, rtol=1e-6)
    assert model.decoder.attention is None and not any("attention" in name for name, _ in model.named_parameters())


def test_padding_does_not_change_a_sentence(attention):
    """A short sentence decodes the same alone as beside longer ones (packing and masks work)."""
    model = tiny_model(attention)
    src, lengths, y_in = batch()
    with torch.no_grad():
        together = model(src, lengths, y_in)[2]
        alone = model(src[2:, :2], lengths[2:], y_in[2:])[0]
    torch.testing.assert_close(alone, together, atol=1e-5, rtol=1e-5)


def test_output_layer_is_tied_to_target_embedding(attention):
    model = tiny_model(attention)
    names = dict(model.named_parameters())
    assert not any(name.startswith("decoder.out.") for name in names)
    with torch.no_grad():
        model.decoder.embed.weight[7].zero_()
        model.decoder.out_bias[7] = -50.0
        src, lengths, y_in = batch()
        logits = model(src, lengths, y_in)
    assert torch.all(logits.argmax(-1) != 7) and torch.allclose(logits[..., 7], torch.tensor(-50.0))


def test_the_parameter_count_is_every_stored_weight_and_the_attention_s_by_itself():
    general, none = tiny_model("luong-general"), tiny_model("none")
    c = general.config
    assert general.num_params(attention_only=True) == c.dec_hidden_size * c.annotation_size  # W (H, D), no bias
    assert none.num_params(attention_only=True) == 0
    for model in (general, none):
        assert model.num_params() == sum(t.numel() for t in model.state_dict().values())


def test_config_round_trips_through_json_and_rejects_bad_values(tmp_path, attention):
    cfg = tiny_config(attention)
    cfg.to_json(tmp_path / "config.json")
    assert read_config(tmp_path / "config.json") == cfg
    with pytest.raises(ValueError, match="valid: bahdanau"):
        ModelConfig("additive", V, V)
    with pytest.raises(ValueError, match="dec_hidden_size == 2"):
        ModelConfig("luong-dot", V, V, enc_hidden_size=3, dec_hidden_size=7)
    (tmp_path / "config.json").write_text('{"attention": "bahdanau", "src_vocab_size": 4, "tgt_vocab_size": 4, "colour": 1}')
    with pytest.raises(ValueError, match="colour"):
        ModelConfig.from_json(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"architecture": "transformer", "src_vocab_size": 4, "tgt_vocab_size": 4, "emb_size": 5}')
    with pytest.raises(ValueError, match="emb_size"):  # a GRU model's field is no Transformer's
        read_config(tmp_path / "config.json")
    with pytest.raises(ValueError, match="split evenly into 5 heads"):
        TransformerConfig("transformer", V, V, d_model=12, heads=5)
    with pytest.raises(ValueError, match="shown_layer must be a decoder layer, 0 to 1"):
        TransformerConfig("transformer", V, V, dec_layers=2, shown_layer=2)
    with pytest.raises(ValueError, match="shown_head must be a head, 0 to 3"):
        TransformerConfig("transformer", V, V, heads=4, shown_head=4)
    assert TransformerConfig("transformer", V, V, dec_layers=3).layer_shown == 1  # the penultimate (Garg et al. 2019)
    assert TransformerConfig("transformer", V, V, dec_layers=1).layer_shown == 0
    with pytest.raises(ValueError, match="unknown activation 'swish'; valid: relu, gelu"):
        TransformerConfig("transformer", V, V, activation="swish")
    (tmp_path / "config.json").write_text('{"architecture": "transformer", "src_vocab_size": 4, "tgt_vocab_size": 4}')
    assert read_config(tmp_path / "config.json").activation == "relu"  # a config saved before φ could be chosen


@pytest.mark.parametrize("enabled", [True, False])
def test_cudnn_stays_off_until_the_last_of_overlapping_attributions_leaves(monkeypatch, enabled):
    """Two requests attribute at once: the first to finish must not turn cuDNN back on under the
    other's backward pass (whose GRU then fails on CUDA), and the last puts back what was there."""
    monkeypatch.setattr(torch.backends.cudnn, "enabled", enabled)
    first, second = gradients_through_eval_gru(), gradients_through_eval_gru()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert torch.backends.cudnn.enabled is False
    second.__exit__(None, None, None)
    assert torch.backends.cudnn.enabled is enabled


def test_two_baselines_training_at_once_never_mix_their_weights():
    """The whole-target GRU call borrows each model's cell weights: two models (the same sizes, other
    weights) computing in threads at once must each get exactly what they get alone."""
    import threading
    models = [tiny_model("none", seed=seed) for seed in (1, 2)]
    src, lengths, y_in = batch()
    with torch.no_grad():
        alone = [model.decoder.readouts(y_in, model.encode(src, lengths)) for model in models]
    mixed = []

    def run(model, expected):
        with torch.no_grad():
            for _ in range(30):
                if not torch.equal(model.decoder.readouts(y_in, model.encode(src, lengths)), expected):
                    mixed.append(model)

    threads = [threading.Thread(target=run, args=pair) for pair in zip(models, alone)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not torch.equal(*alone) and mixed == []
