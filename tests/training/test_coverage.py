import json

from attn_demo import load_translator
from attn_demo.checkpoints.folder import TRAINING_DATA, read_training_data
from attn_demo.data.pairs import encode_pairs, read_pairs, train_valid_split
from attn_demo.models.tokenizer import Tokenizer
from attn_demo.training.coverage import main, training_data, unseen_words, words


def test_words_are_lower_cased_letters_with_their_inner_apostrophes():
    assert words("Don’t go to the Cinema, Tom! It's 9 o'clock.") == ["don't", "go", "to", "the", "cinema", "tom", "it's", "o'clock"]


def test_the_facts_count_pairs_lengths_and_every_word_once():
    english = ["I see the red cat.", " ".join(["word"] * 16), "The cat."]
    facts = training_data(english, "toy.tsv")
    assert facts == {"dataset": "toy.tsv", "pairs": 3, "mean_english_words": round((5 + 16 + 2) / 3, 2),
                     "pairs_16_plus_words": 1, "english_words": ["cat", "i", "red", "see", "the", "word"]}


def test_unseen_words_are_named_once_in_the_order_they_come():
    known = frozenset(["we", "are", "going", "to", "the", "tomorrow", "evening"])
    assert unseen_words("We are going to the cinema, the CINEMA, tomorrow evening with Zoé.", known) == ["cinema", "with", "zoé"]
    assert unseen_words("We are going.", known) == []


def test_the_cli_records_the_pairs_trained_on_and_the_checkpoint_loads_them(toy_checkpoint, toy_tsv, tmp_path):
    test = tmp_path / "test.tsv"
    test.write_text("the red cat\tle chat rouge\n", encoding="utf-8")
    assert load_translator(toy_checkpoint).training_data is None  # a checkpoint without the file still loads
    train, _ = train_valid_split(read_pairs(toy_tsv), read_pairs(test), 10, 1)
    tokenizers = (Tokenizer(toy_checkpoint / "source.model"), Tokenizer(toy_checkpoint / "target.model"))
    short = min(len(tokenizers[0].encode(en)) for en, _ in train if en.startswith("I see")) + 1  # their EOS too
    main([str(toy_checkpoint), "--train-pool", str(toy_tsv), "--test-set", str(test), "--n-valid", "10", "--max-len", str(short)])
    kept = encode_pairs(train, *tokenizers, short)[0]
    facts = json.loads((toy_checkpoint / TRAINING_DATA).read_text(encoding="utf-8"))
    assert facts["pairs"] == len(kept) < len(train) and facts["dataset"] == toy_tsv.name
    loaded = load_translator(toy_checkpoint).training_data
    assert loaded == read_training_data(toy_checkpoint)
    assert loaded["english_words"] == frozenset(words(" ".join(en for en, _ in kept))) and "see" in loaded["english_words"]
