"""The model card: what it records in its front matter, what it writes from it, and the shipped cards."""
import pytest
from huggingface_hub import ModelCard

from attn_demo.card import read_card, write_model_card
from attn_demo.checkpoint import read_folder
from attn_demo.translator import load_translator


def test_model_card_carries_hub_metadata_training_facts_and_scores(toy_checkpoint):
    training = {"command": "python -m attn_demo.train --attention x", "minutes": 1.5, "steps": 10, "epochs": 0.5,
                "parameters": 1234, "threads": 1, "valid_bleu_greedy": 9.5, "valid_chrf_greedy": 20.0, "training_pairs": 99}
    write_model_card(toy_checkpoint, training=training)
    results = {"bleu": 12.34, "chrf": 40.5, "n": 112, "beam": 5, "dataset": "toy.tsv", "command": "python -m attn_demo.evaluate",
               "by_length": {"1-5": {"n": 112, "bleu": 12.34}}, "refused": 2}
    write_model_card(toy_checkpoint, test_results=results)  # keeps the training facts already there
    card = ModelCard.load(toy_checkpoint / "README.md")
    assert card.data.language == ["en", "fr"] and card.data.license == "cc-by-2.0" and card.data.datasets == ["tatoeba"]
    assert card.data.training == training
    assert {(r.metric_type, r.metric_value) for r in card.data.eval_results} == {("bleu", 12.34), ("chrf", 40.5)}
    assert "manythings.org" in card.text and "Tatoeba" in card.text and "1,234 parameters" in card.text
    assert "counts as an empty translation: 2 here" in card.text and "| 1-5 | 112 | 12.34 |" in card.text
    assert load_translator(toy_checkpoint).metrics == {"bleu": 12.34, "chrf": 40.5}


def test_model_card_says_where_each_run_trained(toy_checkpoint):
    cpu = {"command": "train a", "minutes": 30.0, "steps": 10, "epochs": 0.5, "threads": 2, "device": "CPU",
           "valid_bleu_greedy": 9.5, "valid_chrf_greedy": 20.0, "training_pairs": 99}
    gpu = {**cpu, "command": "train b", "minutes": 0.8, "device": "NVIDIA H200", "continued_from": {"checkpoint": "a", "training": cpu}}
    write_model_card(toy_checkpoint, training=gpu)
    text = ModelCard.load(toy_checkpoint / "README.md").text
    assert "30.0 minutes on 2 CPU thread(s)" in text and "0.8 minutes on one NVIDIA H200" in text
    assert "0.8 minutes on 2 CPU" not in text


def test_a_section_not_given_is_kept_and_an_unknown_one_is_refused(toy_checkpoint):
    speed = {"median_ms": 3.5, "p95_ms": 4.0, "n": 5, "words": 4, "device": "cpu", "torch_threads": 1,
             "date": "2026-01-02", "timed_with": [], "command": "python -m attn_demo.speed x --card"}
    write_model_card(toy_checkpoint, speed=speed)
    write_model_card(toy_checkpoint, examples={"beam": 2, "translations": [], "command": "python -m attn_demo.evaluate"})
    assert read_card(toy_checkpoint)["speed"] == speed and read_card(toy_checkpoint)["examples"]["beam"] == 2
    with pytest.raises(TypeError, match="no section"):
        write_model_card(toy_checkpoint, results={"bleu": 1.0})  # the card calls it test_results


def test_a_checkpoint_folder_is_read_whole(toy_checkpoint):
    assert read_card(toy_checkpoint) == {}  # no card yet
    write_model_card(toy_checkpoint, training={"command": "python -m attn_demo.train", "minutes": 1.0, "steps": 2,
                                               "epochs": 0.1, "threads": 1, "valid_bleu_greedy": 1.5,
                                               "valid_chrf_greedy": 9.0, "training_pairs": 7})
    folder = read_folder(toy_checkpoint)
    assert folder.path == toy_checkpoint and not folder.model.training
    assert folder.card["training"]["steps"] == 2 and folder.training_data is None and folder.timeline is None
