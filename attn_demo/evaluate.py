"""Score a checkpoint with sacreBLEU on `english<TAB>french` pairs, or its attention as a word
alignment against gold links.

    python -m attn_demo.evaluate checkpoints/luong-en-fr --data ../shared/data/tatoeba-fra-eng/tatoeba-test-v2020-07-28.eng-fra.tsv --beam 5
    python -m attn_demo.evaluate checkpoints/luong-en-fr --long --beam 5
    python -m attn_demo.evaluate checkpoints/luong-en-fr --dev --beam 5
    python -m attn_demo.evaluate checkpoints/luong-en-fr --examples --card
    python -m attn_demo.evaluate checkpoints/luong-en-fr --alignments ../shared/data/hansards-wpt03

BLEU and chrF are corpus-level, default tokeniser, on detokenised output. An input is read as
the app reads it (a few characters the model never saw become its unknown piece); one the model
refuses (mostly such characters, or too many pieces) counts as an empty translation and is
reported. --long scores the long-sentence test set instead (test pairs joined into inputs of
1–10 … 51–60 English words, see data.long_test_set): one BLEU and chrF per length bucket. --dev
scores the development set of long natural sentences (data.long_dev_set: the validation split's
sentences of 11 or more English words, never trained on). --examples translates the sentences the
page offers (attn_demo.examples), greedy as the page opens and with --beam, for a reader to judge.

Alignment: the gold French is teacher-forced through the model and every rule of
attn_demo.alignment.ALIGNERS draws links from its α; AER, precision and recall are corpus-level
over the sentences the model reads as given (alignment.check_readable; the others are counted as
skipped). An eflomal word aligner, trained unsupervised on the Hansards sentences plus Tatoeba
pairs, is scored on the same sentences as the reference.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import sacrebleu

from attn_demo.alignment import alignment_error, attention_alignments, attribution_alignments, links_source, read_gold
from attn_demo.attribution import METHODS
from attn_demo.checkpoint import write_model_card
from attn_demo.data import DEV_MIN_WORDS, TEST_SET, TRAIN_POOL, long_dev_set, long_test_set, read_pairs
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.translator import Translator, load_translator

LENGTH_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 10_000))  # English words
BATCH_SENTENCES = 64


def translate_all(translator: Translator, sources: list[str], beam: int) -> tuple[list[str], int]:
    """Translations in input order (length-sorted batches inside) and the number of refused inputs."""
    translations, refused = translate_traced(translator, sources, beam)
    return texts(translations), refused


def texts(translations) -> list[str]:
    """The French of each Translation; a refused input's (None) is empty."""
    return ["" if t is None else t.text for t in translations]


def translate_traced(translator: Translator, sources: list[str], beam: int) -> tuple[list, int]:
    """Each input's Translation (None where refused), in input order, and the number refused."""
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
        for i, result in zip(chunk, translator.translate_batch([sources[i] for i in chunk], beam_size=beam)):
            outputs[i] = result
    return outputs, len(sources) - len(accepted)


def eos_argmax_share(translations) -> float | None:
    """The share of output steps whose most-attended source piece is the sentence's </s> (the last),
    over every step of every translation; None for a model without attention."""
    alphas = [t.attention for t in translations if t is not None and t.attention is not None]
    if not alphas:
        return None
    steps = sum(len(alpha) for alpha in alphas)
    return sum(int((alpha.argmax(axis=1) == alpha.shape[1] - 1).sum()) for alpha in alphas) / steps


def bucket_name(low: int, high: int) -> str:
    return f"{low}+" if high >= 10_000 else f"{low}-{high}"


def score(sources, hypotheses, references) -> dict:
    """Corpus BLEU / chrF overall and BLEU per English-length bucket."""
    result = {
        "bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2),
        "n": len(sources), "by_length": {},
    }
    for low, high in LENGTH_BUCKETS:
        idx = [i for i, s in enumerate(sources) if low <= len(s.split()) <= high]
        if idx:
            bleu = sacrebleu.corpus_bleu([hypotheses[i] for i in idx], [[references[i] for i in idx]]).score
            result["by_length"][bucket_name(low, high)] = {"n": len(idx), "bleu": round(bleu, 2)}
    return result


def score_by_length(translator: Translator, pairs, beam: int, per_bucket: int) -> dict:
    """BLEU / chrF per English-length bucket of the long-sentence test set built from pairs."""
    buckets = {}
    for name, inputs in long_test_set(pairs, per_bucket).items():
        sources, references = [en for en, _ in inputs], [fr for _, fr in inputs]
        hypotheses, refused = translate_all(translator, sources, beam)
        buckets[name] = {"n": len(inputs), "bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
                         "chrf": round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2), "refused": refused}
    return buckets


def score_alignments(translator: Translator, folder: Path, aligner_pairs: Path, methods=()) -> dict:
    """AER, precision and recall of every attention rule, of the attribution rules of each method
    (attn_demo.attribution; the only rules for a model without attention) and of the aligner on
    the test split; the aligner also trains on the dev split's sentences and the aligner_pairs."""
    gold, dev = read_gold(folder, "test"), read_gold(folder, "dev")
    links, read = attention_alignments(translator, gold)
    for method in methods:
        links.update(attribution_alignments(translator, gold, method, read))
    sure, possible = [gold.sure[i] for i in read], [gold.possible[i] for i in read]
    scores = {name: alignment_error(rule_links, sure, possible) for name, rule_links in links.items()}
    from attn_demo.aligner import aligner_links  # eflomal: imported only where it is needed

    reference = aligner_links(gold.english + dev.english, gold.french + dev.french, read_pairs(aligner_pairs))
    return {
        **{metric: {name: round(s[metric], 4) for name, s in scores.items()} for metric in ("aer", "precision", "recall")},
        "aligner": {name: {metric: round(value, 4) for metric, value in alignment_error([sentences[i] for i in read], sure, possible).items()}
                    for name, sentences in reference.items()},
        "n": len(read), "skipped": len(gold.english) - len(read),
    }


def print_alignments(result: dict) -> None:
    print(f"{result['n']} sentences read, {result['skipped']} skipped (refused by the model, or pieces not spelling the gold words)")
    print(f"{'links from':<34} {'AER':>6} {'prec.':>6} {'recall':>6}")
    for name in result["aer"]:
        print(f"{links_source(name):<34} {result['aer'][name]:6.3f} {result['precision'][name]:6.3f} {result['recall'][name]:6.3f}")
    for name, s in result["aligner"].items():
        print(f"{name:<34} {s['aer']:6.3f} {s['precision']:6.3f} {s['recall']:6.3f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="checkpoint folder or Hub repo id")
    p.add_argument("--data", type=Path, default=TEST_SET, help="TSV of english<TAB>french pairs")
    p.add_argument("--beam", type=int, default=5)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--long", action="store_true",
                      help="score the long-sentence test set built from --data: BLEU and chrF per bucket of English words")
    mode.add_argument("--dev", action="store_true",
                      help=f"score the validation split's sentences of {DEV_MIN_WORDS}+ English words (never trained on) "
                           "instead of --data")
    mode.add_argument("--examples", action="store_true",
                      help="translate the page's example sentences, greedy and with --beam")
    mode.add_argument("--alignments", type=Path,
                      help="folder of gold word alignments (test.e, test.f, test.wa.nonullalign, dev.*): report AER")
    p.add_argument("--per-bucket", type=int, default=200, help="inputs per length bucket with --long")
    p.add_argument("--train-pool", type=Path, default=TRAIN_POOL,
                   help="with --dev: the pairs the models were trained on, split as train splits them (--data is the test set it excluded)")
    p.add_argument("--n-valid", type=int, default=2000, help="with --dev: the size of the validation split, as train made it")
    p.add_argument("--aligner-pairs", type=Path, default=TRAIN_POOL,
                   help="english<TAB>french pairs the reference aligner also trains on")
    p.add_argument("--attribution", nargs="+", choices=METHODS, default=[],
                   help="with --alignments, also draw links from these gradient attributions (slow: one per sentence)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--card", action="store_true",
                   help="record the scores in the checkpoint folder's model card (its speed: attn_demo.speed)")
    args = p.parse_args(argv)
    translator = load_translator(args.model)
    command = "python -m attn_demo.evaluate " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.alignments:
        if translator.config.attention == "none" and not args.attribution:
            p.error(f"{args.model} has no attention (attention: none): there is no α to draw links from; "
                    "--attribution measures the links of what it relies on")
        try:  # the reference aligner is a dev requirement: nothing else here needs it
            import eflomal  # noqa: F401
        except ImportError:
            p.error("--alignments needs the eflomal word aligner: pip install -r requirements-dev.txt (or pip install eflomal)")
        result = score_alignments(translator, args.alignments, args.aligner_pairs, args.attribution)
        if args.json:
            print(json.dumps(result))
        else:
            print_alignments(result)
        if args.card:
            write_model_card(translator.folder, alignment={**result, "dataset": args.alignments.name, "command": command})
        return
    if args.examples:
        return main_examples(args, translator, command)
    pairs = read_pairs(args.data)
    if args.dev:
        pairs = long_dev_set(read_pairs(args.train_pool), pairs, args.n_valid)
    if args.long:
        return main_long(args, translator, pairs, command)
    sources, references = [en for en, _ in pairs], [fr for _, fr in pairs]
    start = time.time()
    translations, refused = translate_traced(translator, sources, args.beam)
    hypotheses = texts(translations)
    result = score(sources, hypotheses, references)
    result["refused"] = refused
    share = eos_argmax_share(translations)
    if share is not None:
        result["eos_argmax_share"] = round(share, 4)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.model}: {result['n']} sentences, beam {args.beam}, {time.time() - start:.0f} s, {refused} refused")
        print(f"BLEU {result['bleu']}  chrF {result['chrf']}")
        if share is not None:
            print(f"steps whose most-attended English piece is </s>: {share:.1%}")
        for name, bucket in result["by_length"].items():
            print(f"  {name:>6} words  n={bucket['n']:5d}  BLEU {bucket['bleu']}")
    if args.card and args.dev:
        write_model_card(translator.folder, dev_results={**result, "beam": args.beam, "min_words": DEV_MIN_WORDS,
                                                         "command": command})
    elif args.card:
        write_model_card(translator.folder, results={**result, "beam": args.beam, "dataset": args.data.name, "command": command})


def main_examples(args, translator: Translator, command: str):
    sources = [*EXAMPLES, LONG_EXAMPLE]
    greedy, beam = (translate_all(translator, sources, k)[0] for k in (1, args.beam))
    examples = {"beam": args.beam, "command": command,
                "translations": [{"source": s, "greedy": g, "beam": b} for s, g, b in zip(sources, greedy, beam)]}
    if args.json:
        print(json.dumps(examples, ensure_ascii=False))
    else:
        for row in examples["translations"]:
            print(f"{row['source']}\n  greedy:  {row['greedy']}\n  beam {args.beam}:  {row['beam']}")
    if args.card:
        write_model_card(translator.folder, examples=examples)


def main_long(args, translator: Translator, pairs, command: str):
    start = time.time()
    buckets = score_by_length(translator, pairs, args.beam, args.per_bucket)
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
    main()
