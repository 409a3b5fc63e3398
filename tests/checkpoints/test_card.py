"""The model card: what its facts (card.json) and front matter keep, what its text says, how a re-write keeps the
rest, and the shipped cards (small, with commands a checkout can rerun)."""
import json
import re
import shutil

import pytest
from huggingface_hub import ModelCard

from attn_demo.checkpoints.card import CARD, FACTS, HUB_KEYS, against_table, main, read_card, rerunnable, write_model_card
from attn_demo.checkpoints.folder import read_folder
from attn_demo.measures.timeline import TIMELINE
from attn_demo.models.attention import KINDS
from attn_demo.translator import load_translator
from conftest import ROOT

SHIPPED = sorted(path.parent for path in (ROOT / "checkpoints").glob(f"*/{CARD}"))
CARD_LIMIT = 15_500  # characters of the card: one a reader takes in at once (a Transformer's heads, its every grid's
# alignment error, a paired bootstrap against each model it must beat and a continuation to its plateau included)
FACTS_LIMIT = 7_500  # characters of card.json: the facts the app and the tools read (a Transformer's every grid and its
# continuation to its plateau included)


def test_model_card_carries_hub_metadata_training_facts_and_scores(toy_checkpoint):
    training = {"command": "python -m attn_demo.training.train --attention x", "minutes": 1.5, "steps": 10, "epochs": 0.5,
                "parameters": 1234, "threads": 1, "valid_bleu_greedy": 9.5, "valid_chrf_greedy": 20.0, "training_pairs": 99}
    write_model_card(toy_checkpoint, training=training)
    results = {"bleu": 12.34, "chrf": 40.5, "n": 112, "beam": 5, "dataset": "toy.tsv", "command": "python -m attn_demo.evaluation.evaluate",
               "by_length": {"1-5": {"n": 112, "bleu": 12.34}}, "refused": 2}
    write_model_card(toy_checkpoint, test_results=results)  # keeps the training facts already there
    card = ModelCard.load(toy_checkpoint / "README.md")
    assert card.data.language == ["en", "fr"] and card.data.license == "cc-by-2.0" and card.data.datasets == ["tatoeba"]
    assert set(card.data.to_dict()) == set(HUB_KEYS)  # the Hub's keys; the facts are card.json's
    assert read_card(toy_checkpoint)["training"] == training
    assert "manythings.org" in card.text and "Tatoeba" in card.text and "1,234 parameters" in card.text
    assert "count as empty: 2" in card.text and "| 1-5 | 112 | 12.34 |" in card.text
    assert load_translator(toy_checkpoint).metrics == {"bleu": 12.34, "chrf": 40.5}


def test_model_card_gives_the_faults_of_sentences_with_only_trained_words_and_no_refusals_when_none(toy_checkpoint):
    results = {"bleu": 12.34, "chrf": 40.5, "n": 112, "beam": 5, "dataset": "toy.tsv", "command": "python -m attn_demo.evaluation.evaluate",
               "by_length": {"1-5": {"n": 112, "bleu": 12.34}}, "refused": 0,
               "faults": {"n": 20, "repeat": 0.25, "short": 0.1, "repeat_or_short": 0.3, "short_ratio": 0.8, "min_words": 16,
                          "seen_n": 8, "seen_repeat_or_short": 0.125}}
    write_model_card(toy_checkpoint, test_results=results)
    text = ModelCard.load(toy_checkpoint / "README.md").text
    assert "**30.00% of its 20 sentences of 16+ words repeat a phrase or are short**" in text
    assert "; 12.50% of the 8 with no unseen word." in text
    assert "refused" not in text


def test_general_text_scores_have_their_own_section_with_the_reference_for_scale_and_the_credit(toy_checkpoint):
    general = {"bleu": 10.04, "chrf": 35.3, "n": 1012, "beam": 5, "dataset": "flores200-devtest.eng-fra.tsv",
               "command": "python -m attn_demo.evaluation.evaluate checkpoints/x --general --beam 5 --card",
               "by_length": {"21+": {"n": 500, "bleu": 9.1}}, "refused": 0,
               "faults": {"n": 805, "repeat": 0.5, "short": 0.3, "repeat_or_short": 0.72, "min_words": 16}}
    write_model_card(toy_checkpoint, general_results=general)
    card = ModelCard.load(toy_checkpoint / "README.md")
    general_text = card.text.split("### General text")[1].split("###")[0]
    assert "**BLEU 10.04**, chrF 35.3" in general_text and "72.00% of its 805 sentences of 16+ words" in general_text
    assert "52.2" in general_text and "CC-BY-SA" in general_text and "--general --beam 5 --card" in general_text
    assert read_card(toy_checkpoint)["general_results"] == {"bleu": 10.04, "chrf": 35.3, "faults": general["faults"]}  # what Compare reads
    assert "Not evaluated yet." in card.text.split("## Evaluation")[1].split("###")[0]  # the test set's: not measured


def test_the_length_curve_says_how_far_bleu_holds_from_short_inputs_to_long_ones(toy_checkpoint):
    buckets = {"1-10": {"n": 200, "bleu": 32.0, "chrf": 50.0}, "41-50": {"n": 200, "bleu": 8.0, "chrf": 33.0}}
    curve = {"dataset": "toy.tsv", "beam": 5, "buckets": buckets, "command": "python -m attn_demo.evaluation.evaluate x --long"}
    write_model_card(toy_checkpoint, length_curve=curve)
    assert "BLEU at 41–50 words / at 1–10: **0.25**." in (toy_checkpoint / CARD).read_text()
    write_model_card(toy_checkpoint, length_curve={**curve, "buckets": {"1-10": buckets["1-10"]}})  # no long bucket
    assert "at 1–10:" not in (toy_checkpoint / CARD).read_text()


def test_a_card_written_before_the_general_text_section_keeps_every_section(toy_checkpoint):
    results = {"bleu": 12.34, "chrf": 40.5, "n": 112, "beam": 5, "dataset": "toy.tsv", "command": "evaluate it",
               "by_length": {"1-5": {"n": 112, "bleu": 12.34}}, "refused": 0}
    write_model_card(toy_checkpoint, test_results=results)
    path = toy_checkpoint / "README.md"
    path.write_text(path.read_text().replace("\n### General text\nNot evaluated yet.\n", ""))  # as cards were written before
    write_model_card(toy_checkpoint)
    text = path.read_text()
    assert "| 1-5 | 112 | 12.34 |" in text and "evaluate it" in text  # kept: only the card's facts would lose them
    assert "### General text\nNot evaluated yet." in text


def test_model_card_says_where_each_run_trained(toy_checkpoint):
    cpu = {"command": "train a", "minutes": 30.0, "steps": 10, "epochs": 0.5, "threads": 2, "device": "CPU",
           "valid_bleu_greedy": 9.5, "valid_chrf_greedy": 20.0, "training_pairs": 99}
    gpu = {**cpu, "command": "train b", "minutes": 0.8, "device": "NVIDIA H200", "continued_from": {"checkpoint": "a", "training": cpu}}
    write_model_card(toy_checkpoint, training=gpu)
    text = ModelCard.load(toy_checkpoint / "README.md").text
    assert "| 1 | scratch | (10, 0.5) | 30.0 min, 2 CPU thread(s) |" in text
    assert "| 2 | run 1 | (10, 0.5) | 0.8 min, NVIDIA H200 |" in text


def test_model_card_says_where_each_part_of_a_moved_run_trained(toy_checkpoint):
    parts = [{"device": "CPU", "threads": 1, "minutes": 250.1, "target_tokens": 24_000_000},
             {"device": "NVIDIA H100", "threads": 2, "minutes": 6.2, "target_tokens": 16_000_000}]
    run = {"command": "train a", "minutes": 256.3, "steps": 10, "epochs": 0.5, "threads": 2, "device": "NVIDIA H100",
           "valid_bleu_greedy": 9.5, "valid_chrf_greedy": 20.0, "training_pairs": 99, "parts": parts}
    write_model_card(toy_checkpoint, training=run)
    text = ModelCard.load(toy_checkpoint / "README.md").text
    assert "| (10, 0.5) | 250.1 min, 1 CPU thread(s), then 6.2 min, NVIDIA H100 |" in text


def test_paired_bootstraps_read_as_a_table_a_row_per_model_with_long_sentences_where_there_are_some():
    def scores(bleu, chrf):
        return {"bleu": {"score": bleu[0], "baseline": bleu[1], "p": bleu[2]}, "chrf": {"score": chrf[0], "baseline": chrf[1], "p": chrf[2]}}
    long = {"n": 187, "min_words": 16, **scores((25.8, 22.5, 0.001), (50.4, 47.1, 0.002))}
    rows = [{"model": "a", "all": scores((42.4, 38.9, 0.001), (61.6, 59.0, 0.003)), "long": long},
            {"model": "b", "all": scores((42.4, 42.6, 0.4), (61.6, 61.5, 0.3)), "long": long}]
    table = against_table(rows).strip().splitlines()
    assert table[2] == "| against | BLEU | chrF | BLEU, 16+ words (187) | chrF, 16+ words (187) |"
    assert table[4] == "| a | 42.4 vs 38.9 (p 0.001) | 61.6 vs 59.0 (p 0.003) | 25.8 vs 22.5 (p 0.001) | 50.4 vs 47.1 (p 0.002) |"
    assert table[5].startswith("| b | 42.4 vs 42.6 (p 0.4) |") and len(table) == 6
    short = [{**rows[0], "long": {"n": 0, "min_words": 16}}]
    assert against_table(short).strip().splitlines()[2] == "| against | BLEU | chrF |" and against_table([]) == ""
    every = [{**rows[0], "long": {"n": 116, "min_words": 11}}]  # every sentence long: the whole set's columns say it
    assert against_table(every).strip().splitlines()[2:] == ["| against | BLEU | chrF |", "|---|---|---|",
                                                             "| a | 42.4 vs 38.9 (p 0.001) | 61.6 vs 59.0 (p 0.003) |"]


def test_a_checkpoint_whose_continuation_to_its_plateau_was_no_better_says_so(toy_checkpoint, tmp_path):
    shipped = {"command": "python -m attn_demo.training.train --out runs/x", "minutes": 30.0, "steps": 10, "epochs": 0.5,
               "threads": 2, "valid_bleu_greedy": 43.11, "valid_chrf_greedy": 61.4, "training_pairs": 99}
    write_model_card(toy_checkpoint, training=shipped)
    run = {**shipped, "command": f"python -m attn_demo.training.train --out runs/y --init-from {toy_checkpoint} --lr 4e-5",
           "minutes": 40.1, "target_tokens": 2_500_000, "ended": "plateau", "patience": 4, "valid_bleu_greedy": 43.4,
           "valid_bleu_best": 43.31, "averaged_steps": [1, 2, 3, 4, 5], "continued_from": {"checkpoint": str(toy_checkpoint)}}
    bootstrap = {"bleu": {"score": 40.1, "baseline": 39.99, "p": 0.3}, "chrf": {"score": 59.0, "baseline": 58.94, "p": 0.4}}
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    for folder, pieces in ((toy_checkpoint, [0, 40_000_000]), (candidate, [0, 40_000_000, 42_500_000, 47_600_000])):
        points = [{"target_pieces": n, "probes": [{"alpha": None}]} for n in pieces]  # the run's goes on from its start's
        timeline = {"from_scratch": True, "made_these_weights": True, "command": shipped["command"], "points": points}
        (folder / TIMELINE).write_text(json.dumps(timeline))

    def record(training, comparison):
        test = {"beam": 5, "against": [{"model": toy_checkpoint.name, "all": comparison}]}
        (candidate / FACTS).write_text(json.dumps({"training": training, "test_results": test}))
        main([str(toy_checkpoint), "--plateau-from", str(candidate)])

    for training, comparison, refusal in [({**run, "ended": "budget"}, bootstrap, "did not end at its plateau"),
                                          (run, {**bootstrap, "bleu": {**bootstrap["bleu"], "p": 0.01}}, "ship it instead")]:
        with pytest.raises(ValueError, match=refusal):
            record(training, comparison)
    record({**run, "target_tokens": 2_992, "averaged_steps": []}, bootstrap)  # its first save the best
    assert "On the Tatoeba test, beam 5, its best (2,992 more target pieces, 40.1 min)" in ModelCard.load(toy_checkpoint / "README.md").text
    record(run, bootstrap)
    text = ModelCard.load(toy_checkpoint / "README.md").text
    assert ("**At its plateau.** Run 1 was continued at the rate its schedule ended on until 4 validations in a row had "
            "not beaten its best, 7.6M target pieces on: best validation BLEU 43.31 against these weights' 43.11, the mean of its last 5 saves "
            "43.4. On the Tatoeba test, beam 5, the mean (2.5M more target pieces, 40.1 min): BLEU 40.1 vs 39.99 (paired "
            "bootstrap p 0.3), chrF 59.0 vs 58.94 (p 0.4): not better, so these weights stand.") in text
    assert f"--out checkpoints/{toy_checkpoint.name}-plateau --init-from checkpoints/{toy_checkpoint.name} --lr 4e-5" in text
    assert read_card(toy_checkpoint)["training"]["plateau"]["valid_bleu_before"] == 43.11
    write_model_card(toy_checkpoint)  # re-written from itself: the paragraph stays
    assert "**At its plateau.**" in ModelCard.load(toy_checkpoint / "README.md").text


@pytest.mark.parametrize("stepwise", [False, True])
def test_model_card_says_how_its_beam_ranks_and_the_translator_decodes_so(toy_checkpoint, stepwise):
    penalties = {"length": 0.6, "coverage": 0.0, "repeat": 1.0, "stepwise": stepwise}
    row = {"penalties": penalties, "bleu": 10.5, "chrf": 30.0, "repeat": 0.1, "short": 0.05, "repeat_or_short": 0.15}
    plain = {**row, "penalties": {"length": None, "coverage": 0.0, "repeat": 0.0, "stepwise": False}, "bleu": 10.0}
    write_model_card(toy_checkpoint, decoding={"beam": 5, "n": 20, "n_long": 4, "penalties": penalties, "tuned": row,
                                               "plain": plain, "command": "python -m attn_demo.evaluation.evaluate x --tune --card"})
    text = (toy_checkpoint / CARD).read_text()
    ranking = "its beginnings at every step by log p with β_cov 0, β_rep 1" if stepwise else "β_cov 0, β_rep 1"
    assert f"ranks what it finishes by log p over ((5 + |Y|) / 6)^0.6, {ranking}, tuned" in text and "BLEU 10.0 → 10.5" in text
    assert load_translator(toy_checkpoint).penalties.stepwise == stepwise


def test_a_section_not_given_is_kept_and_an_unknown_one_is_refused(toy_checkpoint):
    speed = {"median_ms": 3.5, "p95_ms": 4.0, "n": 5, "words": 4, "device": "cpu", "torch_threads": 1,
             "date": "2026-01-02", "timed_with": [], "command": "python -m attn_demo.evaluation.speed x --card"}
    write_model_card(toy_checkpoint, speed=speed)
    write_model_card(toy_checkpoint, examples={"beam": 2, "translations": [], "command": "python -m attn_demo.evaluation.evaluate"})
    text = (toy_checkpoint / CARD).read_text()
    assert read_card(toy_checkpoint)["speed"] == {"median_ms": 3.5}  # what the Compare table reads
    assert "**median 3.5 ms**, p95 4.0 ms over 5 runs" in text and "greedy as the page opens, and beam 2" in text
    with pytest.raises(TypeError, match="no section"):
        write_model_card(toy_checkpoint, results={"bleu": 1.0})  # the card calls it test_results


def test_a_card_not_yet_measured_says_so_in_the_words_of_its_kind(toy_checkpoint, attention):
    """Before `evaluate --heads` and `--marks`: a Transformer's heads and any attention model's marks are "not
    measured yet"; a GRU has no heads, and a model without attention no coverage to mark words by."""
    write_model_card(toy_checkpoint)
    text = (toy_checkpoint / CARD).read_text()
    heads, marks = (text.split(heading)[1].split("\n#")[0].strip() for heading in ("### What each head does", "### Coverage marks"))
    kind = KINDS[attention]
    assert heads == ("Not measured yet." if kind.heads else "None: a GRU model attends with one score.")
    assert marks == ("Not measured yet." if kind.score else "Not measured (a model without attention has no coverage).")
    other = "Not measured yet." if not kind.heads else "None: a GRU model attends with one score."
    (toy_checkpoint / CARD).write_text(text.replace(f"### What each head does\n{heads}", f"### What each head does\n{other}"))
    write_model_card(toy_checkpoint)  # a card written while its kind was unknown holds another kind's words: said anew
    assert f"### What each head does\n{heads}\n" in (toy_checkpoint / CARD).read_text()


def test_a_card_with_its_facts_in_its_front_matter_is_read_and_rewritten_with_them_beside_it(toy_checkpoint):
    """A card written before card.json (a Hub repo uploaded then) keeps its facts in its front matter: they are read
    from there, and a re-write puts them in card.json, the text unchanged and the front matter the Hub's keys alone."""
    training = {"command": "python -m attn_demo.training.train --attention x", "minutes": 2.5, "steps": 20, "epochs": 1.0,
                "parameters": 99, "threads": 1, "valid_bleu_greedy": 3.5, "valid_chrf_greedy": 12.0, "training_pairs": 9}
    write_model_card(toy_checkpoint, training=training)
    card = ModelCard.load(toy_checkpoint / CARD)
    older = ModelCard.load(toy_checkpoint / CARD)  # as such a card was written: the facts beside the Hub's keys
    older.data = type(card.data)(**card.data.to_dict(), training=training)
    older.save(toy_checkpoint / CARD)
    (toy_checkpoint / FACTS).unlink()
    assert read_card(toy_checkpoint) == {"training": training}
    write_model_card(toy_checkpoint)
    assert read_card(toy_checkpoint) == {"training": training} and (toy_checkpoint / FACTS).is_file()
    again = ModelCard.load(toy_checkpoint / CARD)
    assert set(again.data.to_dict()) == set(HUB_KEYS) and again.text == card.text


def test_a_checkpoint_folder_is_read_whole(toy_checkpoint):
    assert read_card(toy_checkpoint) == {}  # no card yet
    write_model_card(toy_checkpoint, training={"command": "python -m attn_demo.training.train", "minutes": 1.0, "steps": 2,
                                               "epochs": 0.1, "threads": 1, "valid_bleu_greedy": 1.5,
                                               "valid_chrf_greedy": 9.0, "training_pairs": 7})
    folder = read_folder(toy_checkpoint)
    assert folder.path == toy_checkpoint and not folder.model.training
    assert folder.card["training"]["steps"] == 2 and folder.training_data is None and folder.timeline is None


def test_a_recorded_command_is_rerun_from_a_checkout_with_the_default_data():
    train = ("python -m attn_demo.training.train --attention none --run-dir runs/a --out runs/a-out --init-from runs/b-out "
             "--train-pool .gpu/data/fra-eng-2019-04-07.tsv.gz --test-set elsewhere/mine.tsv --resume --threads 2")
    assert rerunnable(train, "m") == ("python -m attn_demo.training.train --attention none --out checkpoints/m --init-from "
                                      "checkpoints/m --test-set elsewhere/mine.tsv --threads 2")
    assert rerunnable(train, "m", out="checkpoints/first").split()[5:7] == ["--out", "checkpoints/first"]
    evaluate = "python -m attn_demo.evaluation.evaluate runs/x --dev --beam 5 --card --json --hyps /tmp/x.dev.txt"
    assert rerunnable(evaluate, "m") == "python -m attn_demo.evaluation.evaluate checkpoints/m --dev --beam 5 --card"
    aligned = "python -m attn_demo.evaluation.evaluate runs/x --alignments --attribution saliency --keep-links runs/l.jsonl"
    assert rerunnable(aligned, "m") == "python -m attn_demo.evaluation.evaluate checkpoints/m --alignments --attribution saliency"


@pytest.mark.parametrize("folder", SHIPPED, ids=lambda path: path.name)
def test_a_shipped_card_is_short_and_its_commands_run_from_a_checkout(folder):
    text, facts = (folder / CARD).read_text(encoding="utf-8"), (folder / FACTS).read_text(encoding="utf-8")
    assert len(text) <= CARD_LIMIT and len(facts) <= FACTS_LIMIT, f"{len(text):,} + {len(facts):,} characters"
    commands = [line for block in re.findall(r"^```\n(.*?)^```", text, re.S | re.M) for line in block.splitlines()]
    assert commands and all(line.startswith("python -m attn_demo.") for line in commands)
    assert not [line for line in commands if re.search(r"(^|[ =])(runs/|\.gpu/|/tmp/)", line)]
    assert f"--out checkpoints/{folder.name} " in text or "--out" not in text


@pytest.mark.parametrize("folder", SHIPPED, ids=lambda path: path.name)
def test_a_shipped_card_rewritten_from_itself_is_unchanged(folder, tmp_path):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("model.safetensors"))
    write_model_card(copy)
    assert (copy / CARD).read_text(encoding="utf-8") == (folder / CARD).read_text(encoding="utf-8")
