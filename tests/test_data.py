import gzip

from attn_demo.data import batches, collate, read_pairs, train_valid_split


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
