import math
import os
import signal

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attn_demo.checkpoints.folder import build_model, load_checkpoint, read_training_data, save_checkpoint
from attn_demo.checkpoints.card import read_card
from attn_demo.data.pairs import collate, encode_pairs
from attn_demo.measures.timeline import ALPHA_DECIMALS, PROBES, kept_point, read_timeline
from attn_demo.training.train import RunClock, coverage_loss, learning_rate, main, model_config, parse_args, validate
from attn_demo.translator import device_name
from conftest import tiny_model, toy_pairs

pytestmark = pytest.mark.slow  # trains models


def loss_on_toy(model, src_tok, tgt_tok):
    src, lengths, y_in, y_out = collate(encode_pairs(toy_pairs(), src_tok, tgt_tok, max_len=50)[1])
    with torch.no_grad():
        logits = model(src, lengths, y_in)
    return float(F.cross_entropy(logits.flatten(0, 1), y_out.flatten(), ignore_index=0))


def train_args(tmp_path, toy_tsv, attention, minutes):
    (tmp_path / "test.tsv").write_text("a held-out sentence\tune phrase\n")
    return ["--attention", attention, "--out", str(tmp_path / "out"), "--run-dir", str(tmp_path / "run"),
            "--train-pool", str(toy_tsv), "--test-set", str(tmp_path / "test.tsv"), "--minutes", str(minutes),
            "--vocab-size", "40", "--emb-size", "8", "--enc-hidden-size", "8", "--dec-hidden-size", "16",
            "--attn-hidden-size", "8", "--n-valid", "12", "--valid-minutes", "0.1", "--max-tokens", "300",
            "--lr", "0.01", "--warmup-steps", "5", "--threads", "1",
            "--d-model", "12", "--heads", "3", "--enc-layers", "1", "--dec-layers", "2", "--ff-size", "10"]


def test_a_short_run_lowers_the_loss_and_leaves_a_hub_checkpoint(tmp_path, toy_tsv, attention):
    # load-independent: a budget of pieces; validated as it starts and ends (the timeline's tests validate often)
    main(train_args(tmp_path, toy_tsv, attention, minutes=10) + ["--target-tokens", "20000", "--valid-minutes", "5"])
    model, src_tok, tgt_tok = load_checkpoint(tmp_path / "out")
    torch.manual_seed(0)
    untrained = build_model(model.config).eval()
    assert loss_on_toy(model, src_tok, tgt_tok) < 0.7 * loss_on_toy(untrained, src_tok, tgt_tok)
    facts = read_card(tmp_path / "out")["training"]
    assert facts["parameters"] == sum(p.numel() for p in model.parameters()) and facts["steps"] > 0
    assert facts["ended"] == "budget" and "patience" not in facts
    assert "--attention " + attention in facts["command"]


def test_a_validation_slower_than_its_interval_is_not_run_again_at_every_step(tmp_path, toy_tsv, monkeypatch):
    """--valid-minutes counts from the end of the last validation: a validation that takes longer than the
    interval (an untrained model's translations run to the length limit) is followed by training, not by another."""
    clocks, validated = [], []

    class Clock:  # each reading one second of training later
        def __init__(self, elapsed=0.0):
            self.elapsed = elapsed
            clocks.append(self)

        def __call__(self):
            self.elapsed += 1.0
            return self.elapsed

    def slow_validation(*args):  # 100 s, longer than the minute between validations
        clocks[-1].elapsed += 100.0
        validated.append(clocks[-1].elapsed)
        return {"bleu": 0.0, "chrf": 0.0}

    monkeypatch.setattr("attn_demo.training.train.RunClock", Clock)
    monkeypatch.setattr("attn_demo.training.train.validate", slow_validation)
    main(train_args(tmp_path, toy_tsv, "luong-general", minutes=10) + ["--target-tokens", "20000", "--valid-minutes", "1"])
    gaps = [b - a for a, b in zip(validated, validated[1:])]
    # 100 s validating, then 60 s training; the last validation comes when the run ends, whenever that is
    assert len(validated) >= 3 and all(gap >= 160 for gap in gaps[:-1]), gaps


def test_validation_translates_without_a_graph_and_leaves_the_model_training(toy_tokenizers, attention, monkeypatch):
    model, encoded = tiny_model(attention).train(), []
    real_encode = model.encode
    monkeypatch.setattr(model, "encode", lambda *args: encoded.append(real_encode(*args)) or encoded[-1])
    scores = validate(model, *toy_tokenizers, toy_pairs()[:5], torch.device("cpu"))
    assert set(scores) == {"bleu", "chrf"} and encoded
    assert not any(memory.annotations.requires_grad for memory in encoded)  # no autograd graph kept while decoding
    assert model.training


def test_the_coverage_loss_counts_attention_paid_again_to_a_piece_already_attended():
    """See et al.'s Σ_j min(α_tj, C_tj), averaged over real steps, by hand: padded steps count for nothing."""
    alpha = torch.tensor([[[1.0, 0.0], [0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]])  # (B=1, T=4, S=2)
    real = torch.tensor([[True, True, True, False]])
    # C: (0, 0), (1, 0), (1.5, 0.5); min with α: 0 + (0.5 + 0) + (0.2 + 0.5); step 4 is padding
    assert math.isclose(float(coverage_loss(alpha, real)), (0.0 + 0.5 + 0.7) / 3, rel_tol=1e-6)
    assert float(coverage_loss(torch.eye(3)[None], torch.ones(1, 3, dtype=torch.bool))) == 0.0  # each piece once


def test_a_coverage_run_with_its_loss_trains_and_the_card_records_the_weight(tmp_path, toy_tsv):
    main(train_args(tmp_path, toy_tsv, "bahdanau-coverage", minutes=10) + ["--target-tokens", "3000", "--coverage-loss", "1.0"])
    facts = read_card(tmp_path / "out")["training"]
    assert facts["coverage_loss"] == 1.0
    model = load_checkpoint(tmp_path / "out")[0]
    assert model.decoder.attention.w_c.weight.abs().sum() > 0  # the counting weight learned from zero


def test_resume_continues_the_same_run(tmp_path, toy_tsv):
    main(train_args(tmp_path, toy_tsv, "luong-general", minutes=0.05))
    first = torch.load(tmp_path / "run" / "last.pt", weights_only=True)["state"]
    main(train_args(tmp_path, toy_tsv, "luong-general", minutes=0.1) + ["--resume"])
    second = torch.load(tmp_path / "run" / "last.pt", weights_only=True)["state"]
    assert second["step"] > first["step"] and second["elapsed"] > first["elapsed"]
    assert second["parts"] == [] and read_card(tmp_path / "out")["training"].get("parts") is None


def test_a_resume_that_moves_the_run_records_each_part_on_the_card(tmp_path, toy_tsv):
    """A run resumed with other threads (or on another device) is one run in two parts: the card says
    where each trained, and the parts add up to the whole."""
    main(train_args(tmp_path, toy_tsv, "none", minutes=10) + ["--target-tokens", "1500"])
    main(train_args(tmp_path, toy_tsv, "none", minutes=10) + ["--target-tokens", "3000", "--threads", "2", "--resume", "--keep-last"])
    facts = read_card(tmp_path / "out")["training"]
    here = device_name(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    assert [(part["device"], part["threads"]) for part in facts["parts"]] == [(here, 1), (here, 2)]
    assert 1500 <= facts["parts"][0]["target_tokens"] < 1800
    assert sum(part["target_tokens"] for part in facts["parts"]) == facts["target_tokens"]
    assert math.isclose(sum(part["minutes"] for part in facts["parts"]), facts["minutes"], abs_tol=0.11)


def test_learning_rate_warms_up_then_anneals_over_the_time_budget():
    args = parse_args(["--attention", "bahdanau", "--out", "x", "--lr", "0.002", "--warmup-steps", "100"])
    assert learning_rate(args, 0, 0.0) == 0.002 / 100
    assert learning_rate(args, 99, 0.0) == 0.002
    assert math.isclose(learning_rate(args, 5000, 0.5), 0.002 * (args.final_lr_fraction + (1 - args.final_lr_fraction) / 2))
    assert math.isclose(learning_rate(args, 5000, 1.0), 0.002 * args.final_lr_fraction)



def test_the_inverse_square_root_schedule_peaks_after_the_warm_up_whatever_the_budget():
    args = parse_args(["--attention", "transformer", "--out", "x", "--lr", "5e-4", "--warmup-steps", "400",
                       "--schedule", "inverse-sqrt"])
    assert learning_rate(args, 0, 0.0) == 5e-4 / 400 and learning_rate(args, 399, 0.9) == 5e-4
    assert math.isclose(learning_rate(args, 1599, 0.0), 5e-4 / 2) and learning_rate(args, 1599, 1.0) == learning_rate(args, 1599, 0.0)
    with pytest.raises(SystemExit):
        parse_args(["--attention", "transformer", "--out", "x", "--schedule", "linear"])


def test_a_transformer_s_feed_forward_nonlinearity_is_chosen_on_the_command_line_and_relu_by_default():
    gelu = parse_args(["--attention", "transformer", "--out", "x", "--activation", "gelu"])
    assert model_config(gelu, 40, 50).activation == "gelu"
    assert model_config(parse_args(["--attention", "transformer", "--out", "x"]), 40, 50).activation == "relu"
    with pytest.raises(SystemExit):
        parse_args(["--attention", "transformer", "--out", "x", "--activation", "tanh"])


def test_a_continued_inverse_square_root_run_warms_up_again_then_decays_as_the_run_before():
    first = parse_args(["--attention", "transformer", "--out", "x", "--lr", "5e-4", "--warmup-steps", "4000",
                        "--schedule", "inverse-sqrt"])
    k, warmup = 14255, 300
    reached = 5e-4 * math.sqrt(4000 / (k + warmup))  # the first run's rate where the continued one ends its warm-up
    on = parse_args(["--attention", "transformer", "--out", "x", "--lr", str(reached), "--warmup-steps", str(warmup),
                     "--schedule", "inverse-sqrt", "--schedule-step", str(k)])
    assert learning_rate(on, 0, 0.0) == reached / warmup  # fresh Adam moments start small
    for step in (warmup - 1, 1000, 20000):
        assert math.isclose(learning_rate(on, step, 0.0), learning_rate(first, k + step, 0.0), rel_tol=1e-9)


def test_a_run_with_patience_ends_at_its_plateau_and_its_card_says_so(tmp_path, toy_tsv, monkeypatch):
    """Three validations in a row without a better BLEU end the run long before its budget; the kept weights
    are the best ones, and the card's row says the run ended at its plateau."""
    bleus = iter([1.0, 5.0, 5.0, 2.0, 4.9] + [9.0] * 10_000)
    validated = []
    monkeypatch.setattr("attn_demo.training.train.validate",
                        lambda *args: validated.append(1) or {"bleu": next(bleus), "chrf": 0.0})
    main(train_args(tmp_path, toy_tsv, "luong-dot", minutes=10) + ["--target-tokens", "10000000", "--valid-minutes", "0",
                                                                   "--patience", "3", "--keep-saves", "2"])
    assert len(validated) == 5  # 1, 5 (best), then 5 (a tie keeps the later weights), 2, 4.9: three not better
    training = read_card(tmp_path / "out")["training"]
    assert (training["ended"], training["patience"], training["valid_bleu_greedy"]) == ("plateau", 3, 5.0)
    assert training["target_tokens"] < 10000000
    assert "| plateau (3 validations) |" in (tmp_path / "out" / "README.md").read_text()
    saves = sorted((tmp_path / "run" / "saves").glob("*.pt"))
    assert [torch.load(f, weights_only=True)["valid_bleu"] for f in saves] == [2.0, 4.9]
    main(train_args(tmp_path, toy_tsv, "luong-dot", minutes=10) + ["--target-tokens", "10000000", "--valid-minutes", "0",
                                                                   "--patience", "3", "--resume"])
    assert len(validated) == 5  # a plateaued run resumed stays ended


def test_a_token_budget_with_joined_examples_gives_the_same_run_whatever_the_machine_does(tmp_path, toy_tsv):
    """Counted in target pieces, two runs of one seed train the same weights; --resume goes on
    from where the run stopped (same epoch, the batches not yet trained on) to the larger budget."""
    def run(name, tokens, *extra):
        (tmp_path / name).mkdir(exist_ok=True)
        args = train_args(tmp_path / name, toy_tsv, "none", minutes=10) + ["--target-tokens", str(tokens),
                                                                           "--join-prob", "0.5", "--join-max", "3",
                                                                           "--clause-join-prob", "0.3"]
        main(args + list(extra))
        return torch.load(tmp_path / name / "run" / "last.pt", weights_only=True)

    first, again = run("a", 1500), run("b", 1500)
    assert 1500 <= first["state"]["target_tokens"] < 1800 and first["state"]["elapsed"] < 60
    for name, weights in first["model"].items():
        assert torch.equal(weights, again["model"][name]), name
    resumed = run("a", 3000, "--resume")
    assert resumed["state"]["target_tokens"] >= 3000 and resumed["state"]["step"] > first["state"]["step"]
    facts = read_card(tmp_path / "a" / "out")["training"]
    assert facts["target_tokens"] > 0 and "--join-prob 0.5" in facts["command"] and facts["clause_join_prob"] == 0.3


def test_drawn_segmentations_make_the_same_run_for_one_seed_other_than_the_best_ones_and_the_card_says_so(tmp_path,
                                                                                                          toy_tsv):
    def run(name, *extra):
        (tmp_path / name).mkdir()
        main(train_args(tmp_path / name, toy_tsv, "none", minutes=10) + ["--target-tokens", "1500", *extra])
        return torch.load(tmp_path / name / "run" / "last.pt", weights_only=True)["model"]

    drawn, again, best = run("a", "--subword-alpha", "0.1"), run("b", "--subword-alpha", "0.1"), run("c")
    assert all(torch.equal(weights, again[name]) for name, weights in drawn.items())
    assert not all(torch.equal(weights, best[name]) for name, weights in drawn.items())
    assert read_card(tmp_path / "a" / "out")["training"]["subword_alpha"] == 0.1
    assert "pieces drawn, α 0.1" in (tmp_path / "a" / "out" / "README.md").read_text()
    assert "subword_alpha" not in read_card(tmp_path / "c" / "out")["training"]


def test_init_from_continues_a_checkpoint_and_its_card_keeps_both_trainings(tmp_path, toy_tsv):
    first = tmp_path / "first"
    main(train_args(tmp_path, toy_tsv, "luong-general", minutes=10) + ["--target-tokens", "5000", "--out", str(first)])
    before, src_tok, tgt_tok = load_checkpoint(first)
    continued = train_args(tmp_path, toy_tsv, "luong-general", minutes=10)
    continued[continued.index("--run-dir") + 1] = str(tmp_path / "continued-run")  # a new run: no tokenizers of its own
    main(continued + ["--target-tokens", "5000", "--init-from", str(first), "--dropout", "0"])
    after, src_after, _ = load_checkpoint(tmp_path / "out")
    assert src_after.model_file.read_bytes() == src_tok.model_file.read_bytes()  # the same vocabulary
    assert loss_on_toy(after, src_tok, tgt_tok) < loss_on_toy(before, src_tok, tgt_tok)  # it went on learning
    facts = read_card(tmp_path / "out")["training"]
    assert facts["continued_from"]["checkpoint"] == "checkpoints/first"  # as a checkout names it
    assert facts["continued_from"]["training"] == read_card(first)["training"]
    assert (facts["continued_from"]["training"]["dropout"], facts["dropout"]) == (0.2, 0.0)  # each run's own
    assert facts["device"] == device_name(torch.device("cuda" if torch.cuda.is_available() else "cpu"))  # where it ran
    card = (tmp_path / "out" / "README.md").read_text()
    assert "| 0.2; " in card and "| 0; " in card  # each run's row of the history


@pytest.mark.parametrize("onednn, avx512_bf16, amx, native", [
    (False, False, False, False),  # an AVX2-only CPU: oneDNN has no bf16 (emulated, 40x slower)
    (True, False, False, False),  # AVX-512 without bf16 instructions: oneDNN says yes, and emulates it (2.2x slower)
    (True, True, False, True), (True, False, True, True),  # AVX512-BF16 or AMX: computed natively (1.6x faster)
    (False, True, True, False),  # a build without oneDNN's bf16
])
def test_precision_auto_uses_bf16_only_where_the_hardware_has_it(monkeypatch, onednn, avx512_bf16, amx, native):
    from attn_demo.training import train
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: onednn)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    assert train.native_bf16(torch.device("cpu")) is native
    assert parse_args(["--attention", "bahdanau", "--out", "x"]).precision == "auto"


def test_init_from_another_attention_warm_starts_and_the_card_says_what_it_took(tmp_path, toy_tsv):
    first = tmp_path / "first"
    main(train_args(tmp_path, toy_tsv, "bahdanau", minutes=10) + ["--target-tokens", "3000", "--out", str(first)])
    baseline = train_args(tmp_path, toy_tsv, "none", minutes=10)
    baseline[baseline.index("--run-dir") + 1] = str(tmp_path / "baseline-run")
    main(baseline + ["--target-tokens", "3000", "--init-from", str(first)])
    facts = read_card(tmp_path / "out")["training"]["continued_from"]
    assert (facts["attention"], facts["replaced_by"]) == ("bahdanau", "none") and "no attention module" in facts["how"]
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Run 2: bahdanau attention replaced by none" in card and "| 2 | `checkpoints/first` |" in card


def test_init_from_a_transformer_with_another_nonlinearity_takes_every_weight_and_the_card_says_so(tmp_path, toy_tsv,
                                                                                                  toy_tokenizers):
    save_checkpoint(tmp_path / "relu", tiny_model("transformer"), *toy_tokenizers)  # train_args' sizes
    main(train_args(tmp_path, toy_tsv, "transformer", minutes=10) +
         ["--target-tokens", "500", "--init-from", str(tmp_path / "relu"), "--activation", "gelu"])
    assert load_checkpoint(tmp_path / "out")[0].config.activation == "gelu"
    assert read_card(tmp_path / "out")["training"]["continued_from"]["activation"] == ["relu", "gelu"]
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Run 1: every weight of `checkpoints/relu`, its feed-forward φ GELU where it was ReLU." in card
    assert "feed-forward 10 (GELU)" in card


def test_a_run_whose_out_folder_is_its_run_folder_writes_its_card_and_training_data(tmp_path, toy_tsv):
    args = train_args(tmp_path, toy_tsv, "luong-dot", minutes=10)
    args[args.index("--run-dir") + 1] = str(tmp_path / "out")  # as `--out runs/x` does with the default run folder
    main(args + ["--target-tokens", "1000"])
    # the card of this run (its best weights may be those it started with, so not its last piece count)
    assert "--target-tokens 1000" in read_card(tmp_path / "out")["training"]["command"]
    assert read_training_data(tmp_path / "out")["pairs"] > 0


def test_resume_state_is_saved_between_validations(tmp_path, toy_tsv):
    main(train_args(tmp_path, toy_tsv, "none", minutes=0.05) + ["--valid-minutes", "1000", "--save-minutes", "0.01"])
    assert (tmp_path / "run" / "last.pt").is_file() and not (tmp_path / "run" / "last.tmp").exists()


def test_a_run_records_its_timeline_from_the_first_piece_to_the_kept_weights(tmp_path, toy_tsv, attention):
    main(train_args(tmp_path, toy_tsv, attention, minutes=10) + ["--target-tokens", "3000", "--valid-minutes", "1000"])
    timeline, beside_weights = read_timeline(tmp_path / "run"), read_timeline(tmp_path / "out")
    assert timeline["from_scratch"] and timeline["made_these_weights"]
    pieces = [p["target_pieces"] for p in timeline["points"]]
    training = read_card(tmp_path / "out")["training"]
    assert pieces[0] == 0 and pieces == sorted(set(pieces)) and pieces[-1] >= 3000
    first, last = timeline["points"][0], timeline["points"][-1]
    assert last["loss"] < first["loss"]  # the first batch's, before any update, against the mean of all since
    kept = kept_point(timeline)  # the checkpoint's weights, the last point of the timeline beside them
    assert (kept["target_pieces"], kept["valid_bleu"]) == (training["target_tokens"], training["valid_bleu_greedy"])
    assert beside_weights == {**timeline, "points": [p for p in timeline["points"] if p["target_pieces"] <= kept["target_pieces"]]}
    for recorded, source in zip(last["probes"], PROBES, strict=True):
        assert recorded["source"] == source
        if attention == "none":
            assert recorded["alpha"] is None
        else:
            alpha = np.array(recorded["alpha"])
            assert alpha.shape == (len(recorded["french_pieces"]), len(recorded["english_pieces"]))
            assert np.allclose(alpha.sum(axis=1), 1, atol=alpha.shape[1] * 10 ** -ALPHA_DECIMALS)
    assert "Its α first agrees" in (tmp_path / "out" / "README.md").read_text() or attention == "none"


def test_the_checkpoint_s_timeline_ends_at_its_weights_and_the_run_s_goes_on(tmp_path, toy_tsv, monkeypatch):
    """Validation peaked before the run's end: --out holds the timeline up to the weights it kept (the page
    shows its last point as the model the rest of the page uses), the run folder every point."""
    bleus = iter([1.0, 5.0] + [2.0] * 10_000)
    monkeypatch.setattr("attn_demo.training.train.validate", lambda *args: {"bleu": next(bleus), "chrf": 0.0})
    main(train_args(tmp_path, toy_tsv, "bahdanau", minutes=10) + ["--target-tokens", "2000", "--valid-minutes", "0"])
    run, out = read_timeline(tmp_path / "run"), read_timeline(tmp_path / "out")
    assert len(run["points"]) > 2 and out["points"] == run["points"][:2]
    training = read_card(tmp_path / "out")["training"]
    assert (training["target_tokens"], training["valid_bleu_greedy"]) == (out["points"][-1]["target_pieces"], 5.0)
    assert f"to {training['target_tokens']:,} target pieces" in (tmp_path / "out" / "README.md").read_text()


def test_a_continued_run_counts_its_timeline_on_from_the_weights_it_continued(tmp_path, toy_tsv):
    first = tmp_path / "first"
    main(train_args(tmp_path, toy_tsv, "bahdanau", minutes=10) + ["--target-tokens", "2000", "--out", str(first)])
    earlier = read_timeline(first)
    go_on = train_args(tmp_path, toy_tsv, "bahdanau", minutes=10)
    go_on[go_on.index("--run-dir") + 1] = str(tmp_path / "continued-run")
    main(go_on + ["--target-tokens", "2000", "--init-from", str(first)])
    timeline = read_timeline(tmp_path / "out")
    kept = kept_point(earlier)["target_pieces"]
    assert timeline["points"][:len(earlier["points"])] == [p for p in earlier["points"] if p["target_pieces"] <= kept]
    assert timeline["from_scratch"]  # its first points are the first run's, from scratch
    assert read_timeline(tmp_path / "continued-run")["points"][-1]["target_pieces"] >= kept + 2000


def test_the_run_clock_leaves_out_the_time_the_process_was_stopped():
    now = [100.0]
    clock = RunClock(elapsed=60.0, now=lambda: now[0])  # resumed after a minute of training
    now[0] += 5
    assert clock() == 65.0
    now[0] += 3600  # an hour stopped (kill -STOP), then continued: the kernel sends SIGCONT
    os.kill(os.getpid(), signal.SIGCONT)
    assert clock() == 65.0
    now[0] += 2
    assert clock() == 67.0
