"""Tatoeba pairs: reading, test-set exclusion, the validation split, joined long examples
(for training and for the long-sentence test set), clause-level joins, length-bucketed batches."""
import gzip
import random
import re
from collections import Counter
from pathlib import Path

import torch

from attn_demo.data.datasets import FLORES, TATOEBA, require

TRAIN_POOL = TATOEBA.path("fra-eng-2019-04-07.tsv.gz")  # in the data home (attn_demo.data.datasets)
TEST_SET = TATOEBA.path("tatoeba-test-v2020-07-28.eng-fra.tsv")
# general text, test only (never trained or tuned on): Wikinews, Wikijunior and Wikivoyage sentences, mean 21.6 words
GENERAL_SET = FLORES.path("flores200-devtest.eng-fra.tsv")
LONG_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 50), (51, 60))  # English words


def normalise(text: str) -> str:
    return " ".join(text.split())


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """`english<TAB>french` lines (plain or .gz) → whitespace-normalised pairs (datasets.MissingData if absent)."""
    require(path)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        rows = (line.rstrip("\n").split("\t") for line in f)
        return [(normalise(r[0]), normalise(r[1])) for r in rows if len(r) >= 2 and r[0].strip() and r[1].strip()]


def train_valid_split(pool, test, n_valid: int, seed: int):
    """Drop every pool pair whose English side is in the test set, then hold out whole English
    sentences (with all their translations) until n_valid pairs, so validation English is unseen."""
    test_english = {en for en, _ in test}
    pool = [p for p in pool if p[0] not in test_english]
    translations = Counter(en for en, _ in pool)
    english = sorted(translations)
    random.Random(seed).shuffle(english)
    valid_english, n = set(), 0
    for en in english:
        if n >= n_valid:
            break
        valid_english.add(en)
        n += translations[en]
    train = [p for p in pool if p[0] not in valid_english]
    valid = [p for p in pool if p[0] in valid_english]
    return train, valid


DEV_MIN_WORDS = 11  # the long natural sentences of the validation split


def long_dev_set(pool, test, n_valid: int = 2000, seed: int = 1) -> list[tuple[str, str]]:
    """The validation split's pairs of DEV_MIN_WORDS or more English words: long sentences written
    as one, never trained on by any model trained with that split (train's defaults: every shipped
    one). Holding out the pool's longest pairs instead would score the shipped models, and every
    model continued from them, on sentences they were trained on."""
    return [p for p in train_valid_split(pool, test, n_valid, seed)[1] if len(p[0].split()) >= DEV_MIN_WORDS]


def long_test_set(test_pairs, per_bucket: int = 200, seed: int = 0) -> dict[str, list[tuple[str, str]]]:
    """Inputs of every length bucket of LONG_BUCKETS, built from test pairs only.

    Tatoeba sentences are short (6.6 English words on average), so long inputs are made the way
    a reader meets them: consecutive sentences. For each input a length L is drawn uniformly in
    the bucket and random test pairs are joined in order (English with English, French with
    French, by a space) until the English has at least L words; a join that overshoots the
    bucket is drawn again. Seeded, so every run scores the same inputs."""
    rng = random.Random(seed)
    words = [len(en.split()) for en, _ in test_pairs]
    buckets = {}
    for low, high in LONG_BUCKETS:
        inputs = []
        while len(inputs) < per_bucket:
            target, chosen, n = rng.randint(low, high), [], 0
            while n < target:
                chosen.append(rng.randrange(len(test_pairs)))
                n += words[chosen[-1]]
            if n <= high:
                inputs.append((" ".join(test_pairs[i][0] for i in chosen), " ".join(test_pairs[i][1] for i in chosen)))
        buckets[f"{low}-{high}"] = inputs
    return buckets


def encode_pairs(pairs, src_tok, tgt_tok, max_len: int, alpha: float = 0.0) -> tuple[list, list]:
    """Pairs → the pairs trained on and their (src ids + EOS, tgt ids + EOS): pairs longer than
    max_len pieces are dropped; alpha > 0 draws each side's segmentation (Tokenizer.encode)."""
    eos = src_tok.sp.eos_id()
    kept, encoded = [], []
    for en, fr in pairs:
        s, t = src_tok.encode(en, alpha) + [eos], tgt_tok.encode(fr, alpha) + [eos]
        if len(s) <= max_len and len(t) <= max_len:
            kept.append((en, fr))
            encoded.append((s, t))
    return kept, encoded


def join_examples(examples, prob: float, max_pairs: int, max_len: int, seed: int) -> list:
    """One epoch of training examples, each replaced with probability prob by itself followed by
    1 to max_pairs − 1 random others, joined in order: English after English, French after French.

    The models never saw a long input otherwise (121 of 167,130 Tatoeba pairs have more than 20
    English words) and fall apart past the lengths they were trained on. Joining ids without the
    inner EOS is what SentencePiece makes of the texts joined by a space (pieces never cross a
    space). A join stops before either side would pass max_len pieces (EOS included). Seeded: the
    same seed gives the same epoch, so a resumed run sees what the interrupted one would have."""
    rng = random.Random(seed)
    epoch = []
    for src, tgt in examples:
        if rng.random() < prob:
            eos = src[-1]
            src, tgt = src[:-1], tgt[:-1]
            for _ in range(rng.randint(2, max_pairs) - 1):
                s, t = examples[rng.randrange(len(examples))]
                if len(src) + len(s) > max_len or len(tgt) + len(t) > max_len:
                    break
                src, tgt = src + s[:-1], tgt + t[:-1]
            src, tgt = src + [eos], tgt + [eos]
        epoch.append((src, tgt))
    return epoch


# Connectives that join two statements into one sentence in both languages without changing the
# second clause's tense or mood ("when" / "quand" is left out: French puts a future after it where
# English keeps the present, and "although" / "bien que" takes the subjunctive).
CONNECTIVES = ((", and", ", et"), (", but", ", mais"), (", so", ", alors"), (" because", " parce que"))
FRENCH_VOWELS = "aeiouyàâäéèêëîïôöùûü"


def always_capitalised(sentences) -> set[str]:
    """Words written with a capital inside sentences and never in lower case ("Tom", "I", "Paris"):
    the words a clause may start with that must keep their capital after a connective."""
    upper, lower = set(), set()
    for sentence in sentences:
        for word in re.findall(r"[^\W\d_]+", sentence)[1:]:
            (upper if word[0].isupper() else lower).add(word)
    return {w for w in upper if w[0].lower() + w[1:] not in lower}


def clause_joinable(en: str, fr: str) -> bool:
    """One plain statement a side: ends with a full stop, no other sentence end inside, no quote."""
    return all(text.endswith(".") and not re.search(r"[.!?…]\s", text[:-1]) and not re.search("[\"«»“”]", text)
               for text in (en, fr))


def continue_clause(text: str, names: set[str]) -> str:
    """A sentence as a clause after a connective: its first letter in lower case unless its first
    word is always capitalised."""
    first = re.match(r"[^\W\d_]+", text)
    if first is None or first.group() in names:
        return text
    return text[0].lower() + text[1:]


def clause_join(pairs, connectives, names_en: set[str], names_fr: set[str]) -> tuple[str, str]:
    """Pairs of plain statements made into one sentence a side: "A, and b, but c." / "A, et b, mais c."
    (each pair's full stop but the last dropped; "parce que" elides to "parce qu'" before a vowel)."""
    en, fr = pairs[0]
    for (next_en, next_fr), (word_en, word_fr) in zip(pairs[1:], connectives):
        next_fr, space = continue_clause(next_fr, names_fr), " "
        if word_fr.endswith(" que") and next_fr[0].lower() in FRENCH_VOWELS:
            word_fr, space = word_fr[:-1] + "'", ""
        en = f"{en[:-1]}{word_en} {continue_clause(next_en, names_en)}"
        fr = f"{fr[:-1]}{word_fr}{space}{next_fr}"
    return en, fr


class ClauseJoiner:
    """Training examples that are two or three Tatoeba statements joined into one sentence with a
    connective both languages share (CONNECTIVES). Sentence-after-sentence joins (join_examples)
    teach a model to keep going on long inputs, but not the shape of one long sentence: its clauses,
    their commas and connectives, which is what a teacher types."""

    def __init__(self, pairs, src_tok, tgt_tok, max_len: int, alpha: float = 0.0):
        self.pairs = [p for p in pairs if clause_joinable(*p)]
        self.names_en = always_capitalised(en for en, _ in pairs)
        self.names_fr = always_capitalised(fr for _, fr in pairs)
        self.src_tok, self.tgt_tok, self.max_len, self.alpha = src_tok, tgt_tok, max_len, alpha

    def sentence(self, rng: random.Random) -> tuple[str, str]:
        """Two or three random statements joined by random connectives."""
        chosen = [self.pairs[rng.randrange(len(self.pairs))] for _ in range(rng.randint(2, 3))]
        return clause_join(chosen, [rng.choice(CONNECTIVES) for _ in chosen[1:]], self.names_en, self.names_fr)

    def example(self, rng: random.Random):
        """One encoded joined example (ids + EOS a side), or None if a side passes max_len pieces."""
        _, encoded = encode_pairs([self.sentence(rng)], self.src_tok, self.tgt_tok, self.max_len, self.alpha)
        return encoded[0] if encoded else None

    def replace(self, examples, prob: float, seed: int) -> list:
        """One epoch's examples, each replaced with probability prob by a clause-joined one."""
        rng = random.Random(seed)
        return [(rng.random() < prob and self.example(rng)) or example for example in examples]


def batches(examples, max_tokens: int, shuffle: bool, seed: int = 0):
    """Length-sorted batches of about max_tokens target pieces, in random order when shuffling."""
    rng = random.Random(seed)
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), len(examples[i][1]), rng.random() if shuffle else 0))
    groups, group, longest = [], [], 0
    for i in order:
        longest = max(longest, len(examples[i][1]), len(examples[i][0]))
        if group and longest * (len(group) + 1) > max_tokens:
            groups.append(group)
            group, longest = [], max(len(examples[i][0]), len(examples[i][1]))
        group.append(i)
    groups.append(group)
    if shuffle:
        rng.shuffle(groups)
    for group in groups:
        yield collate([examples[i] for i in group])


def pad(seqs, value: int = 0) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [value] * (width - len(s)) for s in seqs], dtype=torch.long)


def collate(examples, bos: int = 2):
    """→ src (B, S), src_lengths (B,), y_in (B, T) = BOS + target[:-1], y_out (B, T) = target."""
    src = pad([s for s, _ in examples])
    lengths = torch.tensor([len(s) for s, _ in examples])
    y_in = pad([[bos] + t[:-1] for _, t in examples])
    y_out = pad([t for _, t in examples])
    return src, lengths, y_in, y_out
