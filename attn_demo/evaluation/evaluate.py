"""Score a checkpoint with sacreBLEU on `english<TAB>french` pairs, or its attention as a word
alignment against gold links.

    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --beam 5
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --long --beam 5
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --dev --beam 5
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --general --beam 5 --card
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --examples --card
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --alignments
    python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --tune --card
    python -m attn_demo.evaluation.evaluate runs/transformer-en-fr --heads --limit 2000 --card

BLEU and chrF are corpus-level, default tokeniser, on detokenised output. An input is read as
the app reads it (a few characters the model never saw become its unknown piece); one the model
refuses (mostly such characters, or too many pieces) counts as an empty translation and is
reported. --long scores the long-sentence test set instead (test pairs joined into inputs of
1–10 … 51–60 English words, see data.long_test_set): one BLEU and chrF per length bucket. --dev
scores the development set of long natural sentences (data.long_dev_set: the validation split's
sentences of 11 or more English words, never trained on). --general scores FLORES-200 devtest,
general text (Wikinews, Wikijunior, Wikivoyage sentences of 21.6 words on average), which the models
never see in training or tuning. --examples translates the sentences the
page offers (attn_demo.examples), greedy as the page opens and with --beam, for a reader to judge.
--heads measures a Transformer's cross-attention heads on --data (with --limit N, its first N pairs; the
Tatoeba test set is in random order): each head's confidence and α on </s> (attn_demo.measures.heads), and the
corpus BLEU with that head's output zeroed (Michel et al. 2019), decoded as the rest (--beam, the card's
ranking) in batches, one decoding of the sentences per head, beside the BLEU of the same sentences with every head.

Every translation is checked for the usual failures of attention models on long sentences: an
output that repeats a phrase (some word pair more often than the reference has it) or is short
(under 80% of the reference's words, most often a dropped clause); the share of either is
reported for the sentences of 16+ English words (of the development set: all of them).

Decoding: a beam search ranks what it finishes by log p over a length penalty plus the coverage
penalties (search.Penalties); by default those the model card records (--tune chose them), else
the average log-probability per piece (--untuned: that, whatever the card says). --tune chooses
them on the tuning set: the validation split (sentences of every length) and validation pairs
joined into 11–40-word inputs, never trained on, never the test set. A beam search finishes the
same hypotheses whatever the penalties, which only rank them, so each model decodes the set once
(n-best = beam) and every setting of TUNING_GRID is scored by re-ranking: the kept setting has the
fewest repeated-or-short outputs among the set's inputs of 11+ words, among the settings within
TUNING_SLACK BLEU and chrF of the plain ranking on the whole set (none: a ranking may not buy fewer
faults with translations worse elsewhere), then the best BLEU.

Alignment: the gold French is teacher-forced through the model and every rule of
attn_demo.measures.alignment.ALIGNERS draws links from its α; AER, precision and recall are corpus-level
over the sentences the model reads as given (alignment.check_readable; the others are counted as
skipped). An eflomal word aligner, trained unsupervised on the Hansards sentences plus Tatoeba
pairs, is scored on the same sentences as the reference.
"""
import argparse
import dataclasses
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

import sacrebleu
import torch
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from attn_demo.checkpoints.card import against_text, heads_table, write_model_card
from attn_demo.cli import HelpFormatter, run
from attn_demo.data.pairs import (
    DEV_MIN_WORDS, GENERAL_SET, TEST_SET, TRAIN_POOL, long_dev_set, long_test_set, read_pairs, train_valid_split)
from attn_demo.decoding.attribution import METHODS
from attn_demo.decoding.grids import grid_name
from attn_demo.decoding.search import NO_PENALTIES, NO_STEER, Penalties, Steer
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.measures.aligner import aligner_links
from attn_demo.measures.alignment import (
    GOLD_DIR, OtherLinks, alignment_error, attention_alignments, attribution_alignments, head_alignments, links_source,
    read_gold)
from attn_demo.measures.heads import corpus_statistics, every_head
from attn_demo.measures.marks import chosen_threshold, measure, write_marks
from attn_demo.training.coverage import unseen_words
from attn_demo.translator import Translator, load_translator

LENGTH_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 10_000))  # English words
BATCH_SENTENCES = 64
FAULT_MIN_WORDS = 16  # the test sentences whose translations are checked for repeated and dropped phrases
SHORT_RATIO = 0.8  # an output with fewer words than this share of the reference's is short (a dropped phrase, most often)
TUNING_GRID = {"length": (None, 0.0, 0.6, 1.0, 1.5), "coverage": (0.0, 0.1, 0.2, 0.4, 1.0),
               "repeat": (0.0, 0.1, 0.3, 1.0, 3.0)}  # α, β_cov, β_rep of search.Penalties
TUNING_SLACK = 0.0  # BLEU and chrF a tuned setting may give up on the tuning set for fewer faults: none
TUNING_JOINED = ("11-20", "21-30", "31-40")  # the buckets of joined validation pairs in the tuning set
WORD = re.compile(r"[\w'’-]+")  # a word when looking for repeats: a lowercased run of letters, digits, apostrophes, hyphens


def translate_all(translator: Translator, sources: list[str], beam: int, penalties: Penalties | None = None,
                  steer: Steer = NO_STEER) -> tuple[list[str], int]:
    """Translations in input order (length-sorted batches inside) and the number of refused inputs; the beam
    ranks as penalties say, or as the model's card records (Translator.penalties) when None. The text alone: a
    Transformer's every-layer trace is left out."""
    translations, refused = translate_traced(translator, sources, beam, penalties, steer=steer, heads=False)
    return texts(translations), refused


def texts(translations) -> list[str]:
    """The French of each Translation; a refused input's (None) is empty."""
    return ["" if t is None else t.text for t in translations]


def translate_traced(translator: Translator, sources: list[str], beam: int, penalties: Penalties | None = None,
                     n_best: int | None = None, steer: Steer = NO_STEER, heads: bool = True) -> tuple[list, int]:
    """Each input's Translation (None where refused), or with n_best the list of its n best, in input
    order, and the number refused; heads=False leaves a Transformer's Translation.heads out."""
    outputs, accepted = [None] * len(sources), []
    for i, text in enumerate(sources):
        try:
            translator.encode(text)
            accepted.append(i)
        except ValueError:
            pass
    accepted.sort(key=lambda i: len(sources[i]))
    for start in range(0, len(accepted), BATCH_SENTENCES):
        chunk = accepted[start:start + BATCH_SENTENCES]
        results = translator.translate_batch([sources[i] for i in chunk], beam_size=beam, n_best=n_best, steer=steer,
                                             penalties=penalties, heads=heads)
        for i, result in zip(chunk, results):
            outputs[i] = result
    return outputs, len(sources) - len(accepted)


def paired_bootstrap(hypotheses, baseline, references) -> dict:
    """sacreBLEU's paired bootstrap resampling (Koehn 2004; 1,000 resamples, its fixed seed) of these translations
    against a baseline's of the same sources: per metric, both scores and p, the chance that a difference this large,
    either way, arises from the choice of sentences alone."""
    test = PairedTest([("baseline", baseline), ("this", hypotheses)], {"bleu": BLEU(), "chrf": CHRF()}, [references],
                      test_type="bs", n_samples=1000)
    _, scores = test()
    names = {"bleu": "BLEU", "chrf": "chrF2"}  # how sacreBLEU names its columns
    # sacreBLEU gives the same translations p = 1/1001 (a zero difference is not "chance", its comment says); read
    # as this docstring's chance, and as a card prints it, no difference at all is p 1
    same = list(hypotheses) == list(baseline)
    return {metric: {"score": round(scores[column][1].score, 2), "baseline": round(scores[column][0].score, 2),
                     "p": 1.0 if same else round(float(scores[column][1].p_value), 4)} for metric, column in names.items()}


def against(other: Translator, sources, hypotheses, references, min_words: int, beam: int) -> dict:
    """The paired bootstrap against another model, on the whole set and on its sentences of min_words+ English
    words where they are some of the set, not none or all of it (then "long" holds only their count); the other
    model decodes the same sources with the same beam, ranked as its own card says."""
    theirs, _ = translate_all(other, sources, beam)
    long = [i for i, source in enumerate(sources) if len(source.split()) >= min_words]
    pick = lambda texts: [texts[i] for i in long]  # noqa: E731
    compared = paired_bootstrap(pick(hypotheses), pick(theirs), pick(references)) if 0 < len(long) < len(sources) else {}
    return {"model": other.folder.name, "all": paired_bootstrap(hypotheses, theirs, references),
            "long": {**compared, "n": len(long), "min_words": min_words}}


def eos_argmax_share(translations) -> float | None:
    """The share of output steps whose most-attended source piece is the sentence's </s> (the last),
    over every step of every translation; None for a model without attention."""
    alphas = [t.attention for t in translations if t is not None and t.attention is not None]
    if not alphas:
        return None
    steps = sum(len(alpha) for alpha in alphas)
    return sum(int((alpha.argmax(axis=1) == alpha.shape[1] - 1).sum()) for alpha in alphas) / steps


def repeats(hypothesis: str, reference: str) -> bool:
    """Whether the output writes some word pair at least twice, and more often than the reference does."""
    def pairs(text):
        words = WORD.findall(text.lower())
        return Counter(zip(words, words[1:]))
    reference_pairs = pairs(reference)
    return any(n >= 2 and n > reference_pairs[pair] for pair, n in pairs(hypothesis).items())


def is_short(hypothesis: str, reference: str) -> bool:
    """Whether the output has fewer than SHORT_RATIO of the reference's whitespace-separated words."""
    return len(hypothesis.split()) < SHORT_RATIO * len(reference.split())


def faults(hypotheses, references) -> dict:
    """How many outputs repeat, are short, or either: the usual failures of attention models on long
    sentences (over- and under-translation)."""
    repeated = [repeats(h, r) for h, r in zip(hypotheses, references)]
    short = [is_short(h, r) for h, r in zip(hypotheses, references)]
    n = len(hypotheses)
    return {"n": n, "repeat": round(sum(repeated) / max(n, 1), 4), "short": round(sum(short) / max(n, 1), 4),
            "repeat_or_short": round(sum(a or b for a, b in zip(repeated, short)) / max(n, 1), 4), "short_ratio": SHORT_RATIO}


def tuning_set(train_pool: Path, test: Path, n_valid: int) -> list[tuple[str, str]]:
    """The validation split and its pairs joined into 11–40-word inputs: sentences of every length
    (a ranking must not buy long sentences with short ones) that no model trained with train's
    split saw, and none from the test set."""
    valid = train_valid_split(read_pairs(train_pool), read_pairs(test), n_valid, 1)[1]
    joined = long_test_set(valid, per_bucket=60, seed=1)
    return valid + [pair for bucket in TUNING_JOINED for pair in joined[bucket]]


def ranking_score(translation, penalties: Penalties) -> float:
    """What a beam search with these penalties ranks a finished hypothesis by (search.Penalties)."""
    coverage = None if translation.coverage is None else torch.tensor(translation.coverage)[None]  # (1, S)
    term = penalties.ending_term(coverage, torch.ones(1, len(translation.source_tokens), dtype=torch.bool))
    return translation.log_prob / penalties.length_norm(len(translation.target_tokens)) + float(term[0])


def tune(translator: Translator, pairs, beam: int) -> dict:
    """Every setting of TUNING_GRID scored on pairs by re-ranking each sentence's n best, and the one kept."""
    sources, references = [en for en, _ in pairs], [fr for _, fr in pairs]
    n_best, _ = translate_traced(translator, sources, beam, NO_PENALTIES, n_best=beam)
    has_alpha = translator.config.attention != "none"
    settings = [Penalties(length, coverage, repeat) for length in TUNING_GRID["length"]
                for coverage in (TUNING_GRID["coverage"] if has_alpha else (0.0,))
                for repeat in (TUNING_GRID["repeat"] if has_alpha else (0.0,))]
    long = [i for i, source in enumerate(sources) if len(source.split()) >= DEV_MIN_WORDS]
    rows = []
    for penalties in settings:
        chosen = ["" if hyps is None else max(hyps, key=lambda h: ranking_score(h, penalties)).text for hyps in n_best]
        rows.append({"penalties": dataclasses.asdict(penalties),
                     "bleu": round(sacrebleu.corpus_bleu(chosen, [references]).score, 2),
                     "chrf": round(sacrebleu.corpus_chrf(chosen, [references]).score, 2),
                     **{k: v for k, v in faults([chosen[i] for i in long], [references[i] for i in long]).items()
                        if k not in ("n", "short_ratio")}})
    plain = rows[settings.index(NO_PENALTIES)]
    fair = [r for r in rows if r["bleu"] >= plain["bleu"] - TUNING_SLACK and r["chrf"] >= plain["chrf"] - TUNING_SLACK]
    kept = min(fair, key=lambda r: (r["repeat_or_short"], -r["bleu"]))
    return {"beam": beam, "n": len(pairs), "n_long": len(long), "plain": plain, "kept": kept, "rows": rows}


def bucket_name(low: int, high: int) -> str:
    return f"{low}+" if high >= 10_000 else f"{low}-{high}"


def score(sources, hypotheses, references, fault_min_words: int = FAULT_MIN_WORDS, known: frozenset | None = None) -> dict:
    """Corpus BLEU / chrF overall, BLEU per English-length bucket, and the faults (repeated or short
    outputs) of the sentences of fault_min_words English words or more; with `known`, the training
    English's words, also those of the long sentences that hold no word outside it ("seen_…")."""
    long = [i for i, s in enumerate(sources) if len(s.split()) >= fault_min_words]
    long_faults = lambda chosen: faults([hypotheses[i] for i in chosen], [references[i] for i in chosen])  # noqa: E731
    result = {
        "bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2),
        "n": len(sources), "by_length": {},
        "faults": {**long_faults(long), "min_words": fault_min_words},
    }
    if known is not None:
        seen = long_faults([i for i in long if not unseen_words(sources[i], known)])
        result["faults"].update(seen_n=seen["n"], seen_repeat_or_short=seen["repeat_or_short"])
    for low, high in LENGTH_BUCKETS:
        idx = [i for i, s in enumerate(sources) if low <= len(s.split()) <= high]
        if idx:
            bleu = sacrebleu.corpus_bleu([hypotheses[i] for i in idx], [[references[i] for i in idx]]).score
            result["by_length"][bucket_name(low, high)] = {"n": len(idx), "bleu": round(bleu, 2)}
    return result


def score_by_length(translator: Translator, pairs, beam: int, per_bucket: int, penalties: Penalties | None = None) -> dict:
    """BLEU / chrF per English-length bucket of the long-sentence test set built from pairs."""
    buckets = {}
    for name, inputs in long_test_set(pairs, per_bucket).items():
        sources, references = [en for en, _ in inputs], [fr for _, fr in inputs]
        hypotheses, refused = translate_all(translator, sources, beam, penalties)
        buckets[name] = {"n": len(inputs), "bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
                         "chrf": round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2), "refused": refused}
    return buckets


def score_alignments(translator: Translator, folder: Path, aligner_pairs: Path, methods=(), kept: Path | None = None) -> dict:
    """AER, precision and recall of every attention rule, of the attribution rules of each method
    (attn_demo.decoding.attribution; the only rules for a model without attention; their links kept in `kept` as
    they are made, and read back from it) and of the aligner on the test split; the aligner also trains on the dev
    split's sentences and the aligner_pairs."""
    gold, dev = read_gold(folder, "test"), read_gold(folder, "dev")
    links, read = attention_alignments(translator, gold)
    for method in methods:
        links.update(attribution_alignments(translator, gold, method, read, kept))
    sure, possible = [gold.sure[i] for i in read], [gold.possible[i] for i in read]
    scores = {name: alignment_error(rule_links, sure, possible) for name, rule_links in links.items()}

    reference = aligner_links(gold.english + dev.english, gold.french + dev.french, read_pairs(aligner_pairs))
    heads = {"heads": score_heads(translator, dev, gold)} if translator.config.attention == "transformer" else {}
    return {
        **heads,
        **{metric: {name: round(s[metric], 4) for name, s in scores.items()} for metric in ("aer", "precision", "recall")},
        "aligner": {name: {metric: round(value, 4) for metric, value in alignment_error([sentences[i] for i in read], sure, possible).items()}
                    for name, sentences in reference.items()},
        "n": len(read), "skipped": len(gold.english) - len(read),
    }


def score_heads(translator: Translator, trial, test) -> dict:
    """The argmax AER of every cross-attention grid of a Transformer (each head, each layer's mean) on the trial
    and the test split, and the grid with the lowest on the trial split (Garg et al. 2019: the penultimate layer's
    mean): the one the page should show (TransformerConfig.shown_layer and shown_head)."""
    aer = {}
    for split, gold in (("trial", trial), ("test", test)):
        links, read = head_alignments(translator, gold)
        sure, possible = [gold.sure[i] for i in read], [gold.possible[i] for i in read]
        aer[split] = {grid: alignment_error(sentences, sure, possible)["aer"] for grid, sentences in links.items()}
    layer, head = min(aer["trial"], key=aer["trial"].get)
    return {"trial": {grid_name(*g): round(v, 4) for g, v in aer["trial"].items()},
            "test": {grid_name(*g): round(v, 4) for g, v in aer["test"].items()},
            "chosen": {"layer": layer, "head": head}}


def print_alignments(result: dict) -> None:
    print(f"{result['n']} sentences read, {result['skipped']} skipped (refused by the model, or pieces not spelling the gold words)")
    print(f"{'links from':<34} {'AER':>6} {'prec.':>6} {'recall':>6}")
    for name in result["aer"]:
        print(f"{links_source(name):<34} {result['aer'][name]:6.3f} {result['precision'][name]:6.3f} {result['recall'][name]:6.3f}")
    for name, s in result["aligner"].items():
        print(f"{name:<34} {s['aer']:6.3f} {s['precision']:6.3f} {s['recall']:6.3f}")
    if "heads" in result:
        heads = result["heads"]
        print(f"argmax AER of every cross-attention grid, {'trial':>6} {'test':>6}")
        for name in heads["trial"]:
            print(f"{name:<34} {heads['trial'][name]:6.3f} {heads['test'][name]:6.3f}")
        print(f"lowest on the trial split: {grid_name(heads['chosen']['layer'], heads['chosen']['head'])}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("model", help="checkpoint folder or Hub repo id")
    p.add_argument("--data", type=Path, default=TEST_SET, help="TSV of english<TAB>french pairs")
    p.add_argument("--beam", type=int, default=5)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--long", action="store_true",
                      help="score the long-sentence test set built from --data: BLEU and chrF per bucket of English words")
    mode.add_argument("--dev", action="store_true",
                      help=f"score the validation split's sentences of {DEV_MIN_WORDS}+ English words (never trained on) "
                           "instead of --data")
    mode.add_argument("--general", action="store_true",
                      help="score FLORES-200 devtest (general text: Wikinews, Wikijunior, Wikivoyage) instead of --data: "
                           "a test set only, never trained or tuned on")
    mode.add_argument("--examples", action="store_true",
                      help="translate the page's example sentences, greedy and with --beam")
    mode.add_argument("--tune", action="store_true",
                      help="choose the beam search's length and coverage penalties on the tuning set (see above)")
    mode.add_argument("--marks", action="store_true",
                      help="measure the coverage marks (attn_demo.measures.marks) on the test set's 16+-word sentences and the "
                           "development set: how often a word barely looked at is missing, and one looked at again "
                           "repeated; with --card, into coverage-marks.json beside the weights, which the page marks by")
    mode.add_argument("--heads", action="store_true",
                      help="a Transformer's cross-attention heads on --data: each one's confidence and α on </s> (attn_demo.measures.heads) "
                           "and the BLEU of the translations with its output zeroed (one decoding of --data per head)")
    mode.add_argument("--alignments", type=Path, nargs="?", const=GOLD_DIR, metavar="FOLDER",
                      help="report AER against gold word alignments: FOLDER holds test.e, test.f, test.wa.nonullalign "
                           f"and dev.* (without FOLDER: {GOLD_DIR}, the data home's)")
    p.add_argument("--per-bucket", type=int, default=200, help="inputs per length bucket with --long")
    p.add_argument("--limit", type=int, metavar="N",
                   help="with --heads: only the first N pairs of --data (each head costs a decoding of them)")
    p.add_argument("--train-pool", type=Path, default=TRAIN_POOL,
                   help="with --dev: the pairs the models were trained on, split as train splits them (--data is the test set it excluded)")
    p.add_argument("--n-valid", type=int, default=2000, help="with --dev: the size of the validation split, as train made it")
    p.add_argument("--aligner-pairs", type=Path, default=TRAIN_POOL,
                   help="english<TAB>french pairs the reference aligner also trains on")
    p.add_argument("--attribution", nargs="+", choices=METHODS, default=[],
                   help="with --alignments, also draw links from these gradient attributions (slow: one per sentence)")
    p.add_argument("--keep-links", type=Path, metavar="FILE",
                   help="with --attribution: keep each sentence's links in FILE as they are made, and take those it "
                        "holds: a run stopped midway, started again with the same FILE, goes on where it stopped")
    p.add_argument("--length-penalty", type=float, help="α of GNMT's length penalty ((5 + |Y|) / 6)^α "
                                                         "(default: the card's decoding, else log p per piece)")
    p.add_argument("--coverage-penalty", type=float, help="β_cov: pieces left unattended (default: the card's, else 0)")
    p.add_argument("--repeat-penalty", type=float, help="β_rep: pieces attended more than once in all (default: the card's, else 0)")
    p.add_argument("--stepwise", action=argparse.BooleanOptionalAction,
                   help="the coverage penalties rank every beginning at every step instead of what finished "
                        "(default: the card's, else no)")
    p.add_argument("--untuned", action="store_true", help="rank by log p per piece, without coverage penalties, "
                                                          "whatever the card's decoding (to compare with it)")
    p.add_argument("--against", nargs="+", default=[], metavar="CHECKPOINT",
                   help="with the test set, --dev or --general: compare with these checkpoints (folders or Hub ids), "
                        "each in sacreBLEU's paired bootstrap, on the whole set and its long sentences (this model "
                        "decodes the set once)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--hyps", type=Path, help="also write the translations here, one a line in input order "
                                             "(for sacreBLEU's paired bootstrap: sacrebleu REF -i A B --paired-bs)")
    p.add_argument("--card", action="store_true",
                   help="record the scores in the checkpoint folder's model card (its speed: attn_demo.evaluation.speed)")
    args = p.parse_args(argv)
    # measures that are not the translations of one set (--heads decodes --data once for each head)
    other_measures = args.long or args.examples or args.tune or args.marks or args.alignments or args.heads
    if args.hyps and other_measures:
        p.error("--hyps writes the translations of one set (the test set, --data or --dev), to compare two models")
    if args.against and other_measures:
        p.error("--against compares the translations of one set (the test set, --data, --dev or --general)")
    if args.limit is not None and (not args.heads or args.limit < 1):
        p.error("--limit N takes the first N pairs (N ≥ 1) of --data for --heads, whose every head costs a decoding of them")
    if args.keep_links and not (args.alignments and args.attribution):
        p.error("--keep-links FILE keeps the links of an attribution: give it with --alignments --attribution METHOD")
    translator = load_translator(args.model)
    command = "python -m attn_demo.evaluation.evaluate " + " ".join(sys.argv[1:] if argv is None else argv)
    penalties = chosen_penalties(args, NO_PENALTIES if args.untuned else translator.penalties)
    if args.alignments:
        if translator.config.attention == "none" and not args.attribution:
            p.error(f"{args.model} has no attention (attention: none): there is no α to draw links from; "
                    "--attribution measures the links of what it relies on")
        try:  # the reference aligner is a dev requirement: nothing else here needs it
            import eflomal  # noqa: F401
        except ImportError:
            p.error("--alignments needs the eflomal word aligner: pip install -r requirements-dev.txt (or pip install eflomal)")
        try:
            result = score_alignments(translator, args.alignments, args.aligner_pairs, args.attribution, args.keep_links)
        except OtherLinks as refused:
            p.error(str(refused))
        if args.json:
            print(json.dumps(result))
        else:
            print_alignments(result)
        if args.card:
            write_model_card(translator.folder, alignment_results={**result, "dataset": args.alignments.name, "command": command})
            if "heads" in result:  # the page shows the grid that aligns best on the trial split
                chosen = result["heads"]["chosen"]
                config = dataclasses.replace(translator.config, shown_layer=chosen["layer"], shown_head=chosen["head"])
                config.to_json(translator.folder / "config.json")
        return
    if args.examples:
        return main_examples(args, translator, command, penalties)
    if args.tune:
        return main_tune(args, translator, command)
    if args.marks:
        return main_marks(args, translator, command, penalties)
    if args.heads:
        return main_heads(args, translator, command, penalties)
    pairs = read_pairs(GENERAL_SET if args.general else args.data)
    if args.dev:
        pairs = long_dev_set(read_pairs(args.train_pool), pairs, args.n_valid)
    if args.long:
        return main_long(args, translator, pairs, command, penalties)
    sources, references = [en for en, _ in pairs], [fr for _, fr in pairs]
    start = time.time()
    translations, refused = translate_traced(translator, sources, args.beam, penalties)
    hypotheses = texts(translations)
    if args.hyps:
        args.hyps.write_text("".join(h + "\n" for h in hypotheses), encoding="utf-8")
    # the development set is drawn from the training pool, the test set is not: only there do unseen words matter
    known = translator.training_data["english_words"] if translator.training_data and not args.dev else None
    result = score(sources, hypotheses, references, DEV_MIN_WORDS if args.dev else FAULT_MIN_WORDS, known)
    result["refused"] = refused
    if args.beam > 1:
        result["penalties"] = dataclasses.asdict(penalties)
    share = eos_argmax_share(translations)
    if share is not None:
        result["eos_argmax_share"] = round(share, 4)
    if args.against:
        min_words = DEV_MIN_WORDS if args.dev else FAULT_MIN_WORDS
        result["against"] = [against(load_translator(other), sources, hypotheses, references, min_words, args.beam)
                             for other in args.against]
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.model}: {result['n']} sentences, beam {args.beam}, {time.time() - start:.0f} s, {refused} refused")
        print(f"BLEU {result['bleu']}  chrF {result['chrf']}")
        f = result["faults"]
        print(f"of the {f['n']} sentences of {f['min_words']}+ words: {f['repeat_or_short']:.1%} repeat or are short "
              f"({f['repeat']:.1%} repeat a word pair more often than the reference, {f['short']:.1%} have under "
              f"{SHORT_RATIO:.0%} of its words)")
        if "seen_n" in f:
            print(f"  of the {f['seen_n']} of them whose every word is in the training English: {f['seen_repeat_or_short']:.1%}")
        if share is not None:
            print(f"steps whose most-attended English piece is </s>: {share:.1%}")
        for name, bucket in result["by_length"].items():
            print(f"  {name:>6} words  n={bucket['n']:5d}  BLEU {bucket['bleu']}")
        for compared in result.get("against", []):
            print(against_text(compared))
    if args.card and args.general:
        write_model_card(translator.folder, general_results={**result, "beam": args.beam, "dataset": GENERAL_SET.name,
                                                             "command": command})
    elif args.card and args.dev:
        write_model_card(translator.folder, dev_results={**result, "beam": args.beam, "min_words": DEV_MIN_WORDS,
                                                         "command": command})
    elif args.card:
        write_model_card(translator.folder, test_results={**result, "beam": args.beam, "dataset": args.data.name, "command": command})


def chosen_penalties(args, recorded: Penalties) -> Penalties:
    """The penalties named on the command line, each one not named as the card records it."""
    named = {"length": args.length_penalty, "coverage": args.coverage_penalty, "repeat": args.repeat_penalty,
             "stepwise": args.stepwise}
    return dataclasses.replace(recorded, **{k: v for k, v in named.items() if v is not None})


def main_marks(args, translator: Translator, command: str, penalties: Penalties):
    if translator.config.attention == "none":
        raise SystemExit(f"{args.model} has no attention: no coverage, no marks")
    test = [(en, fr) for en, fr in read_pairs(args.data) if len(en.split()) >= FAULT_MIN_WORDS]
    pairs = test + long_dev_set(read_pairs(args.train_pool), read_pairs(args.data), args.n_valid)
    translations, _ = translate_traced(translator, [en for en, _ in pairs], args.beam, penalties)
    result = {**measure(translations, read_pairs(args.aligner_pairs)), "beam": args.beam, "command": command}
    result["threshold"] = chosen_threshold(result)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.model}: {result['sentences']} sentences, {result['words']} words, beam {args.beam}")
        for kind, truth in (("low", "missing"), ("high", "repeated")):
            for threshold, r in result[kind].items():
                print(f"  coverage {'<' if kind == 'low' else '>'} {threshold:>4}: {r['marked']:5d} marked, {r['true']:5d} "
                      f"{truth}, precision {r['precision']:.2f} (95% floor {r['precision_floor']:.2f}), recall {r['recall']:.2f}")
        threshold = result["threshold"]
        print("  the page marks: " + ("no word" if threshold is None else f"the words of coverage below {threshold:g}"))
    if args.card:
        write_marks(translator.folder, result)
        write_model_card(translator.folder, marks=result)


def main_heads(args, translator: Translator, command: str, penalties: Penalties):
    if translator.config.attention != "transformer":
        raise SystemExit(f"{args.model} is no Transformer: it has no heads to measure")
    every = read_pairs(args.data)
    pairs = every[:args.limit]
    sources, references = [en for en, _ in pairs], [fr for _, fr in pairs]
    start = time.time()
    translations, refused = translate_traced(translator, sources, args.beam, penalties)
    bleu = round(sacrebleu.corpus_bleu(texts(translations), [references]).score, 2)
    heads = corpus_statistics([t for t in translations if t is not None])
    for layer, head in every_head(translator.config):
        without = head_off_bleu(translator, sources, references, args.beam, penalties, (layer, head))
        heads[grid_name(layer, head)].update(bleu_without=without, bleu_cost=round(bleu - without, 2))
        if not args.json:  # a long measurement says how far it is
            print(f"{grid_name(layer, head)}: BLEU {without} without it, {time.time() - start:.0f} s", file=sys.stderr)
    result = {"bleu": bleu, "n": len(pairs), "of": len(every), "refused": refused, "beam": args.beam,
              "dataset": args.data.name, "heads": heads, "command": command}
    if args.beam > 1:
        result["penalties"] = dataclasses.asdict(penalties)
    print(json.dumps(result) if args.json else heads_table(result))
    if args.card:
        write_model_card(translator.folder, heads=result)


def head_off_bleu(translator: Translator, sources, references, beam: int, penalties: Penalties, head: tuple[int, int]) -> float:
    """Corpus BLEU of the sources translated with one cross-attention head (layer, head) turned off, in batches."""
    hypotheses, _ = translate_all(translator, sources, beam, penalties, Steer(heads_off=frozenset({head})))
    return round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)


def main_tune(args, translator: Translator, command: str):
    start = time.time()
    result = tune(translator, tuning_set(args.train_pool, args.data, args.n_valid), args.beam)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.model}: tuning set of {result['n']} sentences ({result['n_long']} of {DEV_MIN_WORDS}+ words, whose "
              f"faults are counted), beam {args.beam}, {time.time() - start:.0f} s")
        print(f"{'α':>5} {'β_cov':>6} {'β_rep':>6} {'BLEU':>6} {'chrF':>6} {'repeat':>7} {'short':>6} {'either':>7}")
        for r in sorted(result["rows"], key=lambda r: r["repeat_or_short"])[:15] + [result["plain"], result["kept"]]:
            pen = r["penalties"]
            print(f"{str(pen['length']):>5} {pen['coverage']:6.2f} {pen['repeat']:6.2f} {r['bleu']:6.2f} {r['chrf']:6.2f} "
                  f"{r['repeat']:7.1%} {r['short']:6.1%} {r['repeat_or_short']:7.1%}")
        print("the last two rows: the plain ranking (log p per piece) and the setting kept")
    if args.card:
        write_model_card(translator.folder, decoding={"beam": args.beam, "n": result["n"], "n_long": result["n_long"],
                                                      "penalties": result["kept"]["penalties"],
                                                      "tuned": result["kept"], "plain": result["plain"], "command": command})


def main_examples(args, translator: Translator, command: str, penalties: Penalties):
    sources = [*EXAMPLES, LONG_EXAMPLE]
    greedy, beam = translate_all(translator, sources, 1)[0], translate_all(translator, sources, args.beam, penalties)[0]
    examples = {"beam": args.beam, "command": command,
                "translations": [{"source": s, "greedy": g, "beam": b} for s, g, b in zip(sources, greedy, beam)]}
    if args.json:
        print(json.dumps(examples, ensure_ascii=False))
    else:
        for row in examples["translations"]:
            print(f"{row['source']}\n  greedy:  {row['greedy']}\n  beam {args.beam}:  {row['beam']}")
    if args.card:
        write_model_card(translator.folder, examples=examples)


def main_long(args, translator: Translator, pairs, command: str, penalties: Penalties):
    start = time.time()
    buckets = score_by_length(translator, pairs, args.beam, args.per_bucket, penalties)
    curve = {"dataset": args.data.name, "beam": args.beam, "buckets": buckets, "command": command}
    if args.json:
        print(json.dumps(curve))
    else:
        print(f"{args.model}: long-sentence test set from {args.data.name}, beam {args.beam}, {time.time() - start:.0f} s")
        for name, bucket in buckets.items():
            print(f"  {name:>5} words  n={bucket['n']:4d}  BLEU {bucket['bleu']:5.2f}  chrF {bucket['chrf']:5.2f}"
                  f"  refused {bucket['refused']}")
    if args.card:
        write_model_card(translator.folder, length_curve=curve)


if __name__ == "__main__":
    run(main)
