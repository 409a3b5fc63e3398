import pytest
import torch
from huggingface_hub import ModelCard

from attn_demo.checkpoints.card import read_card, write_model_card
from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.evaluation.speed import main
from attn_demo.models.config import MODEL_KINDS
from attn_demo.serving.catalogue import load_models, summary
from conftest import DEVICE, in_hub_cache, tiny_model


@pytest.fixture
def checkpoints(tmp_path, toy_tokenizers):
    """One tiny checkpoint of every attention type, its card already holding a test score."""
    folder = tmp_path / "checkpoints"
    for attention in MODEL_KINDS:
        save_checkpoint(folder / f"tiny-{attention}", tiny_model(attention), *toy_tokenizers)
        write_model_card(folder / f"tiny-{attention}", test_results={
            "bleu": 1.5, "chrf": 9.0, "n": 3, "beam": 5, "dataset": "toy.tsv", "by_length": {}, "command": "evaluate"})
    return folder


def test_every_card_records_its_speed_and_the_models_timed_beside_it(checkpoints, capsys):
    threads = torch.get_num_threads()  # this process's own: the test leaves it as it was
    main([*sorted(str(path) for path in checkpoints.iterdir()), "--runs", "3", "--warmup", "1", "--threads", str(threads), "--card"])
    printed = capsys.readouterr().out
    names = {f"tiny-{attention}" for attention in MODEL_KINDS}
    rows = {model.key: summary(model) for model in load_models(checkpoints, device=DEVICE)[0]}
    for name in names:
        card = ModelCard.load(checkpoints / name / "README.md")
        facts = read_card(checkpoints / name)
        speed = facts["speed"]
        assert "`translate()` of a 15-word sentence, greedy" in card.text and f"({threads} thread(s))" in card.text
        assert f"**median {speed['median_ms']} ms**" in card.text and "over 3 runs, timed beside the models named below." in card.text
        command = card.text.split("### Speed")[1].split("```")[1]
        assert command.strip().startswith("python -m attn_demo.evaluation.speed") and all(other in command for other in names)
        assert facts["test_results"]["bleu"] == 1.5  # the card's other facts stay
        assert rows[name]["ms_per_sentence"] == speed["median_ms"] > 0  # the Compare table reads it
        assert f"{name} " in printed


def test_a_card_without_a_speed_says_so(toy_checkpoint):
    write_model_card(toy_checkpoint)
    assert "### Speed\nNot measured yet." in (toy_checkpoint / "README.md").read_text()


def test_a_hub_model_is_named_by_its_repo_id(checkpoints, offline_hub, capsys):
    in_hub_cache(offline_hub, "attn-demo/tiny", checkpoints / "tiny-luong-dot")
    local = checkpoints / "tiny-bahdanau"
    main([str(local), "attn-demo/tiny", "--runs", "2", "--warmup", "0", "--threads", str(torch.get_num_threads()), "--card"])
    assert capsys.readouterr().out.splitlines()[1].startswith("attn-demo/tiny ")
    assert "attn_demo.evaluation.speed" in (local / "README.md").read_text() and " attn-demo/tiny " in (local / "README.md").read_text()
