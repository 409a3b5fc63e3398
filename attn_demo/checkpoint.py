"""Checkpoint folders in Hugging Face Hub layout, saved and loaded strictly.

    config.json          ModelConfig
    model.safetensors    the weights, stored as float16 (upcast to float32 on load)
    source.model         SentencePiece model for English
    target.model         SentencePiece model for French
    README.md            model card: Hub YAML metadata, training command, measured scores
    training-data.json   what it learned from (attn_demo.coverage), optional
    timeline.json        how it learned: α and translations of the page's sentences during training (attn_demo.timeline), optional
"""
import json
import shutil
from pathlib import Path

import torch
from huggingface_hub import EvalResult, ModelCard, ModelCardData
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from attn_demo.alignment import links_source
from attn_demo.attention import KINDS
from attn_demo.config import ModelConfig
from attn_demo.model import Seq2Seq
from attn_demo.timeline import AGREEMENT, first_agreement, read_timeline
from attn_demo.tokenizer import Tokenizer

CHECKPOINT_FILES = ("config.json", "model.safetensors", "source.model", "target.model")
TRAINING_DATA = "training-data.json"


def save_checkpoint(folder: Path, model: Seq2Seq, src_tok: Tokenizer, tgt_tok: Tokenizer) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.config.to_json(folder / "config.json")
    weights = {name: t.detach().to("cpu", torch.float16).contiguous() for name, t in model.state_dict().items()}
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    for tok, name in ((src_tok, "source.model"), (tgt_tok, "target.model")):
        copy_into(tok.model_file, folder / name)


def copy_into(source: Path, target: Path) -> None:
    """A file copied into a checkpoint folder, unless it is already that file (a run's --out may be
    the folder its tokenizers and training data were written to)."""
    if Path(source).resolve() != Path(target).resolve():
        shutil.copyfile(source, target)


def load_checkpoint(folder: Path, device="cpu") -> tuple[Seq2Seq, Tokenizer, Tokenizer]:
    """Model (in eval mode) and tokenizers; any missing file or mismatched weight is an error naming it."""
    folder = Path(folder)
    for name in CHECKPOINT_FILES:
        if not (folder / name).is_file():
            raise FileNotFoundError(f"checkpoint {folder} has no {name}")
    config = ModelConfig.from_json(folder / "config.json")
    model = Seq2Seq(config)
    model.load_state_dict(_read_weights(folder / "model.safetensors", model))
    return model.to(device).eval(), Tokenizer(folder / "source.model"), Tokenizer(folder / "target.model")


def read_training_data(folder: Path) -> dict | None:
    """The checkpoint's TRAINING_DATA (see attn_demo.coverage), its english_words as a set; None for
    a checkpoint without one."""
    path = Path(folder) / TRAINING_DATA
    if not path.is_file():
        return None
    facts = json.loads(path.read_text(encoding="utf-8"))
    return {**facts, "english_words": frozenset(facts["english_words"])}


def warm_start(model: Seq2Seq, folder: Path) -> dict:
    """Load a checkpoint's weights into `model`, which may differ from it in its attention alone.

    Same attention: every weight, strictly. Another attention: every weight outside the attention
    module must match in name and shape and is taken; the attention module starts afresh, except
    luong-lowrank from luong-general, whose U, V come from the rank-R truncated SVD of the trained
    W (the best rank-R approximation of s_tᵀ W h_j, Eckart–Young), and bahdanau-coverage from
    bahdanau, which takes the additive score's W_h, W_s and v (its w_c starts at zero). Returns what was taken and what
    is new, for the log and the model card.
    """
    source = load_checkpoint(folder)[0]
    old, new = source.config.attention, model.config.attention
    if old == new:
        model.load_state_dict(source.state_dict())
        return {"checkpoint": str(folder), "attention": old}
    own, stored = model.state_dict(), source.state_dict()
    taken = {name: t for name, t in stored.items() if name in own and own[name].shape == t.shape}
    if (old, new) == ("luong-general", "luong-lowrank"):
        taken.update(_low_rank_factors(stored["decoder.attention.W.weight"], model.config.attn_rank))
    fresh = sorted(set(own) - set(taken))
    kept_apart = [name for name in fresh if not name.startswith("decoder.attention.")]
    if kept_apart:
        raise ValueError(f"{folder} ({old}) cannot warm-start {new}: only the attention module may differ, "
                         f"but {kept_apart} do not match")
    model.load_state_dict({**own, **taken})
    if new == "none":
        how = "no attention module: the decoder reads the fixed c instead"
    elif "decoder.attention.U.weight" in taken:
        how = "U, V from the rank-R truncated SVD of the trained W"
    elif fresh == ["decoder.attention.w_c.weight"]:
        how = "the score's W_h, W_s and v taken; the coverage weight w_c starts at zero, so the model starts as the checkpoint"
    else:
        how = "the attention module initialised afresh"
    return {"checkpoint": str(folder), "attention": old, "replaced_by": new, "new_weights": fresh, "how": how,
            "dropped_weights": sorted(set(stored) - set(taken))}


def warm_start_text(warm: dict) -> str:
    """One line on what warm_start took, for the log and the card."""
    name = f"`{warm['checkpoint']}`"
    if "replaced_by" not in warm:
        return f"continued from {name}: every weight"
    return (f"warm-started from {name} ({warm['attention']}), attention replaced by {warm['replaced_by']}: every other "
            f"weight taken; {warm['how']} (new: {', '.join(warm['new_weights']) or 'none'}; "
            f"left behind: {', '.join(warm['dropped_weights']) or 'none'})")


def _low_rank_factors(W: torch.Tensor, rank: int) -> dict:
    """U (R, H), V (R, D) with UᵀV the best rank-R approximation of W (H, D): W ≈ P_R Σ_R Q_Rᵀ,
    split evenly as U = √Σ_R P_Rᵀ, V = √Σ_R Q_Rᵀ."""
    P, sigma, Qt = torch.linalg.svd(W, full_matrices=False)
    root = sigma[:rank].sqrt()[:, None]  # (R, 1)
    return {"decoder.attention.U.weight": root * P[:, :rank].T, "decoder.attention.V.weight": root * Qt[:rank]}


def _read_weights(path: Path, model: Seq2Seq) -> dict:
    try:
        stored = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"{path} is not a readable safetensors file: {error}") from error
    expected = model.state_dict()
    missing, extra = sorted(set(expected) - set(stored)), sorted(set(stored) - set(expected))
    if missing or extra:
        raise ValueError(f"{path} does not match config.json: missing weights {missing}, unexpected weights {extra}")
    for name, tensor in stored.items():
        if tensor.shape != expected[name].shape:
            raise ValueError(f"{path}: weight {name} has shape {tuple(tensor.shape)}, "
                             f"config.json implies {tuple(expected[name].shape)}")
    return {name: tensor.float() for name, tensor in stored.items()}


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
{training_text}

### Timeline
{timeline_text}

## Evaluation
{results_text}

### By sentence length
{length_text}

### Decoding
{decoding_text}

### Long natural sentences (development set)
{dev_text}

### The page's examples
{examples_text}

### Speed
{speed_text}

## Does attention align words?
{alignment_text}

## Data and credits
Trained on the English–French sentence pairs of [Tatoeba](https://tatoeba.org) as packaged by
[manythings.org/anki](https://www.manythings.org/anki/) (release 2019-04-07), licensed
[CC-BY 2.0 FR](https://creativecommons.org/licenses/by/2.0/). Every pair whose English side occurs in
the Tatoeba Challenge test set (v2020-07-28, eng-fra) was removed before training; the validation
split holds out whole English sentences.
"""

def write_model_card(folder: Path, training: dict | None = None, results: dict | None = None,
                     length_curve: dict | None = None, alignment: dict | None = None, dev_results: dict | None = None,
                     examples: dict | None = None, speed: dict | None = None, decoding: dict | None = None) -> None:
    """(Re)write README.md from the facts already in it plus new training facts, test results,
    scores by sentence length or alignment scores.

    results: {"bleu": …, "chrf": …, "n": …, "beam": …, "dataset": …, "by_length": {...}, "command": …}
    length_curve: {"dataset": …, "beam": …, "buckets": {"1-10": {"n", "bleu", "chrf", "refused"}, …}, "command": …},
    the scores on the long-sentence test set (evaluate --long); kept in the card data as is, so the
    app reads it without running anything, and in the model-index as one dataset per bucket.
    alignment: {"aer": {rule: …}, "precision": {…}, "recall": {…}, "aligner": {name: {"aer": …, …}},
                "n": …, "skipped": …, "dataset": …, "command": …}
    dev_results: like results, on the long natural sentences of the validation split (evaluate --dev), with "min_words"
    examples: {"beam": …, "translations": [{"source", "greedy", "beam"}], "command": …}, the page's sentences (evaluate --examples)
    speed: {"median_ms": …, "p95_ms": …, "n": …, "words": …, "device": …, "torch_threads": …, "date": …,
            "timed_with": [other models], "command": …}, translate() timed beside the other models (attn_demo.speed)
    decoding: {"beam": …, "n": …, "penalties": {"length", "coverage", "repeat"}, "tuned": row, "plain": row, "command": …},
              how a beam search ranks what it finishes, chosen on the tuning set (evaluate --tune); the app decodes with it
    """
    folder = Path(folder)
    card_path = folder / "README.md"
    old = ModelCard.load(card_path).data.to_dict() if card_path.is_file() else {}
    training = training or old.get("training", {})
    results = results or old.get("test_results")
    length_curve = length_curve or old.get("length_curve")
    alignment = alignment or old.get("alignment_results")
    dev_results = dev_results or old.get("dev_results")
    examples = examples or old.get("examples")
    speed = speed or old.get("speed")
    decoding = decoding or old.get("decoding")
    config = ModelConfig.from_json(folder / "config.json")
    kind = KINDS[config.attention]
    eval_results = []
    if results:
        eval_results = [EvalResult(task_type="translation", dataset_type="tatoeba", dataset_name=results["dataset"],
                                   dataset_config="eng-fra", dataset_split="test", metric_type=metric,
                                   metric_value=results[metric], metric_name=f"{metric.upper()} (sacreBLEU, beam {results['beam']})")
                        for metric in ("bleu", "chrf")]
    if length_curve:  # one model-index dataset per bucket: the Hub groups results by type, config and split
        eval_results += [EvalResult(task_type="translation", dataset_type="tatoeba", dataset_config="eng-fra",
                                    dataset_name=f"{length_curve['dataset']}, joined to {bucket} English words",
                                    dataset_split=f"test-joined-{bucket}-words", dataset_args={"english_words": bucket, "inputs": v["n"]},
                                    metric_type=metric, metric_value=v[metric],
                                    metric_name=f"{metric.upper()}, {bucket} words (sacreBLEU, beam {length_curve['beam']})")
                         for bucket, v in length_curve["buckets"].items() for metric in ("bleu", "chrf")]
    for rule, what in (("argmax", "attention"), ("integrated-gradients argmax", "integrated gradients")):
        if alignment and rule in alignment["aer"]:
            eval_results.append(EvalResult(task_type="word-alignment", dataset_type="hansards", dataset_name=alignment["dataset"],
                                           dataset_split="test", metric_type="aer", metric_value=alignment["aer"][rule],
                                           metric_name=f"AER of {what} (argmax per French word)"))
    data = ModelCardData(
        language=["en", "fr"], license="cc-by-2.0", library_name="pytorch", pipeline_tag="translation",
        tags=["translation", "attention", "gru", config.attention], datasets=["tatoeba"], metrics=["bleu", "chrf"],
        model_name=folder.name, eval_results=eval_results or None, training=training, test_results=results,
        length_curve=length_curve, dev_results=dev_results, examples=examples, speed=speed,
        alignment_results=alignment, decoding=decoding,
    )
    card = CARD_TEMPLATE.format(
        yaml=data.to_yaml(), name=folder.name, attention=config.attention, attention_title=kind.title,
        equation=_equation_text(kind), emb=config.emb_size, enc=config.enc_hidden_size,
        ann=config.annotation_size, dec=config.dec_hidden_size, parameters=f"{training.get('parameters', 0):,}",
        vocab=config.src_vocab_size, training_text=_training_text(training), results_text=_results_text(results),
        length_text=_length_text(length_curve), dev_text=_dev_text(dev_results), examples_text=_examples_text(examples),
        speed_text=_speed_text(speed), decoding_text=_decoding_text(decoding),
        alignment_text=_alignment_text(alignment), timeline_text=_timeline_text(read_timeline(folder)),
    )
    card_path.write_text(card)


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
