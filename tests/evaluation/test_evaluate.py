import dataclasses
import json
import math
import sys

import pytest
import sacrebleu

from huggingface_hub import ModelCard

from attn_demo.checkpoints.card import read_card
from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.data.pairs import LONG_BUCKETS, long_dev_set, read_pairs, train_valid_split
from attn_demo.decoding.grids import grid_name
from attn_demo.decoding.search import NO_PENALTIES, Penalties, Steer
from attn_demo.evaluation import evaluate
from attn_demo.evaluation.evaluate import (
    TUNING_GRID, TUNING_SLACK, against, eos_argmax_share, faults, is_short, main, paired_bootstrap, ranking_score, repeats,
    score, translate_traced, tune)
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.measures.alignment import ALIGNERS
from attn_demo.measures.heads import every_head
from attn_demo.translator import load_translator
from conftest import DEVICE, tiny_model


def test_score_of_perfect_output_is_100_with_buckets_adding_up():
    sources = ["Go.", "I see the red cat.", "one two three four five six seven eight nine ten eleven twelve"]
    references = ["Va !", "Je vois le chat rouge.", "un deux trois quatre cinq six sept huit neuf dix onze douze"]
    result = score(sources, references, references)
    assert result["bleu"] == 100.0 and result["chrf"] == 100.0 and result["n"] == 3
    assert result["by_length"] == {"1-5": {"n": 2, "bleu": 100.0}, "11-15": {"n": 1, "bleu": 100.0}}
    assert score(sources, ["", "", ""], references)["bleu"] == 0.0


def test_cli_json_on_a_checkpoint(toy_checkpoint, toy_tsv, tmp_path, capsys):
    data = tmp_path / "eval.tsv"
    unknown = "the red cat 😀\tle chat rouge\nthe 😀😀😀😀\tle\n"  # read with <unk>; refused, mostly unknown
    data.write_text(toy_tsv.read_text(encoding="utf-8") + unknown, encoding="utf-8")
    main([str(toy_checkpoint), "--data", str(data), "--beam", "2", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"bleu", "chrf", "n", "by_length"}
    assert result["n"] == len(data.read_text(encoding="utf-8").splitlines()) and result["refused"] == 1
    assert 0.0 <= result["bleu"] <= 100.0


@pytest.mark.parametrize("attention", ["luong-general"])  # the set read and the card's section do not depend on the model
def test_general_scores_the_general_text_set_and_the_card_keeps_it_apart(toy_checkpoint, toy_tsv, monkeypatch, capsys):
    monkeypatch.setattr(evaluate, "GENERAL_SET", toy_tsv)  # FLORES-200's place, here the toy pairs
    main([str(toy_checkpoint), "--general", "--beam", "2", "--card", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == len(read_pairs(toy_tsv))
    card = read_card(toy_checkpoint)
    assert card["general_results"]["bleu"] == result["bleu"] and card["general_results"]["chrf"] == result["chrf"]
    assert f"(`{toy_tsv.name}`: {result['n']} sentences" in (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    assert "test_results" not in card  # the Tatoeba test's scores are another section


def test_paired_bootstrap_scores_both_systems_and_tells_a_real_difference_from_none():
    references = [f"le chat {i} est sur la table rouge" for i in range(40)]
    worse = [f"le chien {i} est la" for i in range(40)]
    better = paired_bootstrap(references, worse, references)
    assert better["bleu"]["score"] == 100.0 and better["bleu"]["baseline"] == round(sacrebleu.corpus_bleu(worse, [references]).score, 2)
    assert better["bleu"]["p"] < 0.01 and better["chrf"]["p"] < 0.01
    half = [r if i % 2 else w for i, (r, w) in enumerate(zip(references, worse))]
    assert paired_bootstrap(worse, half, references)["bleu"]["p"] < 0.01  # worse is as significant as better
    one_more = [references[0], *half[1:]]  # one sentence of 40 mended: it may be chance
    assert paired_bootstrap(one_more, half, references)["bleu"]["p"] > 0.05
    same = paired_bootstrap(half, list(half), references)  # sacreBLEU's own p here is 1/1001
    assert same["bleu"]["score"] == same["bleu"]["baseline"] and same["bleu"]["p"] == same["chrf"]["p"] == 1.0


@pytest.mark.parametrize("attention", ["transformer"])
def test_against_another_model_is_sacrebleu_s_paired_bootstrap_of_both_and_the_card_says_it(
        toy_checkpoint, toy_tsv, tmp_path, toy_tokenizers, capsys):
    others = [tmp_path / "luong", tmp_path / "bahdanau"]
    for other, attention in zip(others, ("luong-general", "bahdanau")):
        save_checkpoint(other, tiny_model(attention), *toy_tokenizers)
    main([str(toy_checkpoint), "--data", str(toy_tsv), "--beam", "2", "--against", *map(str, others), "--json", "--card"])
    result = json.loads(capsys.readouterr().out)
    sources, references = (list(side) for side in zip(*read_pairs(toy_tsv)))
    card = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    assert [compared["model"] for compared in result["against"]] == ["luong", "bahdanau"]
    assert read_card(toy_checkpoint)["test_results"]["against"] == result["against"]  # for card --plateau-from
    for other, compared in zip(others, result["against"]):
        theirs = [t.text for t in load_translator(other).translate_batch(sources, beam_size=2)]
        assert compared["all"]["bleu"]["score"] == result["bleu"]
        assert compared["all"]["bleu"]["baseline"] == score(sources, theirs, references)["bleu"]
        assert all(0 <= compared["all"][metric]["p"] <= 1 for metric in ("bleu", "chrf"))
        assert compared["long"] == {"n": 0, "min_words": 16}  # the toy sentences are short: nothing to compare there
        assert f"| {other.name} | {result['bleu']} vs {compared['all']['bleu']['baseline']} (p " in card  # the card's table
    hypotheses = [t.text for t in load_translator(toy_checkpoint).translate_batch(sources, beam_size=2)]
    every = against(load_translator(others[0]), sources, hypotheses, references, min_words=1, beam=2)
    assert every["long"] == {"n": len(sources), "min_words": 1}  # every sentence long: the whole set's comparison


@pytest.mark.parametrize("attention", ["luong-general"])
@pytest.mark.parametrize("option", ["--long", "--tune", "--marks"])
def test_against_with_anything_but_one_set_of_translations_is_refused(toy_checkpoint, option, capsys):
    with pytest.raises(SystemExit):
        main([str(toy_checkpoint), option, "--against", str(toy_checkpoint)])
    assert "--against compares the translations of one set" in capsys.readouterr().err


@pytest.mark.parametrize("attention", ["transformer", "luong-general", "none"])
def test_heads_measure_the_bleu_of_each_head_turned_off_on_the_first_sentences_and_the_card_shows_it(
        toy_checkpoint, toy_tsv, tmp_path, capsys):
    if toy_checkpoint.name != "tiny-transformer":
        with pytest.raises(SystemExit, match="is no Transformer: it has no heads"):
            main([str(toy_checkpoint), "--data", str(toy_tsv), "--heads"])
        return
    translator = load_translator(toy_checkpoint)
    sources = [en for en, _ in read_pairs(toy_tsv)]
    own = [t.text for t in translator.translate_batch(sources, beam_size=2)]
    data = tmp_path / "own.tsv"  # its own translations as references: BLEU 100 with every head, less where one matters
    data.write_text("".join(f"{en}\t{fr}\n" for en, fr in zip(sources, own)), encoding="utf-8")
    main([str(toy_checkpoint), "--data", str(data), "--beam", "2", "--heads", "--limit", "12", "--json", "--card"])
    result = json.loads(capsys.readouterr().out)
    assert (result["bleu"], result["n"], result["of"], result["refused"]) == (100.0, 12, len(sources), 0)
    assert len(result["heads"]) == 6 and all(0 <= v["eos_share"] <= 1 and 0 < v["confidence"] <= 1
                                             for v in result["heads"].values())
    for layer, head in every_head(translator.config):
        without = translator.translate_batch(sources[:12], beam_size=2, steer=Steer(heads_off=frozenset({(layer, head)})))
        measured = result["heads"][grid_name(layer, head)]
        assert measured["bleu_without"] == pytest.approx(score(sources[:12], [t.text for t in without], own[:12])["bleu"],
                                                         abs=0.011)
        assert measured["bleu_cost"] == pytest.approx(100.0 - measured["bleu_without"], abs=1e-9)
    assert max(v["bleu_cost"] for v in result["heads"].values()) > 10  # some head matters to this model
    card = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    row = result["heads"]["layer 1, head 2"]
    assert "### What each head does" in card and f"the first 12 of the {len(sources)} sentences of own.tsv" in card
    assert f"| layer 1, head 2 | {row['confidence']:.2f} | {row['eos_share']:.2f} | {row['bleu_without']:.2f} | " \
           f"{row['bleu_cost']:+.2f} |" in card and "--heads --limit 12 --card" in card
    assert read_card(toy_checkpoint)["heads"]["heads"] == result["heads"] and read_card(toy_checkpoint)["heads"]["n"] == 12
    for limit in (["--limit", "0", "--heads"], ["--limit", "5"]):  # no sentence, or a limit for a mode without one
        with pytest.raises(SystemExit):
            main([str(toy_checkpoint), "--data", str(data), *limit])
    assert "--limit N takes the first N pairs" in capsys.readouterr().err


def test_penalties_named_on_the_command_line_decode_and_the_rest_are_the_card_s(toy_checkpoint, toy_tsv, capsys):
    main([str(toy_checkpoint), "--data", str(toy_tsv), "--beam", "2", "--repeat-penalty", "1", "--stepwise", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["penalties"] == {"length": None, "coverage": 0.0, "repeat": 1.0, "stepwise": True}
    sources, references = zip(*read_pairs(toy_tsv))
    searched = load_translator(toy_checkpoint).translate_batch(list(sources), beam_size=2,
                                                               penalties=Penalties(repeat=1.0, stepwise=True))
    assert result["bleu"] == score(sources, [t.text for t in searched], list(references))["bleu"]


@pytest.mark.parametrize("attention", ["none"])  # the CLI and the card do not depend on the model type
def test_cli_long_scores_every_bucket_and_the_card_keeps_the_curve_apart(toy_checkpoint, toy_tsv, capsys):
    main([str(toy_checkpoint), "--data", str(toy_tsv), "--long", "--per-bucket", "2", "--beam", "1", "--json", "--card"])
    curve = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert list(curve["buckets"]) == [f"{low}-{high}" for low, high in LONG_BUCKETS]
    assert all(b["n"] == 2 and 0 <= b["bleu"] <= 100 and 0 <= b["chrf"] <= 100 for b in curve["buckets"].values())
    translator = load_translator(toy_checkpoint)
    assert translator.length_curve == curve["buckets"] and translator.metrics == {}  # no whole-test-set score yet
    text = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    assert all(f"| {bucket} | 2 | {v['bleu']} | {v['chrf']} |" in text for bucket, v in curve["buckets"].items())


def test_the_dev_set_is_the_validation_split_s_long_sentences():
    pool = [(" ".join(["word"] * (1 + i % 15)) + f" {i}.", f"mot {i}.") for i in range(300)]  # 2–16 words each
    test = [pool[0]]
    dev = long_dev_set(pool, test, n_valid=60, seed=2)
    valid = train_valid_split(pool, test, 60, 2)[1]
    assert dev and dev == [p for p in valid if len(p[0].split()) >= 11]  # never in the training split


@pytest.mark.parametrize("attention", ["none"])  # the CLI and the card do not depend on the model type
def test_cli_dev_scores_the_long_validation_sentences_and_the_card_keeps_them_apart(toy_checkpoint, toy_tsv, tmp_path, capsys):
    pool = tmp_path / "pool.tsv"
    long = [(f"I see the red cat and the blue dog and the {c} boat {i}.", f"je vois le chat rouge {i}.") for i, c in
            enumerate(("green", "black", "white") * 10)]
    pool.write_text(toy_tsv.read_text(encoding="utf-8") + "".join(f"{en}\t{fr}\n" for en, fr in long), encoding="utf-8")
    test = tmp_path / "test.tsv"
    test.write_text("the red cat\tle chat rouge\n", encoding="utf-8")
    main([str(toy_checkpoint), "--dev", "--data", str(test), "--train-pool", str(pool), "--n-valid", "40", "--beam", "1",
          "--json", "--card"])
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    expected = long_dev_set(read_pairs(pool), read_pairs(test), n_valid=40)
    assert result["n"] == len(expected) > 0 and list(result["by_length"]) == ["11-15"]
    card = ModelCard.load(toy_checkpoint / "README.md")
    assert "test_results" not in read_card(toy_checkpoint)  # kept apart from the test set's scores
    assert "pairs of 11 or more English words" in card.text and f"**BLEU {result['bleu']}**" in card.text


@pytest.mark.parametrize("attention", ["bahdanau"])  # the CLI and the card do not depend on the model type
def test_cli_examples_translates_what_the_page_offers_greedy_and_with_the_beam_into_the_card(toy_checkpoint, capsys):
    main([str(toy_checkpoint), "--examples", "--beam", "3", "--json", "--card"])
    examples = json.loads(capsys.readouterr().out.splitlines()[-1])
    translator = load_translator(toy_checkpoint)
    rows = examples["translations"]
    assert [row["source"] for row in rows] == [*EXAMPLES, LONG_EXAMPLE] and examples["beam"] == 3
    assert rows[0]["greedy"] == translator.translate(EXAMPLES[0]).text
    assert rows[0]["beam"] == translator.translate(EXAMPLES[0], beam_size=3).text
    text = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    beam = "same" if rows[1]["beam"] == rows[1]["greedy"] else rows[1]["beam"]
    assert f"| {EXAMPLES[1]} | {rows[1]['greedy']} | {beam} |" in text and "and beam 3:" in text


def write_gold(folder):
    """Toy gold links ('i see the red cat .' crosses red/rouge and cat/chat); the model reads the
    emoji of the second sentence as <unk>, which no word alignment can trace back, so it is skipped.
    In the toy corpus "i see" always comes with "je vois", so no aligner can tell which goes with
    which: aligner scores are only range-checked."""
    folder.mkdir()
    for split in ("test", "dev"):
        (folder / f"{split}.e").write_text("i see the red cat .\nthe red cat 😀\n", encoding="utf-8")
        (folder / f"{split}.f").write_text("je vois le chat rouge .\nle chat rouge\n", encoding="utf-8")
        links = ["1 1 1 S", "1 2 2 S", "1 3 3 S", "1 4 5 S", "1 5 4 S", "1 6 6 P", "2 1 1 S", "2 2 3 S", "2 3 2 S", "2 4 3 P"]
        (folder / f"{split}.wa.nonullalign").write_text("\n".join(links) + "\n")
    return folder


def test_cli_alignments_json_and_card(toy_checkpoint, toy_tsv, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("attn_demo.measures.alignment.model_input", lambda words: words)  # the toy tokenizers know no capitals
    gold = write_gold(tmp_path / "gold")
    command = [str(toy_checkpoint), "--alignments", str(gold), "--aligner-pairs", str(toy_tsv), "--json", "--card"]
    if toy_checkpoint.name == "tiny-none":  # the baseline has no α to align
        with pytest.raises(SystemExit):
            main(command)
        assert "no attention" in capsys.readouterr().err
        return
    main(command)
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["n"] == 1 and result["skipped"] == 1
    assert set(result["aer"]) == set(ALIGNERS) and set(result["precision"]) == set(result["recall"]) == set(ALIGNERS)
    assert all(0.0 <= value <= 1.0 for metric in ("aer", "precision", "recall") for value in result[metric].values())
    assert set(result["aligner"]) == {"eflomal forward", "eflomal reverse", "eflomal intersection", "eflomal grow-diag-final-and"}
    assert all(set(s) == {"aer", "precision", "recall"} and 0.0 <= s["aer"] <= 1.0 for s in result["aligner"].values())
    card = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    assert "## Does attention align words?" in card and "--alignments" in card
    assert load_translator(toy_checkpoint, device=DEVICE).alignment_scores["aer"] == result["aer"]  # what the page reads
    if toy_checkpoint.name != "tiny-transformer":
        assert "heads" not in result
        return
    heads, config = result["heads"], load_translator(toy_checkpoint).config  # 2 layers of 3 heads, each with a mean
    assert list(heads["trial"]) == list(heads["test"]) and len(heads["trial"]) == 2 * (3 + 1)
    assert "layer 2, mean of heads" in heads["trial"] and "layer 1, head 3" in heads["test"]
    best = min(heads["trial"].values())
    chosen = grid_name(heads["chosen"]["layer"], heads["chosen"]["head"])
    assert heads["trial"][chosen] == best and (config.shown_layer, config.shown_head) == (heads["chosen"]["layer"], heads["chosen"]["head"])
    assert f"the page shows **{chosen}**" in card and f"| {chosen} | {best} |" in card


def test_cli_takes_one_mode_at_a_time(toy_checkpoint, tmp_path):
    with pytest.raises(SystemExit):
        main([str(toy_checkpoint), "--long", "--alignments", str(tmp_path)])


def test_bleu_needs_no_aligner_and_alignments_without_one_say_what_to_install(toy_checkpoint, toy_tsv, monkeypatch, capsys):
    """After `pip install -r requirements.txt` alone, eflomal is missing: BLEU still works, and
    --alignments says in one line what to install."""
    monkeypatch.setitem(sys.modules, "eflomal", None)  # import eflomal now raises ImportError
    monkeypatch.delitem(sys.modules, "attn_demo.measures.aligner", raising=False)
    main([str(toy_checkpoint), "--data", str(toy_tsv), "--json"])
    assert 0.0 <= json.loads(capsys.readouterr().out)["bleu"] <= 100.0
    if load_translator(toy_checkpoint).config.attention == "none":
        return  # refused earlier, for having no α
    with pytest.raises(SystemExit):
        main([str(toy_checkpoint), "--alignments", str(toy_tsv.parent)])
    assert "pip install -r requirements-dev.txt" in capsys.readouterr().err


def test_cli_alignments_with_attribution_score_its_links_beside_alpha(toy_checkpoint, toy_tsv, tmp_path, capsys, monkeypatch):
    """The baseline too: it has no α, but an attribution."""
    monkeypatch.setattr("attn_demo.measures.alignment.model_input", lambda words: words)  # the toy tokenizers know no capitals
    gold = write_gold(tmp_path / "gold")
    main([str(toy_checkpoint), "--alignments", str(gold), "--aligner-pairs", str(toy_tsv), "--attribution",
          "input-x-gradient", "--json", "--card"])
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    attribution_rules = {"input-x-gradient argmax", "input-x-gradient intersect"}
    expected = attribution_rules if toy_checkpoint.name == "tiny-none" else set(ALIGNERS) | attribution_rules
    assert set(result["aer"]) == expected and result["n"] == 1
    assert all(0.0 <= result["aer"][rule] <= 1.0 for rule in attribution_rules)
    card = (toy_checkpoint / "README.md").read_text(encoding="utf-8")
    assert "| input-x-gradient, `argmax` |" in card


def test_cli_keeps_attribution_links_for_a_run_started_again_and_refuses_a_file_of_other_weights(
        toy_checkpoint, toy_tsv, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("attn_demo.measures.alignment.model_input", lambda words: words)  # the toy tokenizers know no capitals
    kept = tmp_path / "runs" / "links.jsonl"  # its folder made for it
    command = [str(toy_checkpoint), "--alignments", str(write_gold(tmp_path / "gold")), "--aligner-pairs", str(toy_tsv),
               "--attribution", "input-x-gradient", "--json", "--keep-links", str(kept)]
    main(command)
    first = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [json.loads(line)["sentence"] for line in kept.read_text().splitlines()] == [0]  # the one sentence read
    main(command)
    again = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert all(again[metric] == first[metric] for metric in ("aer", "precision", "recall"))  # the aligner's vary
    kept.write_text(kept.read_text().replace(json.loads(kept.read_text())["weights"], "0" * 16))
    with pytest.raises(SystemExit):
        main(command)
    assert "holds the links of other weights" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # nothing to keep without an attribution
        main([str(toy_checkpoint), "--alignments", "--keep-links", str(kept)])
    assert "give it with --alignments --attribution" in capsys.readouterr().err


def test_the_share_of_steps_resting_on_eos_counts_every_step_of_every_translation(toy_checkpoint, toy_tsv, attention):
    translator = load_translator(str(toy_checkpoint))
    sources = [en for en, _ in read_pairs(toy_tsv)][:12]
    translations, refused = translate_traced(translator, sources, 2)
    if attention == "none":
        assert eos_argmax_share(translations) is None
        return
    alphas = [t.attention for t in translations]
    resting = [[row.argmax() == len(row) - 1 for row in alpha] for alpha in alphas]  # by hand, step by step
    assert eos_argmax_share(translations) == sum(map(sum, resting)) / sum(map(len, resting))
    assert eos_argmax_share([None, *translations]) == eos_argmax_share(translations)  # a refused input has no steps


@pytest.mark.parametrize("attention", ["transformer"])
def test_translations_scored_by_their_text_alone_leave_a_transformer_s_heads_out(toy_checkpoint, toy_tsv):
    translator = load_translator(str(toy_checkpoint))
    sources = [en for en, _ in read_pairs(toy_tsv)][:12]
    traced, _ = translate_traced(translator, sources, 2)
    bare, _ = translate_traced(translator, sources, 2, heads=False)
    assert all(t.heads is not None for t in traced) and all(t.heads is None for t in bare)
    assert [t.text for t in bare] == [t.text for t in traced] == evaluate.translate_all(translator, sources, 2)[0]


def test_an_output_repeats_when_a_word_pair_comes_back_more_often_than_in_the_reference():
    assert repeats("avant le petit-déjeuner avant le petit-déjeuner.", "Il nage avant le petit-déjeuner.")
    assert not repeats("Je pense, donc je suis.", "Je pense, donc je suis.")  # "je" twice, but no pair twice
    assert not repeats("Il faut que tu que tu viennes", "Il faut que tu que tu viennes")  # the reference has it too
    assert repeats("Le chat et le Chat et le chat", "Le chat et le chien")  # lowercased words


def test_an_output_is_short_under_four_fifths_of_the_reference_s_words_and_faults_count_either():
    assert is_short("un deux trois", "un deux trois quatre") and not is_short("un deux trois quatre", "a b c d e")
    result = faults(["un deux un deux", "un", "un deux trois quatre cinq"], ["un deux", "un deux trois", "a b c d e"])
    assert (result["n"], result["repeat"], result["short"], result["repeat_or_short"]) == (3, round(1 / 3, 4), round(1 / 3, 4), round(2 / 3, 4))


def test_the_faults_of_long_sentences_with_only_trained_words_are_counted_apart_where_the_words_are_known():
    sources = ["the cat sat on the mat " * 3, "the zebra sat on the mat " * 3, "the cat sat"]
    references = ["le chat " * 9, "le zèbre " * 9, "le chat"]
    hypotheses = ["le chat " * 9, "le", "le"]  # the long sentence with an untrained word is short
    result = score(sources, hypotheses, references, fault_min_words=16, known=frozenset({"the", "cat", "sat", "on", "mat"}))
    assert result["faults"]["n"] == 2 and result["faults"]["repeat_or_short"] == 0.5
    assert (result["faults"]["seen_n"], result["faults"]["seen_repeat_or_short"]) == (1, 0.0)
    assert "seen_n" not in score(sources, hypotheses, references, fault_min_words=16)["faults"]


def test_tuning_ranks_each_sentence_s_n_best_as_the_search_would_and_keeps_a_fair_setting(toy_checkpoint, monkeypatch, tmp_path):
    translator = load_translator(toy_checkpoint, device=DEVICE)
    pairs = [("I see the red cat.", "je vois le chat rouge."), ("the blue dog", "le chien bleu"),
             ("I see the black truck.", "je vois le camion noir.")]
    result = tune(translator, pairs, beam=3)
    expected = len(TUNING_GRID["length"]) * (1 if toy_checkpoint.name == "tiny-none" else
                                             len(TUNING_GRID["coverage"]) * len(TUNING_GRID["repeat"]))
    assert len(result["rows"]) == expected and result["plain"]["penalties"] == dataclasses.asdict(NO_PENALTIES)
    kept, plain = result["kept"], result["plain"]
    assert kept["bleu"] >= plain["bleu"] - TUNING_SLACK and kept["repeat_or_short"] <= plain["repeat_or_short"]
    for penalties in (Penalties(length=0.6, coverage=0.2, repeat=0.3), Penalties(length=0.6, repeat=1.0, stepwise=True)):
        # re-ranking offline is what the search ranks its finished hypotheses by
        for hypothesis in translator.translate(pairs[0][0], beam_size=3, n_best=3, penalties=penalties):
            assert math.isclose(ranking_score(hypothesis, penalties), hypothesis.score, rel_tol=1e-4, abs_tol=1e-4)
    # the card records the setting, and the translator decodes with it from then on
    monkeypatch.setattr("attn_demo.evaluation.evaluate.tuning_set", lambda *args: pairs)
    main([str(toy_checkpoint), "--tune", "--beam", "3", "--card", "--json"])
    assert dataclasses.asdict(load_translator(toy_checkpoint, device=DEVICE).penalties) == kept["penalties"]
    assert "A beam search ranks what it finishes by" in (toy_checkpoint / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", [["--long"], ["--examples"], ["--tune"], ["--marks"], ["--alignments"], ["--heads"]])
def test_hyps_with_a_mode_that_writes_no_single_set_is_refused_rather_than_ignored(mode, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["no/such/model", *mode, "--hyps", str(tmp_path / "hyps.txt")])
    assert "--hyps writes the translations of one set" in capsys.readouterr().err
    assert not (tmp_path / "hyps.txt").exists()
