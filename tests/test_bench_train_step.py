import json

import pytest

from benchmarks import train_step

pytestmark = pytest.mark.slow  # runs a benchmark


def test_the_training_step_benchmark_trains_every_kind_and_prints_its_speed(toy_checkpoint, toy_tsv, tmp_path, capsys):
    argv = [str(toy_checkpoint), "--pairs", str(toy_tsv), "--batches", "2", "--max-tokens", "60",
            "--json", str(tmp_path / "run.json")]
    train_step.main(argv)
    printed = capsys.readouterr().out.strip()
    written = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert train_step.table(written) == printed and written["command"] == "python -m benchmarks.train_step " + " ".join(argv)
    header, rule, *rows = printed.splitlines()
    assert header.startswith("| model | precision | target pieces/s (1 thread)") and rule == "|---|---|---|---|"
    assert rows and all(row.startswith(f"| {toy_checkpoint.name} | ") for row in rows)
    for row in rows:
        speed, loss = (float(cell.replace(",", "")) for cell in row.strip("| ").split(" | ")[2:])
        assert speed > 0 and 0 < loss < 10  # a vocabulary of 40: an untrained model's loss is about ln 40 = 3.7


def test_the_timed_steps_leave_out_the_first_and_train_the_model(toy_checkpoint, toy_tsv):
    model, chosen = train_step.real_batches(toy_checkpoint, toy_tsv, 3, 60)
    before = [p.detach().clone() for p in model.parameters()]
    result = train_step.time_steps(model, chosen, bf16=False)
    assert len(chosen) == 4 and result["pieces"] == sum(int((b[3] != 0).sum()) for b in chosen[1:])
    assert any((p != b).any() for p, b in zip(model.parameters(), before))
