"""Score a checkpoint with sacreBLEU on `english<TAB>french` pairs.

    python -m attn_demo.evaluate checkpoints/luong-en-fr --data ../shared/data/tatoeba-fra-eng/tatoeba-test-v2020-07-28.eng-fra.tsv --beam 5
    python -m attn_demo.evaluate checkpoints/luong-en-fr --long --beam 5

BLEU and chrF are corpus-level, default tokeniser, on detokenised output. An input the model
refuses (characters it never saw) counts as an empty translation and is reported. --long scores
the long-sentence test set instead (test pairs joined into inputs of 1–10 … 51–60 English
words, see data.long_test_set): one BLEU and chrF per length bucket.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import sacrebleu
import torch

from attn_demo.bench import SENTENCES, timed
from attn_demo.checkpoint import write_model_card
from attn_demo.data import TEST_SET, long_test_set, read_pairs
from attn_demo.translator import Translator, load_translator

LENGTH_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 10_000))  # English words
BATCH_SENTENCES = 64


def translate_all(translator: Translator, sources: list[str], beam: int) -> tuple[list[str], int]:
    """Translations in input order (length-sorted batches inside) and the number of refused inputs."""
    outputs, accepted = [""] * len(sources), []
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
            outputs[i] = result.text
    return outputs, len(sources) - len(accepted)


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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="checkpoint folder or Hub repo id")
    p.add_argument("--data", type=Path, default=TEST_SET, help="TSV of english<TAB>french pairs")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--long", action="store_true",
                   help="score the long-sentence test set built from --data: BLEU and chrF per bucket of English words")
    p.add_argument("--per-bucket", type=int, default=200, help="inputs per length bucket with --long")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--card", action="store_true",
                   help="record the scores, and the latency of a 15-word sentence, in the checkpoint folder's model card")
    args = p.parse_args(argv)
    translator = load_translator(args.model)
    pairs = read_pairs(args.data)
    command = "python -m attn_demo.evaluate " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.long:
        return main_long(args, translator, pairs, command)
    sources, references = [en for en, _ in pairs], [fr for _, fr in pairs]
    start = time.time()
    hypotheses, refused = translate_all(translator, sources, args.beam)
    result = score(sources, hypotheses, references)
    result["refused"] = refused
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.model}: {result['n']} sentences, beam {args.beam}, {time.time() - start:.0f} s, {refused} refused")
        print(f"BLEU {result['bleu']}  chrF {result['chrf']}")
        for name, bucket in result["by_length"].items():
            print(f"  {name:>6} words  n={bucket['n']:5d}  BLEU {bucket['bleu']}")
    if args.card:
        latency = timed(lambda: translator.translate(SENTENCES[15]), runs=30, warmup=5)
        write_model_card(translator.folder, results={
            **result, "beam": args.beam, "dataset": args.data.name,
            "latency_15_words_greedy": {**latency, "device": str(translator.device), "torch_threads": torch.get_num_threads()},
            "command": command,
        })


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
