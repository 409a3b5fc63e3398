"""The mean of a run's last saves: each weight the mean of theirs, scored beside them, written as a checkpoint whose
card says which weights it averages."""
import pytest
import torch

from attn_demo.checkpoints.card import read_card
from attn_demo.checkpoints.folder import load_checkpoint
from attn_demo.measures.timeline import point, read_timeline
from attn_demo.training.average import main as average, mean_weights, read_saves
from attn_demo.training.train import main as train
from test_train import train_args


def test_the_mean_of_float_tensors_is_theirs_and_other_tensors_are_the_last_states():
    torch.manual_seed(0)
    states = [{"w": torch.randn(3, 2), "count": torch.tensor([k, 2 * k])} for k in range(3)]
    mean = mean_weights(states)
    torch.testing.assert_close(mean["w"], (states[0]["w"] + states[1]["w"] + states[2]["w"]) / 3, rtol=0, atol=1e-7)
    assert mean["w"].dtype == torch.float32 and mean["count"].tolist() == [2, 4]


@pytest.mark.parametrize("patience", [None, "1"])
def test_a_runs_last_saves_are_averaged_scored_and_written_as_a_checkpoint(tmp_path, toy_tsv, capsys, patience):
    args = train_args(tmp_path, toy_tsv, "luong-general", minutes=10)
    train(args + ["--target-tokens", "3000", "--valid-minutes", "0", "--keep-saves", "3",
                  *(["--patience", patience] if patience else [])])
    run = read_card(tmp_path / "out")["training"]
    assert run["ended"] == ("plateau" if patience else "budget")
    saves = read_saves(tmp_path / "run", 3)
    n = len(saves)  # a run ended at its plateau may have validated fewer times
    assert (n == 3 if patience is None else n >= 2) and [s["step"] for s in saves] == sorted({s["step"] for s in saves})
    capsys.readouterr()
    average([str(tmp_path / "out"), "--run-dir", str(tmp_path / "run"), "--last", "3", "--out", str(tmp_path / "mean"),
             "--train-pool", str(toy_tsv), "--test-set", str(tmp_path / "test.tsv"), "--n-valid", "12"])
    shown = capsys.readouterr().out
    assert shown.count("| saved |") == n and f"| the mean of these {n} | {saves[0]['step']}–{saves[-1]['step']} |" in shown
    model, _, _ = load_checkpoint(tmp_path / "mean")
    expected = mean_weights([s["model"] for s in saves])
    for name, weight in model.state_dict().items():  # the folder's weights are float16: the mean to that precision
        torch.testing.assert_close(weight, expected[name].half().float(), rtol=0, atol=0)
    training = read_card(tmp_path / "mean")["training"]  # the run up to the last weights averaged, not the best's
    assert training["averaged_steps"] == [s["step"] for s in saves] and training["steps"] == saves[-1]["step"]
    assert training["target_tokens"] == saves[-1]["training"]["target_tokens"] >= (3000 if patience is None else 0)
    assert (training["ended"], training.get("patience")) == (run["ended"], run.get("patience"))  # what ended the run
    assert training["valid_bleu_best"] == run["valid_bleu_greedy"]  # the best save's, which the mean is chosen against
    assert f"the mean of its weights at steps {', '.join(str(s['step']) for s in saves)}" in (tmp_path / "mean" / "README.md").read_text()
    # its timeline ends with the mean, in place of the last save's point: the page's sentences as the mean translates them
    before, after = read_timeline(tmp_path / "run")["points"], read_timeline(tmp_path / "mean")["points"]
    model, src_tok, tgt_tok = load_checkpoint(tmp_path / "mean")
    assert after[:-1] == before[:-1] and after[-1]["averaged_steps"] == training["averaged_steps"]
    assert after[-1]["probes"] == point(model, src_tok, tgt_tok, 0, 0.0, 0.0)["probes"]
    assert (after[-1]["target_pieces"], after[-1]["valid_bleu"]) == (before[-1]["target_pieces"], training["valid_bleu_greedy"])


def test_a_run_without_saves_is_said_in_one_line(tmp_path):
    with pytest.raises(SystemExit, match="train with --keep-saves N"):
        read_saves(tmp_path, 5)


def test_saves_that_do_not_record_their_run_are_scored_but_not_written(tmp_path, toy_tsv, capsys):
    args = train_args(tmp_path, toy_tsv, "none", minutes=10)
    train(args + ["--target-tokens", "1000", "--valid-minutes", "0", "--keep-saves", "2"])
    for path in (tmp_path / "run" / "saves").glob("step-*.pt"):  # as saves were kept before they held the run's record
        save = torch.load(path, weights_only=True)
        del save["training"]
        torch.save(save, path)
    common = [str(tmp_path / "out"), "--run-dir", str(tmp_path / "run"), "--last", "2", "--train-pool", str(toy_tsv),
              "--test-set", str(tmp_path / "test.tsv"), "--n-valid", "12"]
    with pytest.raises(SystemExit, match="score them without --out"):
        average(common + ["--out", str(tmp_path / "mean")])
    average(common)
    assert "| the mean of these 2 |" in capsys.readouterr().out and not (tmp_path / "mean").exists()
