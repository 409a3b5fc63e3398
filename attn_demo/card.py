"""The model card: a checkpoint's README.md, read and written.

Its Hub YAML front matter holds every fact measured about the model, one key per section (SECTIONS:
training, test_results, …); its text is written from those facts alone, so a card can always be
re-written from its own front matter:

    python -m attn_demo.card checkpoints/*                                # every card, re-written
    python -m attn_demo.card checkpoints/a-model --timeline-from runs/a   # a separate run's timeline beside it
"""
import argparse
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData
from huggingface_hub.repocard_data import model_index_to_eval_results

from attn_demo.alignment import links_source
from attn_demo.attention import KINDS
from attn_demo.cli import HelpFormatter
from attn_demo.config import ModelConfig
from attn_demo.timeline import AGREEMENT, attach, first_agreement, read_timeline

CARD = "README.md"


def read_card(folder: Path) -> dict:
    """A checkpoint's card front matter as plain data (training, test_results, …, model-index); {} without a card."""
    path = Path(folder) / CARD
    return ModelCard.load(path).data.to_dict() if path.is_file() else {}


def scores_on_test_set(card: dict) -> dict:
    """The whole-test-set scores of a card's model-index, e.g. {"bleu": 41.2, "chrf": 60.1}; {} where none.
    (The long-sentence buckets carry their length as dataset args, and are left out.)"""
    if "model-index" not in card:
        return {}
    return {r.metric_type: r.metric_value for r in model_index_to_eval_results(card["model-index"])[1]
            if r.dataset_args is None}


CARD_TEMPLATE = """---
{yaml}
---

# {name}: an English→French GRU encoder–decoder, {attention_title}

A small teaching model for attn-demo, an app that shows attention at work: a bidirectional GRU
encoder and a GRU decoder — **{attention_title}** — trained on a CPU so that what it reads at
every step can be drawn and inspected. It is not a production translator.

## Architecture
- attention: `{attention}` — {equation}
- sizes: embeddings {emb}, encoder 2×{enc} (annotations h_j of size {ann}), decoder {dec}; {parameters} parameters
- SentencePiece unigram tokenizers, one per language (`source.model`, `target.model`), {vocab} pieces each,
  trained on the training split only
- weights stored as float16 in `model.safetensors`, upcast to float32 when loaded

## Training
{training}

### Timeline
{timeline}

## Evaluation
{test_results}

### By sentence length
{length_curve}

### Decoding
{decoding}

### Long natural sentences (development set)
{dev_results}

### The page's examples
{examples}

### Speed
{speed}

## Does attention align words?
{alignment_results}

## Data and credits
Trained on the English–French sentence pairs of [Tatoeba](https://tatoeba.org) as packaged by
[manythings.org/anki](https://www.manythings.org/anki/) (release 2019-04-07), licensed
[CC-BY 2.0 FR](https://creativecommons.org/licenses/by/2.0/). Every pair whose English side occurs in
the Tatoeba Challenge test set (v2020-07-28, eng-fra) was removed before training; the validation
split holds out whole English sentences.
"""

def write_model_card(folder: Path, **sections) -> None:
    """(Re)write README.md from the sections given, keeping every other section from the card already
    there. Each argument is named as its card key (SECTIONS) and holds what evaluate, speed or train
    measured, e.g. test_results={"bleu": …, "chrf": …, "n": …, "beam": …, "dataset": …, "by_length": {…},
    "command": …}; the card's text is written from these facts alone."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise TypeError(f"a model card has no section {sorted(unknown)}; its sections are {list(SECTIONS)}")
    folder = Path(folder)
    old = read_card(folder)
    facts = {key: sections[key] if key in sections else old.get(key) for key in SECTIONS}
    config = ModelConfig.from_json(folder / "config.json")
    kind = KINDS[config.attention]
    data = ModelCardData(
        language=["en", "fr"], license="cc-by-2.0", library_name="pytorch", pipeline_tag="translation",
        tags=["translation", "attention", "gru", config.attention], datasets=["tatoeba"], metrics=["bleu", "chrf"],
        model_name=folder.name, eval_results=_eval_results(facts) or None, **facts,
    )
    text = CARD_TEMPLATE.format(
        yaml=data.to_yaml(), name=folder.name, attention=config.attention, attention_title=kind.title,
        equation=_equation_text(kind), emb=config.emb_size, enc=config.enc_hidden_size, ann=config.annotation_size,
        dec=config.dec_hidden_size, parameters=f"{(facts['training'] or {}).get('parameters', 0):,}",
        vocab=config.src_vocab_size, timeline=_timeline_text(read_timeline(folder)),
        **{key: write(facts[key]) for key, write in SECTIONS.items()},
    )
    (folder / CARD).write_text(text)


def _eval_results(facts: dict) -> list[EvalResult]:
    """The Hub's model-index: the test-set scores, one dataset per long-sentence bucket (the Hub groups
    results by type, config and split), and the AER of α and of integrated gradients."""
    results, curve, alignment = facts["test_results"], facts["length_curve"], facts["alignment_results"]
    eval_results = []
    if results:
        eval_results = [EvalResult(task_type="translation", dataset_type="tatoeba", dataset_name=results["dataset"],
                                   dataset_config="eng-fra", dataset_split="test", metric_type=metric,
                                   metric_value=results[metric], metric_name=f"{metric.upper()} (sacreBLEU, beam {results['beam']})")
                        for metric in ("bleu", "chrf")]
    if curve:
        eval_results += [EvalResult(task_type="translation", dataset_type="tatoeba", dataset_config="eng-fra",
                                    dataset_name=f"{curve['dataset']}, joined to {bucket} English words",
                                    dataset_split=f"test-joined-{bucket}-words", dataset_args={"english_words": bucket, "inputs": v["n"]},
                                    metric_type=metric, metric_value=v[metric],
                                    metric_name=f"{metric.upper()}, {bucket} words (sacreBLEU, beam {curve['beam']})")
                         for bucket, v in curve["buckets"].items() for metric in ("bleu", "chrf")]
    for rule, what in (("argmax", "attention"), ("integrated-gradients argmax", "integrated gradients")):
        if alignment and rule in alignment["aer"]:
            eval_results.append(EvalResult(task_type="word-alignment", dataset_type="hansards", dataset_name=alignment["dataset"],
                                           dataset_split="test", metric_type="aer", metric_value=alignment["aer"][rule],
                                           metric_name=f"AER of {what} (argmax per French word)"))
    return eval_results


def _equation_text(kind) -> str:
    """The attention type as the card states it: its score, where it comes from, how c_t is used."""
    score = f"${kind.score}$ ({kind.source}). " if kind.score else f"({kind.source}) "
    return score + kind.context


def training_runs(training: dict) -> list[dict]:
    """A card's training facts as its runs, first to last (each continued run records the one before it)."""
    runs = []
    while training:
        runs.insert(0, training)
        training = (training.get("continued_from") or {}).get("training") or {}
    return runs


def run_gpu(run: dict) -> str | None:
    """The GPU a training run used, None for the CPU (a run from before the device was recorded ran on the CPU)."""
    device = run.get("device", "CPU")
    return None if device == "CPU" else device


def warm_start_text(warm: dict) -> str:
    """One line on what warm_start took, for the log and the card."""
    name = f"`{warm['checkpoint']}`"
    if "replaced_by" not in warm:
        return f"continued from {name}: every weight"
    return (f"warm-started from {name} ({warm['attention']}), attention replaced by {warm['replaced_by']}: every other "
            f"weight taken; {warm['how']} (new: {', '.join(warm['new_weights']) or 'none'}; "
            f"left behind: {', '.join(warm['dropped_weights']) or 'none'})")


def _training_text(t: dict) -> str:
    """Every training run, first to last: from scratch, continued, or warm-started with another attention."""
    if not t:
        return "Not recorded."
    runs = training_runs(t)
    if len(runs) == 1:
        return "From scratch, " + _run_text(t)
    steps = []
    for i, run in enumerate(runs, start=1):
        earlier = run.get("continued_from")
        if earlier is None:
            start = "From scratch"
        elif "replaced_by" in earlier:
            text = warm_start_text(earlier)
            start = f"{text[0].upper()}{text[1:]}; its tokenizers, a fresh optimizer and schedule"
        else:
            start = f"Continued from `{earlier['checkpoint']}` (its weights and tokenizers; a fresh optimizer and schedule)"
        steps.append(f"{i}. {start}: {_run_text(run)}")
    return f"In {len(runs)} runs.\n\n" + "\n\n".join(steps)


def _run_text(t: dict) -> str:
    tokens = f", {t['target_tokens']:,} target pieces" if "target_tokens" in t else ""
    joins = (f", {t['join_prob']:.0%} of each epoch's examples replaced by 2–{t['join_max']} pairs joined in order"
             if t.get("join_prob") else "")
    if t.get("clause_join_prob"):
        joins += f", {t['clause_join_prob']:.0%} by 2–3 statements joined into one sentence by a connective"
    dropout = f", dropout {t['dropout']:g}" if "dropout" in t else ""
    where = f"one {run_gpu(t)}" if run_gpu(t) else f"{t['threads']} CPU thread(s)"
    return (f"{t['minutes']} minutes on {where}, {t['steps']} updates{tokens}{joins}{dropout}, "
            f"{t['epochs']} epochs over {t['training_pairs']:,} pairs; best greedy validation BLEU {t['valid_bleu_greedy']} "
            f"(chrF {t['valid_chrf_greedy']}).\n\n   ```\n   {t['command']}\n   ```")


def _timeline_text(timeline: dict | None) -> str:
    if not timeline:
        return "Not recorded (`timeline.json` is written by runs since it was introduced)."
    points = timeline["points"]
    whose = ("the run that made these weights" if timeline["made_these_weights"] else
             "**a separate run of the same recipe, not the run that made these weights**")
    start = "from scratch" if timeline["from_scratch"] else "continued from a trained model"
    agreed = first_agreement(timeline)
    agreement = ("" if agreed is None else f" Its α first agrees with its final argmax alignment on at least "
                 f"{AGREEMENT:.0%} of the probe sentences' steps after {agreed:,} target pieces.")
    return (f"`timeline.json` holds {len(points)} points of {whose} ({start}), from {points[0]['target_pieces']:,} to "
            f"{points[-1]['target_pieces']:,} target pieces: at each, the validation BLEU (greedy), the training loss, "
            f"and the greedy translation and α of the page's sentences (`attn_demo.timeline`).{agreement}"
            f"\n\n```\n{timeline['command']}\n```")


def _decoding_text(d: dict | None) -> str:
    """The beam search's ranking as tuned, with what it changed on the tuning set."""
    if not d:
        return "A beam search ranks what it finishes by log p per piece (no coverage penalty); not tuned."
    pen, tuned, plain = d["penalties"], d["tuned"], d["plain"]
    length = "log p per piece" if pen["length"] is None else f"log p over ((5 + |Y|) / 6)^{pen['length']:g}"
    return (f"A beam search ranks what it finishes by {length}, coverage penalty β_cov = {pen['coverage']:g}, "
            f"repeat penalty β_rep = {pen['repeat']:g} (`search.Penalties`), chosen on {d['n']} sentences never trained on "
            f"(`evaluate --tune`, beam {d['beam']}): BLEU {plain['bleu']} → {tuned['bleu']}, chrF {plain['chrf']} → "
            f"{tuned['chrf']}; of its {d.get('n_long', d['n'])} long ones, those that repeat or are short "
            f"{plain['repeat_or_short']:.1%} → {tuned['repeat_or_short']:.1%}.\n\n"
            f"```\n{d['command']}\n```")


def _results_text(r: dict | None) -> str:
    if not r:
        return "Not evaluated yet."
    return (f"{r['dataset']}, {r['n']} sentences, beam {r['beam']}, sacreBLEU (default tokeniser, detokenised output):\n"
            f"**BLEU {r['bleu']}**, **chrF {r['chrf']}**; an input the model refuses (mostly characters never seen in "
            f"training) counts as an empty translation: {r.get('refused', 0)} here.{_eos_text(r)}{_faults_text(r)}"
            f"\n\n{_by_length_table(r['by_length'])}"
            f"\n\n```\n{r['command']}\n```")


def _speed_text(s: dict | None) -> str:
    if not s:
        return "Not measured yet."
    beside = (f", in the same sitting as {', '.join(f'`{name}`' for name in s['timed_with'])} (each round times every "
              "model once, in a new order, so that a busy minute on a shared machine slows each alike): compare it with "
              "theirs, not with figures from another day" if s["timed_with"] else "")
    return (f"`translate()` of a {s['words']}-word sentence, greedy, on {s['device']} ({s['torch_threads']} thread(s)), "
            f"{s['date']}: **median {s['median_ms']} ms**, p95 {s['p95_ms']} ms over {s['n']} runs after warm-up{beside}."
            f"\n\n```\n{s['command']}\n```")


def _eos_text(r: dict) -> str:
    share = r.get("eos_argmax_share")
    return ("" if share is None else f" Of the output steps of these translations, {share:.1%} put most of their "
            "attention on the sentence's `</s>`.")


def _by_length_table(by_length: dict) -> str:
    rows = "\n".join(f"| {bucket} | {v['n']} | {v['bleu']} |" for bucket, v in by_length.items())
    return f"| source words | sentences | BLEU |\n|---|---|---|\n{rows}"


def _length_text(curve: dict | None) -> str:
    if not curve:
        return "Not evaluated yet."
    rows = "\n".join(f"| {bucket} | {v['n']} | {v['bleu']} | {v['chrf']} |" for bucket, v in curve["buckets"].items())
    return (f"Long-sentence test set: pairs of {curve['dataset']} joined in order into inputs of each length (seeded, "
            f"never trained on; see `attn_demo.data.long_test_set`), beam {curve['beam']}, sacreBLEU:\n\n"
            f"| English words | inputs | BLEU | chrF |\n|---|---|---|---|\n{rows}\n\n```\n{curve['command']}\n```")


def _dev_text(d: dict | None) -> str:
    if not d:
        return "Not evaluated yet."
    return (f"The validation split's {d['n']} pairs of {d['min_words']} or more English words, sentences written as one "
            f"and never trained on (`attn_demo.data.long_dev_set`), beam {d['beam']}, sacreBLEU: **BLEU {d['bleu']}**, "
            f"chrF {d['chrf']}.{_faults_text(d)}\n\n{_by_length_table(d['by_length'])}\n\n```\n{d['command']}\n```")


def _faults_text(r: dict) -> str:
    """Repeated and dropped phrases (evaluate.faults), where measured."""
    f = r.get("faults")
    if not f:
        return ""
    return (f" Of its {f['n']} sentences of {f['min_words']}+ English words, **{f['repeat_or_short']:.1%} repeat a phrase "
            f"or are short**: {f['repeat']:.1%} repeat some word pair more often than the reference, {f['short']:.1%} have "
            f"under {f.get('short_ratio', 0.8):.0%} of its words (most often a dropped clause).")


def _examples_text(e: dict | None) -> str:
    if not e:
        return "Not translated yet."
    rows = "\n".join(f"| {row['source']} | {row['greedy']} | {row['beam']} |" for row in e["translations"])
    return (f"What the model writes for the sentences the app offers (`attn_demo.examples`), greedy as the page opens "
            f"and with beam {e['beam']}:\n\n| English | greedy | beam {e['beam']} |\n|---|---|---|\n{rows}\n\n```\n{e['command']}\n```")


def _alignment_text(a: dict | None) -> str:
    if not a:
        return "Not measured yet."
    rows = "\n".join(f"| {links_source(rule)} | {a['aer'][rule]} | {a['precision'][rule]} | {a['recall'][rule]} |" for rule in a["aer"])
    aligner = "\n".join(f"| {name} | {s['aer']} | {s['precision']} | {s['recall']} |" for name, s in a["aligner"].items())
    return (f"Gold word alignments of {a['dataset']} (English–French Hansards, HLT-NAACL 2003), {a['n']} sentences "
            f"teacher-forced through the model ({a['skipped']} skipped: refused by the model, e.g. for characters it "
            "never saw, or pieces that do not spell the gold words). "
            "Links are drawn from word-level α (an English word's α is the sum over its pieces, a French word's row the "
            "mean of its pieces' rows, EOS dropped) by the rules of `attn_demo.alignment`; `+1` rules read a French "
            "word's links from the next step's α. AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|) (Och & Ney 2003), lower is "
            "better; an eflomal word aligner on the same sentences is the reference.\n\n"
            f"| links from | AER | precision | recall |\n|---|---|---|---|\n{rows}\n{aligner}\n\n```\n{a['command']}\n```")


# Each section of the card: its key in the front matter (in the order the YAML lists them) and what
# writes its text. What each holds, as evaluate, speed and train write it:
#   training: train's facts of the run that made the weights, {"command", "minutes", "steps", …, "continued_from"}
#   test_results: {"bleu", "chrf", "n", "beam", "dataset", "by_length": {...}, "faults", "command"} (evaluate --card)
#   length_curve: {"dataset", "beam", "buckets": {"1-10": {"n", "bleu", "chrf", "refused"}, …}, "command"} (--long)
#   dev_results: like test_results, on the validation split's long natural sentences, with "min_words" (--dev)
#   examples: {"beam", "translations": [{"source", "greedy", "beam"}], "command"}, the page's sentences (--examples)
#   speed: {"median_ms", "p95_ms", "n", "words", "device", "torch_threads", "date", "timed_with", "command"} (speed)
#   alignment_results: {"aer": {rule: …}, "precision", "recall", "aligner": {name: {…}}, "n", "skipped", "dataset",
#                       "command"} (--alignments)
#   decoding: {"beam", "n", "penalties": {"length", "coverage", "repeat"}, "tuned": row, "plain": row, "command"}: how a
#             beam search ranks what it finishes, chosen on the tuning set (--tune); the app decodes with it
SECTIONS = {
    "training": _training_text,
    "test_results": _results_text,
    "length_curve": _length_text,
    "dev_results": _dev_text,
    "examples": _examples_text,
    "speed": _speed_text,
    "alignment_results": _alignment_text,
    "decoding": _decoding_text,
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("checkpoints", type=Path, nargs="+", help="the checkpoint folders whose cards are re-written")
    p.add_argument("--timeline-from", type=Path, metavar="RUN",
                   help="first put the timeline of this run folder beside each checkpoint, marked as not the run "
                        "that made its weights (attn_demo.timeline.attach)")
    args = p.parse_args(argv)
    for folder in args.checkpoints:
        if args.timeline_from:
            timeline = attach(args.timeline_from, folder)
            print(f"{folder}: {len(timeline['points'])} points, first α agreement after "
                  f"{first_agreement(timeline)} target pieces")
        write_model_card(folder)


if __name__ == "__main__":
    main()
