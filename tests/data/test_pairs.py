import gzip

from attn_demo.models.config import ModelConfig
import random

from attn_demo.data.pairs import (
    CONNECTIVES, LONG_BUCKETS, TEST_SET, ClauseJoiner, always_capitalised, batches, clause_join, clause_joinable,
    collate, encode_pairs, join_examples, long_test_set, read_pairs, train_valid_split)
from attn_demo.models.tokenizer import Tokenizer, check_text, sampling_seed
from conftest import ROOT, toy_pairs


def test_read_pairs_normalises_whitespace_and_reads_gzip(tmp_path):
    text = "Hello  there.\tBonjour\u00a0!\n\tlonely\nbad line\nGo.\tVa !\n"
    (tmp_path / "p.tsv").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "p.tsv.gz", "wt", encoding="utf-8") as f:
        f.write(text)
    expected = [("Hello there.", "Bonjour !"), ("Go.", "Va !")]
    assert read_pairs(tmp_path / "p.tsv") == read_pairs(tmp_path / "p.tsv.gz") == expected


def test_split_drops_test_english_and_keeps_validation_english_unseen():
    pool = [(f"sentence {i % 50}", f"phrase {i}") for i in range(200)]  # 4 translations per English sentence
    test = [("sentence 7", "x"), ("sentence 8", "y")]
    train, valid = train_valid_split(pool, test, n_valid=20, seed=3)
    train_english, valid_english = {en for en, _ in train}, {en for en, _ in valid}
    assert not ({"sentence 7", "sentence 8"} & (train_english | valid_english))
    assert not (train_english & valid_english)
    assert len(valid) == 20 and len(train) + len(valid) == 200 - 8
    assert train_valid_split(pool, test, 20, seed=3) == (train, valid)


def test_batches_cover_every_example_once_within_the_token_budget():
    examples = [([5] * (1 + i % 7) + [3], [6] * (1 + i % 5) + [3]) for i in range(100)]
    seen = 0
    for src, lengths, y_in, y_out in batches(examples, max_tokens=40, shuffle=True, seed=1):
        assert src.size(0) * max(src.size(1), y_out.size(1)) <= 40
        seen += src.size(0)
    assert seen == 100


def test_collate_shifts_target_right_behind_bos():
    src, lengths, y_in, y_out = collate([([7, 8, 3], [9, 3]), ([7, 3], [10, 11, 3])])
    assert lengths.tolist() == [3, 2]
    assert src.tolist() == [[7, 8, 3], [7, 3, 0]]
    assert y_in.tolist() == [[2, 9, 0], [2, 10, 11]]
    assert y_out.tolist() == [[9, 3, 0], [10, 11, 3]]


def test_long_test_set_joins_test_pairs_in_order_into_every_bucket_deterministically():
    test = [((f"w{i} " * (1 + i % 9)).strip() + ".", f"fr{i}") for i in range(300)]  # 1–9 words each
    index = {en: fr for en, fr in test}
    buckets = long_test_set(test, per_bucket=20, seed=4)
    assert list(buckets) == [f"{low}-{high}" for low, high in LONG_BUCKETS]
    for (low, high), inputs in zip(LONG_BUCKETS, buckets.values()):
        assert len(inputs) == 20
        for en, fr in inputs:
            assert low <= len(en.split()) <= high
            parts = [p + "." for p in en.split(". ")]
            parts[-1] = parts[-1][:-1]
            assert " ".join(index[p] for p in parts) == fr  # French joined in the same order
    assert long_test_set(test, per_bucket=20, seed=4) == buckets != long_test_set(test, per_bucket=20, seed=5)


def test_every_long_test_input_fits_the_shipped_models():
    """The limits (characters, pieces) admit the whole long-sentence test set: 60-word inputs pass."""
    inputs = [en for bucket in long_test_set(read_pairs(TEST_SET)).values() for en, _ in bucket]
    for name in ("bahdanau-en-fr", "luong-en-fr"):
        tok = Tokenizer(ROOT / "checkpoints" / name / "source.model")
        limit = ModelConfig.from_json(ROOT / "checkpoints" / name / "config.json").max_source_pieces
        assert max(len(tok.encode(check_text(en))) + 1 for en in inputs) <= limit


def test_joined_examples_are_real_pairs_in_order_at_the_rate_asked_and_reproducible():
    examples = [([10 + i, 3], [500 + i, 501 + i, 3]) for i in range(2000)]  # each id says which pair it is
    epoch = join_examples(examples, prob=0.3, max_pairs=4, max_len=7, seed=5)
    assert len(epoch) == len(examples) and epoch == join_examples(examples, 0.3, 4, 7, seed=5)
    assert epoch != join_examples(examples, 0.3, 4, 7, seed=6)
    joined = 0
    for (src, tgt), original in zip(epoch, examples):
        assert src[-1] == tgt[-1] == 3 and 3 not in src[:-1] + tgt[:-1] and len(src) <= 7 and len(tgt) <= 7
        pairs = [examples[s - 10] for s in src[:-1]]
        assert pairs[0] == original and tgt == [t for p in pairs for t in p[1][:-1]] + [3]
        joined += len(pairs) > 1
    assert abs(joined / len(examples) - 0.3) < 4 * (0.3 * 0.7 / len(examples)) ** 0.5  # 4 standard errors
    assert {len(s) - 1 for s, _ in epoch} == {1, 2, 3}  # up to 4 pairs asked, but 7 target pieces hold 3


def test_joining_ids_is_encoding_the_joined_text(toy_tokenizers):
    """So training joins encoded pairs and the test set joins texts, and both mean the same input."""
    src_tok, tgt_tok = toy_tokenizers
    pairs = toy_pairs()[::7]
    epoch = join_examples(encode_pairs(pairs, src_tok, tgt_tok, 50)[1], prob=1.0, max_pairs=2, max_len=50, seed=0)
    for (en, fr), (src, tgt) in zip(pairs, epoch):
        texts = [(en + " " + other_en, fr + " " + other_fr) for other_en, other_fr in pairs]
        assert (src, tgt) in [(src_tok.encode(e) + [3], tgt_tok.encode(f) + [3]) for e, f in texts]


def test_always_capitalised_words_are_those_never_written_in_lower_case_inside_a_sentence():
    sentences = ["Tom and I saw the film.", "The film bored Tom.", "She said the truth.", "Where is Paris?", "I like paris hats."]
    assert always_capitalised(sentences) == {"Tom", "I"}  # "The" is lower case inside a sentence, "Paris" once too


def test_statements_are_joined_into_one_sentence_with_names_kept_and_que_elided():
    names_en, names_fr = {"Tom", "I"}, {"Tom"}
    pairs = [("It is late.", "Il est tard."), ("Tom is tired.", "Tom est fatigué."), ("I stay home.", "Je reste chez moi."),
             ("He left.", "Il est parti.")]
    because, but, so = (next(c for c in CONNECTIVES if c[0] == word) for word in (" because", ", but", ", so"))
    assert clause_join(pairs[:3], [but, so], names_en, names_fr) == (
        "It is late, but Tom is tired, so I stay home.", "Il est tard, mais Tom est fatigué, alors je reste chez moi.")
    assert clause_join([pairs[0], pairs[3]], [because], names_en, names_fr) == (
        "It is late because he left.", "Il est tard parce qu'il est parti.")
    assert clause_join([pairs[3], pairs[1]], [because], names_en, names_fr)[1] == "Il est parti parce que Tom est fatigué."


def test_only_single_plain_statements_are_joined_as_clauses():
    assert clause_joinable("It is late.", "Il est tard.")
    for en, fr in [("Is it late?", "Est-il tard ?"), ("Stop. Go.", "Arrête. Va."), ('He said "no".', "Il a dit « non »."),
                   ("Run!", "Cours !"), ("It is late.", "Il est tard !")]:
        assert not clause_joinable(en, fr), en


def test_a_joiner_with_alpha_draws_the_joined_sentences_pieces(toy_tokenizers):
    """The clause-joined examples of an epoch with subword regularization are drawn too: the same sentences as the
    best segmentation's, in other pieces."""
    src_tok, tgt_tok = toy_tokenizers
    best, drawn = (ClauseJoiner(toy_pairs(), src_tok, tgt_tok, max_len=200, alpha=alpha) for alpha in (0.0, 0.1))
    sampling_seed(0)
    pairs = [(best.example(random.Random(i)), drawn.example(random.Random(i))) for i in range(10)]
    assert all(src_tok.decode(a[0]) == src_tok.decode(b[0]) and tgt_tok.decode(a[1]) == tgt_tok.decode(b[1])
               for a, b in pairs)
    assert any(a != b for a, b in pairs)


def test_clause_joined_examples_replace_a_seeded_share_of_an_epoch(toy_tokenizers):
    pairs = toy_pairs()
    src_tok, tgt_tok = toy_tokenizers
    joiner = ClauseJoiner(pairs, src_tok, tgt_tok, max_len=60)
    assert joiner.pairs == [p for p in pairs if p[0].endswith(".")]  # "the red cat" has no full stop: not a statement
    examples = encode_pairs(pairs, src_tok, tgt_tok, 60)[1]
    epoch = joiner.replace(examples, 0.5, seed=2)
    assert epoch == joiner.replace(examples, 0.5, seed=2) != joiner.replace(examples, 0.5, seed=3)
    assert joiner.replace(examples, 0.0, seed=2) == examples
    longest = max(len(s) for s, _ in examples)
    joined = [(s, t) for s, t in epoch if (s, t) not in examples]
    assert 0.3 * len(examples) < len(joined) < 0.7 * len(examples)
    assert all(len(s) > longest and s[-1] == t[-1] == src_tok.sp.eos_id() and s.count(s[-1]) == 1 for s, t in joined)
    rng = random.Random(0)
    for en, fr in (joiner.sentence(rng) for _ in range(20)):
        assert en.startswith("I see the ") and en.endswith(".") and en.count(".") == 1
        used = [c for c in CONNECTIVES if c[0] + " " in en]
        assert used and all(c[1] in fr for c in used) and fr.startswith("je vois") and " Je " not in fr, (en, fr)
    short = ClauseJoiner(pairs, src_tok, tgt_tok, max_len=12)  # no two statements fit
    assert short.replace(examples, 1.0, seed=2) == examples
