"""The model card: a checkpoint's README.md and the facts it is written from (card.json), read and written.

Each section of its text is written from the facts measured (SECTIONS: training, test_results, …); card.json
beside it keeps those the app and the tools read, under the section's key, and the card's Hub YAML front matter
what the Hub reads (language, licence, tags). Re-writing a card keeps every section not given, text and facts, as
it was:

    python -m attn_demo.checkpoints.card checkpoints/*                                # every card, re-written
    python -m attn_demo.checkpoints.card checkpoints/a-model --timeline-from runs/a   # a separate run's timeline beside it
    python -m attn_demo.checkpoints.card checkpoints/a-model --plateau-from runs/b    # its continuation was no better

Each command is kept as a newcomer reruns it from a checkout (`rerunnable`): a run's folders under
runs/ and its copies of the default data are machine-specific, so they are written as the
checkpoint folder and the defaults.
"""
import argparse
import json
import re
from pathlib import Path

import yaml
from huggingface_hub import ModelCard, ModelCardData

from attn_demo.cli import HelpFormatter
from attn_demo.data.datasets import HANSARDS
from attn_demo.data.pairs import TEST_SET, TRAIN_POOL
from attn_demo.decoding.grids import grid_name
from attn_demo.measures.alignment import links_source
from attn_demo.measures.marks import MARKS
from attn_demo.measures.timeline import AGREEMENT, attach, first_agreement, read_timeline
from attn_demo.models.attention import KINDS
from attn_demo.models.config import ACTIVATION_NAMES, read_config

CARD = "README.md"
FACTS = "card.json"  # the facts of the card's sections, by key: the card shows them, the app and the tools read them
HUB_KEYS = ("language", "license", "library_name", "pipeline_tag", "tags", "datasets", "metrics")  # the front matter's
# for scale beside a card's general-text scores: a big Transformer trained on far more data, as shared/data's README reports it
GENERAL_REFERENCE = ("OPUS-MT's big English–French Transformer, trained on far more data, reports BLEU 52.2 / chrF 72.5 "
                     "on it")
DEFAULT_DATA = {"--train-pool": TRAIN_POOL.name, "--test-set": TEST_SET.name}  # options whose default files a run may name a copy of
DEFAULT_FOLDERS = {"--alignments": HANSARDS.name}  # options that read the data home's folder when given none


def read_card(folder: Path) -> dict:
    """A checkpoint's card facts as plain data (training, test_results, …); {} without a card. A card written
    before its facts had a file of their own keeps them in its front matter, beside the Hub's keys."""
    folder = Path(folder)
    if (folder / FACTS).is_file():
        return json.loads((folder / FACTS).read_text(encoding="utf-8"))
    if not (folder / CARD).is_file():
        return {}
    return {key: value for key, value in ModelCard.load(folder / CARD).data.to_dict().items() if key not in HUB_KEYS}


def scores_on_test_set(card: dict) -> dict:
    """A card's scores on the whole test set, e.g. {"bleu": 41.2, "chrf": 60.1}; {} where not measured."""
    results = card.get("test_results") or {}
    return {metric: results[metric] for metric in ("bleu", "chrf") if metric in results}


CARD_TEMPLATE = """---
{yaml}---

# {name}: English→French, {attention_title}

A teaching model of attn-demo, the app that shows attention at work; not a production translator.

## Architecture
- attention `{attention}`: {equation}
- {sizes}; {parameters} parameters
- SentencePiece unigram tokenizers of the training split (`source.model`, `target.model`), {vocab} pieces each;
  float16 weights (`model.safetensors`), read as float32

## Training
{training}

### Timeline
{timeline}

## Evaluation
{test_results}

### By sentence length
{length_curve}

### General text
{general_results}

### What each head does
{heads}

### Decoding
{decoding}

### Coverage marks
{marks}

### Long natural sentences (development set)
{dev_results}

### The page's examples
{examples}

### Speed
{speed}

## Does attention align words?
{alignment_results}

## Data and credits
[Tatoeba](https://tatoeba.org)'s English–French pairs ([manythings.org/anki](https://www.manythings.org/anki/), 2019-04-07,
[CC-BY 2.0 FR](https://creativecommons.org/licenses/by/2.0/)) less those whose English is in the Tatoeba Challenge test
set (v2020-07-28); the validation split holds out whole English sentences.
"""


def write_model_card(folder: Path, **sections) -> None:
    """(Re)write README.md with the sections given, keeping every other section, text and facts, from
    the card already there. Each argument is named as its card key (SECTIONS) and holds what evaluate,
    speed or train measured, e.g. test_results={"bleu": …, "chrf": …, "n": …, "beam": …, "dataset": …,
    "by_length": {…}, "command": …}."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise TypeError(f"a model card has no section {sorted(unknown)}; its sections are {list(SECTIONS)}")
    folder = Path(folder)
    old = read_card(folder)
    old_texts = _section_texts((folder / CARD).read_text()) if old else {}
    config = read_config(folder / "config.json")
    kind = KINDS[config.attention]
    facts, texts = {}, {}
    for key, (write, kept) in SECTIONS.items():
        if key not in sections and key in old_texts and not _said_unmeasured(key, old_texts[key]):  # as it was
            facts[key], texts[key] = old.get(key), old_texts[key]
            continue
        given = _rerunnable(key, sections[key] if key in sections else old.get(key), folder.name)
        texts[key] = write(given) if given or key not in UNMEASURED else UNMEASURED[key](kind)
        facts[key] = given if kept is None or not given else {k: v for k, v in given.items() if k in kept} or None
    architecture = "transformer" if kind.heads else "gru"
    data = ModelCardData(
        language=["en", "fr"], license="cc-by-2.0", library_name="pytorch", pipeline_tag="translation",
        tags=["translation", "attention", architecture, config.attention], datasets=["tatoeba"], metrics=["bleu", "chrf"],
    )
    text = CARD_TEMPLATE.format(
        yaml=_front_matter(data.to_dict()), name=folder.name, attention=config.attention, attention_title=kind.title,
        equation=_equation_text(kind), sizes=config.describe(), parameters=f"{(facts['training'] or {}).get('parameters', 0):,}",
        vocab=config.src_vocab_size, timeline=_timeline_text(read_timeline(folder), facts["training"], folder.name),
        **texts,
    )
    (folder / CARD).write_text(text)
    measured = {key: value for key, value in facts.items() if value is not None}
    (folder / FACTS).write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _section_texts(card: str) -> dict:
    """Each section's text in a card that CARD_TEMPLATE wrote, by key (each runs up to the next heading); {} for a
    card it did not write. A card written before a section of NEWER_SECTIONS existed reads as one without it."""
    template = CARD_TEMPLATE
    for heading, key in NEWER_SECTIONS.items():
        if heading not in card:
            template = template.replace(f"\n{heading}\n{{{key}}}\n", "")
    return _texts_by(template, card)


NEWER_SECTIONS = {"### General text": "general_results", "### What each head does": "heads"}  # older cards lack them


def _texts_by(template: str, card: str) -> dict:
    """The section texts of a card written by `template`; {} for one it did not write."""
    pattern = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m[1]}>.*?)" if m[1] in SECTIONS else ".*?",
                     re.escape(template))
    match = re.fullmatch(pattern, card, re.S)
    return match.groupdict() if match else {}


def _front_matter(data: dict) -> str:
    """The YAML front matter (the Hub's keys), a collection of plain values on one line ([en, fr]), as the Hub and
    yaml.safe_load read it; a long line is not wrapped."""
    return yaml.dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None, width=1000)


def rerunnable(command: str, name: str, out: str | None = None) -> str:
    """A recorded command as a newcomer reruns it from a checkout of checkpoint `name`: --out is `out`
    (by default checkpoints/<name>), a folder under runs/ is the checkpoint folder, --init-from names a
    checkpoint folder; a copy of a default data file (--train-pool, --test-set) or folder (--alignments'
    value), --run-dir under runs/, --resume, --json, --hyps and --keep-links are left out (each run goes on from nothing,
    prints for a reader, writes no side file)."""
    words, kept = command.split(), []
    while words:
        word = words.pop(0)
        if word in ("--resume", "--json"):
            continue
        if word in ("--hyps", "--keep-links") or (word == "--run-dir" and words[0].startswith("runs/")) or \
                (word in DEFAULT_DATA and Path(words[0]).name == DEFAULT_DATA[word]):
            words.pop(0)
        elif word in DEFAULT_FOLDERS and words and Path(words[0]).name == DEFAULT_FOLDERS[word]:
            kept.append(word)
            words.pop(0)
        elif word == "--out":
            kept += [word, out or f"checkpoints/{name}"]
            words.pop(0)
        elif word == "--init-from":
            kept += [word, checkpoint_folder(words.pop(0), name)]
        else:
            kept.append(f"checkpoints/{name}" if word.startswith("runs/") else word)
    return " ".join(kept)


def checkpoint_folder(folder: str, name: str) -> str:
    """Where a run's output is found in a checkout: checkpoints/<its name>; a run folder (runs/…) is an
    earlier state of checkpoint `name`, which its chain of runs goes on writing."""
    return f"checkpoints/{name}" if folder.startswith("runs/") else f"checkpoints/{Path(folder).name}"


def _rerunnable(key: str, facts: dict | None, name: str) -> dict | None:
    """A section's facts with its command rerunnable (see rerunnable). In the training chain each run
    writes the checkpoint the next one continues, and a warm start's lists of weights are left to its log."""
    if not facts:
        return facts
    if key != "training":
        return {**facts, "command": rerunnable(facts["command"], name)}
    runs = training_runs(facts)
    outs = [checkpoint_folder(later["continued_from"]["checkpoint"], name) for later in runs[1:]] + [None]
    chained = None
    for run, out in zip(runs, outs):
        run = {**run, "command": rerunnable(run["command"], name, out)}
        if run.get("continued_from"):
            warm = {k: v for k, v in run["continued_from"].items() if k not in ("new_weights", "dropped_weights", "training")}
            warm["checkpoint"] = checkpoint_folder(warm["checkpoint"], name)
            run["continued_from"] = {**warm, "training": chained} if chained else warm
        chained = run
    return chained


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


def _training_text(t: dict | None) -> str:
    """The history of the weights, one run a row, first to last, then each run's command."""
    if not t:
        return "Not recorded."
    runs = training_runs(t)
    rows = "\n".join(f"| {i} | {_start_text(run, i)} | {_run_row(run)} |" for i, run in enumerate(runs, start=1))
    warm_starts = [run.get("continued_from") or {} for run in runs]  # what each run took from the checkpoint before
    replaced = "".join(f"\n\nRun {i}: {w['attention']} attention replaced by {w['replaced_by']}, {w['how']}."
                       for i, w in enumerate(warm_starts, 1) if "replaced_by" in w)
    phis = "".join(f"\n\nRun {i}: every weight of `{w['checkpoint']}`, its feed-forward φ "
                   f"{ACTIVATION_NAMES[w['activation'][1]]} where it was {ACTIVATION_NAMES[w['activation'][0]]}."
                   for i, w in enumerate(warm_starts, 1) if "activation" in w)
    averaged = "".join(f"\n\nRun {i}: the mean of its weights at steps {', '.join(map(str, run['averaged_steps']))} "
                       "(`python -m attn_demo.training.average`), validated as such."
                       for i, run in enumerate(runs, 1) if run.get("averaged_steps"))
    commands = "\n".join(run["command"] for run in runs)
    checked = f"\n\n{_plateau_text(runs[-1]['plateau'], len(runs))}" if runs[-1].get("plateau") else ""
    return (f"{_pairs_text(runs)} Validation scores are greedy; a run ends at its budget or at its plateau (no better "
            "validation BLEU in its patience's validations in a row).\n\n| run | from | target pieces (updates, epochs) | time "
            "| dropout; joined | valid BLEU (chrF) | ended |\n"
            f"|---|---|---|---|---|---|---|\n{rows}{replaced}{phis}{averaged}\n\n```\n{commands}\n```{checked}")


def _plateau_text(check: dict, run: int) -> str:
    """Run `run` continued until its plateau and found no better (plateau_check), in a paragraph and its command."""
    test, n = check["test"], check.get("averaged")
    mean = f", the mean of its last {n} saves {check['valid_bleu_greedy']}" if n else ""
    tested = f"{'the mean' if n else 'its best'} ({_pieces(check['target_tokens'])} more target pieces, {check['minutes']} min)"
    ran = f", {_pieces(check['ran_target_tokens'])} target pieces on" if check.get("ran_target_tokens") else ""
    return (f"**At its plateau.** Run {run} was continued at the rate its schedule ended on until {check['patience']} "
            f"validations in a row had not beaten its best{ran}: best validation BLEU {check['valid_bleu_best']} against these "
            f"weights' {check['valid_bleu_before']}{mean}. On the Tatoeba test, beam {test['beam']}, {tested}: BLEU "
            f"{test['bleu']['score']} vs {test['bleu']['baseline']} (paired bootstrap p {test['bleu']['p']}), chrF "
            f"{test['chrf']['score']} vs {test['chrf']['baseline']} (p {test['chrf']['p']}): not better, so these "
            f"weights stand.\n\n```\n{check['command']}\n```")


def _pieces(n: int) -> str:
    """A count of target pieces as a card says it: "7.6M", or where under 0.1M, whole ("2,992")."""
    return f"{n / 1e6:.1f}M" if n >= 100_000 else f"{n:,}"


def plateau_check(candidate: Path, checkpoint: Path) -> dict:
    """What continuing `checkpoint` until its plateau gave, for the checkpoint's card: `candidate` is the run's
    folder (or the mean of its last saves: training.average), evaluated on the test set against the checkpoint
    (`evaluate --against`). Refused unless the run ended at its plateau and the test found it no better."""
    checkpoint = Path(checkpoint)
    facts, own = read_card(candidate), read_card(checkpoint)
    run, test = facts.get("training") or {}, facts.get("test_results") or {}
    if run.get("ended") != "plateau":
        raise ValueError(f"{candidate}: its run did not end at its plateau")
    against = next((a["all"] for a in test.get("against", []) if a["model"] == checkpoint.name), None)
    if against is None:
        raise ValueError(f"{candidate}: its test results hold no paired bootstrap against {checkpoint.name}")
    if against["bleu"]["score"] > against["bleu"]["baseline"] and against["bleu"]["p"] <= 0.05:
        raise ValueError(f"{candidate} is better than {checkpoint.name} on the test set: ship it instead")
    saves, timelines = run.get("averaged_steps") or [], [read_timeline(folder) for folder in (candidate, checkpoint)]
    # how far the continuation ran: its timeline goes on from the checkpoint's
    ran = timelines[0]["points"][-1]["target_pieces"] - timelines[1]["points"][-1]["target_pieces"] if all(timelines) else None
    return {"command": rerunnable(run["command"], checkpoint.name, f"checkpoints/{checkpoint.name}-plateau"),
            "target_tokens": run["target_tokens"], "ran_target_tokens": ran, "minutes": run["minutes"],
            "patience": run["patience"],
            "valid_bleu_best": run.get("valid_bleu_best", run["valid_bleu_greedy"]), "averaged": len(saves),
            "valid_bleu_greedy": run["valid_bleu_greedy"], "valid_bleu_before": own["training"]["valid_bleu_greedy"],
            "test": {"beam": test["beam"], "bleu": against["bleu"], "chrf": against["chrf"]}}


def _pairs_text(runs: list[dict]) -> str:
    pairs = sorted({run["training_pairs"] for run in runs})
    joins = sorted({run["join_max"] for run in runs if run.get("join_prob")})
    joined = f"; joined: 2–{'/'.join(map(str, joins))} pairs in order" if joins else ""
    clauses = ", or 2–3 statements by a connective" if any(run.get("clause_join_prob") for run in runs) else ""
    return f"On {' / '.join(f'{n:,}' for n in pairs)} training pairs{joined}{clauses}."


def _start_text(run: dict, i: int) -> str:
    earlier = run.get("continued_from")
    if earlier is None:
        return "scratch"
    return f"`{earlier['checkpoint']}`" if i == 1 or "replaced_by" in earlier else f"run {i - 1}"


def run_time(run: dict) -> str:
    """How long a run trained and where: "30.0 min, 2 CPU thread(s)", or part by part for a run that a --resume
    moved ("250.1 min, 1 CPU thread(s), then 6.2 min, NVIDIA H100")."""
    return ", then ".join(f"{part['minutes']} min, {run_gpu(part) or str(part['threads']) + ' CPU thread(s)'}"
                          for part in run.get("parts", [run]))


def _run_row(t: dict) -> str:
    tokens = f"{t['target_tokens']:,} " if "target_tokens" in t else ""
    joins = [f"{t['join_prob']:.0%} pairs" if t.get("join_prob") else "", f"{t['clause_join_prob']:.0%} clauses"
             if t.get("clause_join_prob") else "", f"pieces drawn, α {t['subword_alpha']:g}" if t.get("subword_alpha") else "",
             f"coverage loss {t['coverage_loss']:g}" if t.get("coverage_loss") else ""]
    dropout = f"{t['dropout']:g}" if "dropout" in t else "–"
    return (f"{tokens}({t['steps']}, {t['epochs']}) | {run_time(t)} | "
            f"{dropout}; {', '.join(part for part in joins if part) or 'none'} | {t['valid_bleu_greedy']} ({t['valid_chrf_greedy']}) "
            f"| {_ended_text(t)}")


def _ended_text(t: dict) -> str:
    """What ended a run: its plateau, or its budget (every run before --patience existed)."""
    return f"plateau ({t['patience']} validations)" if t.get("ended") == "plateau" else "budget"


def _timeline_text(timeline: dict | None, training: dict | None, name: str) -> str:
    """What timeline.json holds, and the run that recorded it (its command, unless it is the last run's)."""
    if not timeline:
        return "No `timeline.json` (written by runs since it was introduced)."
    points = timeline["points"]
    whose = ("the run that made these weights" if timeline["made_these_weights"] else
             "**a separate run of the same recipe, not the run that made these weights**")
    start = " (from scratch)" if timeline["from_scratch"] else ""
    agreed = first_agreement(timeline)
    agreement = ("" if agreed is None else f" Its α first agrees with its final argmax alignment on ≥ {AGREEMENT:.0%} "
                 f"of the steps after {agreed:,} target pieces.")
    command = rerunnable(timeline["command"], name)
    recorded = "" if training and command == training["command"] else f"\n\n```\n{command}\n```"
    return (f"`timeline.json`: {len(points)} points of {whose}{start}, from {points[0]['target_pieces']:,} to "
            f"{points[-1]['target_pieces']:,} target pieces: validation BLEU, training loss, the page's sentences with "
            f"their α.{agreement}{recorded}")


def _decoding_text(d: dict | None) -> str:
    """The beam search's ranking as tuned, with what it changed on the tuning set against plain log p per piece."""
    if not d:
        return "A beam search ranks what it finishes by log p per piece (no coverage penalty); not tuned."
    tuned, plain = d["tuned"], d["plain"]
    if tuned["penalties"] == plain["penalties"]:
        return (f"A beam search ranks what it finishes by {_ranking_text(d['penalties'])}: no ranking tried on "
                f"{d['n']} unseen sentences (beam {d['beam']}) had fewer long ones repeated or short at no cost in BLEU or "
                f"chrF.\n\n```\n{d['command']}\n```")

    def change(key: str) -> str:
        return f"{plain[key]:.2%} → {tuned[key]:.2%}"

    return (f"A beam search ranks what it finishes by {_ranking_text(d['penalties'])}, tuned on {d['n']} unseen sentences "
            f"(beam {d['beam']}) against {_ranking_text(plain['penalties'])}: BLEU {plain['bleu']} → {tuned['bleu']}, chrF "
            f"{plain['chrf']} → {tuned['chrf']}; of its {d.get('n_long', d['n'])} long ones, repeat or short "
            f"{change('repeat_or_short')} (repeat {change('repeat')}, short {change('short')}).\n\n```\n{d['command']}\n```")


def _ranking_text(penalties: dict) -> str:
    """A beam's ranking (search.Penalties) in a phrase."""
    length = "log p per piece" if penalties["length"] is None else f"log p over ((5 + |Y|) / 6)^{penalties['length']:g}"
    terms = f"β_cov {penalties['coverage']:g}, β_rep {penalties['repeat']:g}"
    return f"{length}, its beginnings at every step by log p with {terms}" if penalties.get("stepwise") else f"{length}, {terms}"


def _results_text(r: dict | None) -> str:
    if not r:
        return "Not evaluated yet."
    return (f"{r['dataset']}, {r['n']} sentences, beam {r['beam']}{_ranked_text(r)}, sacreBLEU: **BLEU {r['bleu']}**, "
            f"**chrF {r['chrf']}**{_refused_text(r)}.{_scored_text(r)}")


def _refused_text(r: dict) -> str:
    refused = r.get("refused", 0)
    return f" (inputs refused for unseen characters count as empty: {refused})" if refused else ""


def _speed_text(s: dict | None) -> str:
    if not s:
        return "Not measured yet."
    beside = ", timed beside the models named below" if s["timed_with"] else ""
    return (f"`translate()` of a {s['words']}-word sentence, greedy, on {s['device']} ({s['torch_threads']} thread(s)), "
            f"{s['date']}: **median {s['median_ms']} ms**, p95 {s['p95_ms']} ms{_max_text(s)} over {s['n']} runs{beside}."
            f"\n\n```\n{s['command']}\n```")


def _max_text(s: dict) -> str:
    return f", max {s['max_ms']} ms" if "max_ms" in s else ""


def _ranked_text(r: dict) -> str:
    penalties = r.get("penalties")
    return "" if penalties is None else f" ({_ranking_text(penalties)})"


def _eos_text(r: dict) -> str:
    share = r.get("eos_argmax_share")
    return "" if share is None else f" {share:.2%} of output steps attend most to `</s>`."


def _scored_text(r: dict) -> str:
    """What follows a set's scores, on the test set and the development set alike: `</s>`, repeats and drops,
    BLEU by English length, a paired bootstrap against each other model asked for, and the command."""
    return (f"{_eos_text(r)}{_faults_text(r)}\n\n{_by_length_table(r['by_length'])}{against_table(r.get('against'))}"
            f"\n\n```\n{r['command']}\n```")


def against_table(comparisons: list | None) -> str:
    """The paired bootstraps against other models (evaluate --against) as a table, a row each, on the whole set and
    on its long sentences where they were compared apart (some of the set, not all); "" without any."""
    if not comparisons:
        return ""
    long = comparisons[0]["long"]
    sets = [("all", "")] + ([("long", f", {long['min_words']}+ words ({long['n']})")] if "bleu" in long else [])
    header = " | ".join(f"{name}{label}" for key, label in sets for name in ("BLEU", "chrF"))
    rows = "\n".join(f"| {a['model']} | " + " | ".join(_versus(a[key][metric]) for key, _ in sets for metric in ("bleu", "chrf"))
                     + " |" for a in comparisons)
    return (f"\n\nPaired bootstrap (sacreBLEU) against each model named, this model's score first:\n\n| against | "
            f"{header} |\n|---|{'---|' * 2 * len(sets)}\n{rows}")


def _versus(r: dict) -> str:
    """One metric of a paired bootstrap: "41.0 vs 40.0 (p 0.001)", this model's score first."""
    return f"{r['score']} vs {r['baseline']} (p {r['p']})"


def against_text(a: dict) -> str:
    """The paired bootstrap in a line, as evaluate prints it: "against luong-en-fr: BLEU 41.0 vs 40.0 (p 0.001), …"."""
    def one(r):
        return ", ".join(f"{name} {_versus(r[metric])}" for metric, name in (("bleu", "BLEU"), ("chrf", "chrF")))
    long = a["long"]
    on_long = f"; on the {long['n']} sentences of {long['min_words']}+ words: {one(long)}" if "bleu" in long else ""
    return f"against {a['model']} (paired bootstrap): {one(a['all'])}{on_long}"


def _by_length_table(by_length: dict) -> str:
    rows = "\n".join(f"| {bucket} | {v['n']} | {v['bleu']} |" for bucket, v in by_length.items())
    return f"| source words | sentences | BLEU |\n|---|---|---|\n{rows}"


def _general_text(g: dict | None) -> str:
    """Scores on general text, FLORES-200 devtest (evaluate --general), with the reference for scale and the credit."""
    if not g:
        return "Not evaluated yet."
    return (f"FLORES-200 devtest (`{g['dataset']}`: {g['n']} sentences of Wikinews, Wikijunior and Wikivoyage; never "
            f"trained or tuned on), beam {g['beam']}: **BLEU {g['bleu']}**, chrF {g['chrf']}.{_faults_text(g)} "
            f"For scale, {GENERAL_REFERENCE}. FLORES-200: NLLB Team et al. 2022, CC-BY-SA 4.0.{against_table(g.get('against'))}"
            f"\n\n```\n{g['command']}\n```")


def heads_table(h: dict) -> str:
    """What each cross-attention head of a Transformer does (evaluate --heads, attn_demo.measures.heads)."""
    rows = "\n".join(f"| {name} | {v['confidence']:.2f} | {v['eos_share']:.2f} | {v['bleu_without']:.2f} | "
                     f"{v['bleu_cost']:+.2f} |" for name, v in h["heads"].items())
    return (f"Each cross-attention head on {_sentences_text(h)}, beam {h['beam']}{_ranked_text(h)}, **BLEU {h['bleu']} "
            f"with every head**{_refused_text(h)}: its confidence (the mean of its largest α), the share of its α on "
            "`</s>` (Voita et al. 2019), the BLEU of the same sentences translated with its output zeroed (Michel et al. "
            "2019) and the drop from BLEU with every head (negative: BLEU gained).\n\n"
            f"| head | confidence | α on </s> | BLEU without it | drop |\n|---|---|---|---|---|\n{rows}"
            f"\n\n```\n{h['command']}\n```")


def _sentences_text(h: dict) -> str:
    """Which sentences of a set were measured: "tatoeba-test.tsv (10000 sentences)", or "the first 2000 of …"."""
    if h.get("of", h["n"]) == h["n"]:
        return f"{h['dataset']} ({h['n']} sentences)"
    return f"the first {h['n']} of the {h['of']} sentences of {h['dataset']}"


def _length_text(curve: dict | None) -> str:
    if not curve:
        return "Not evaluated yet."
    rows = "\n".join(f"| {bucket} | {v['n']} | {v['bleu']} | {v['chrf']} |" for bucket, v in curve["buckets"].items())
    return (f"Pairs of {curve['dataset']} joined in order into inputs of each length (`data.long_test_set`), "
            f"beam {curve['beam']}:\n\n"
            f"| English words | inputs | BLEU | chrF |\n|---|---|---|---|\n{rows}{_held_text(curve['buckets'])}"
            f"\n\n```\n{curve['command']}\n```")


def _held_text(buckets: dict) -> str:
    """How far BLEU holds from short inputs to long ones: BLEU at 41–50 words over BLEU at 1–10, where both were measured."""
    short, long = buckets.get("1-10", {}).get("bleu"), buckets.get("41-50", {}).get("bleu")
    if not short or long is None:
        return ""
    return f"\n\nBLEU at 41–50 words / at 1–10: **{long / short:.2f}**."


def _dev_text(d: dict | None) -> str:
    if not d:
        return "Not evaluated yet."
    return (f"The validation split's {d['n']} pairs of {d['min_words']} or more English words (`data.long_dev_set`), "
            f"beam {d['beam']}{_ranked_text(d)}: **BLEU {d['bleu']}**, chrF {d['chrf']}.{_scored_text(d)}")


def _faults_text(r: dict) -> str:
    """Repeated and dropped phrases (evaluate.faults), where measured."""
    f = r.get("faults")
    if not f:
        return ""
    return (f" **{f['repeat_or_short']:.2%} of its {f['n']} sentences of {f['min_words']}+ words repeat a phrase or are "
            f"short** ({f['repeat']:.2%} repeat a word pair more than the reference, {f['short']:.2%} have under "
            f"{f.get('short_ratio', 0.8):.0%} of its words){_seen_text(f)}.")


def _seen_text(f: dict) -> str:
    """The faults of the long sentences with no word the training English lacks (unseen), where measured."""
    return f"; {f['seen_repeat_or_short']:.2%} of the {f['seen_n']} with no unseen word" if "seen_n" in f else ""


def _examples_text(e: dict | None) -> str:
    if not e:
        return "Not translated yet."
    rows = "\n".join(f"| {row['source']} | {row['greedy']} | {'same' if row['beam'] == row['greedy'] else row['beam']} |"
                     for row in e["translations"])
    return (f"The app's sentences (`attn_demo.examples`), greedy as the page opens, and beam {e['beam']}:\n\n"
            f"| English | greedy | beam {e['beam']} |\n|---|---|---|\n{rows}\n\n```\n{e['command']}\n```")


def _marks_text(m: dict) -> str:
    """The threshold the page marks words with, and how often such a word had no counterpart (attn_demo.measures.marks)."""
    where, command = f"{m['sentences']} long sentences, `{MARKS}`", f"\n\n```\n{m['command']}\n```"
    if m["threshold"] is None:
        return f"No word is marked: below no threshold were words missing half the time (95% confidence; {where}).{command}"
    r = m["low"][str(m["threshold"])]
    return (f"The page marks words with coverage C < {m['threshold']:g}: {r['precision']:.0%} of them had no counterpart "
            f"in the output (95% floor {r['precision_floor']:.0%}), {r['recall']:.0%} of those without (recall; {where})."
            f"{command}")


def _alignment_text(a: dict | None) -> str:
    if not a:
        return "Not measured yet."
    rows = "\n".join(f"| {links_source(rule)} | {a['aer'][rule]} | {a['precision'][rule]} | {a['recall'][rule]} |" for rule in a["aer"])
    aligner = "\n".join(f"| {name} | {s['aer']} | {s['precision']} | {s['recall']} |" for name, s in a["aligner"].items())
    return (f"Gold alignments of {a['dataset']} (Hansards, HLT-NAACL 2003): {a['n']} sentences teacher-forced, "
            f"{a['skipped']} skipped; links from word-level α by `attn_demo.measures.alignment`'s rules (`+1`: the next step's α) "
            "or from an attribution; lower AER is better.\n\n"
            f"| links from | AER | precision | recall |\n|---|---|---|---|\n{rows}\n{aligner}{_grids_text(a.get('heads'))}"
            f"\n\n```\n{a['command']}\n```")


def _grids_text(heads: dict | None) -> str:
    """A Transformer's argmax AER of every cross-attention grid, and the one the page shows (the lowest on trial)."""
    if not heads:
        return ""
    rows = "\n".join(f"| {name} | {heads['trial'][name]} | {heads['test'][name]} |" for name in heads["trial"])
    shown = grid_name(heads["chosen"]["layer"], heads["chosen"]["head"])
    return (f"\n\nEvery cross-attention grid of the Transformer, argmax links (the trial split chooses, the test split "
            f"reports): the page shows **{shown}**, the lowest on the trial split.\n\n"
            f"| grid | AER, trial | AER, test |\n|---|---|---|\n{rows}")


# what a card says of a section not measured, where the model's kind decides it: a GRU has one score, not heads,
# and a model without attention has no coverage to mark words by
UNMEASURED = {
    "heads": lambda kind: "Not measured yet." if kind.heads else "None: a GRU model attends with one score.",
    "marks": lambda kind: ("Not measured yet." if kind.score else
                           "Not measured (a model without attention has no coverage)."),
}


def _said_unmeasured(key: str, text: str) -> bool:
    """Whether a section's text is what UNMEASURED says for some kind: said anew from the card's own kind (a card
    written before its kind was known may hold another kind's)."""
    return key in UNMEASURED and text.strip() in {UNMEASURED[key](kind) for kind in KINDS.values()}


# Each section of the card: its key, what writes its text from the facts measured, and which of those
# facts card.json keeps (None: all): those the app and the tools read; the text holds them all.
#   training: train's facts of the run that made the weights, {"command", "minutes", "steps", …, "continued_from"}
#   test_results: {"bleu", "chrf", "n", "beam", "dataset", "by_length": {...}, "faults", "against": [paired bootstraps],
#                 "command"} (evaluate --card)
#   length_curve: {"dataset", "beam", "buckets": {"1-10": {"n", "bleu", "chrf", "refused"}, …}, "command"} (--long)
#   general_results: like test_results, on FLORES-200 devtest, general text (--general)
#   heads: {"bleu", "n", "of", "refused", "beam", "penalties", "dataset", "heads": {grid name: {"confidence",
#          "eos_share", "bleu_without", "bleu_cost"}}, "command"} (--heads): a Transformer's cross-attention heads, on
#          the first n of the set's `of` sentences
#   dev_results: like test_results, on the validation split's long natural sentences, with "min_words" (--dev)
#   examples: {"beam", "translations": [{"source", "greedy", "beam"}], "command"}, the page's sentences (--examples)
#   speed: {"median_ms", "p95_ms", "n", "words", "device", "torch_threads", "date", "timed_with", "command"} (speed)
#   alignment_results: {"aer": {rule: …}, "precision", "recall", "aligner": {name: {…}}, "n", "skipped", "dataset",
#                       "command"} (--alignments), and for a Transformer "heads": {"trial", "test", "chosen"} (the page
#                       names each grid's test AER under it)
#   decoding: {"beam", "n", "penalties": {"length", "coverage", "repeat"}, "tuned": row, "plain": row, "command"}: how a
#             beam search ranks what it finishes, chosen on the tuning set (--tune); the app decodes with it
#   marks: attn_demo.measures.marks' measurement, as MARKS holds it (--marks): the text says what the page marks
SECTIONS = {
    "training": (_training_text, None),  # train continues it, the Compare table sums it up
    "test_results": (_results_text, ("bleu", "chrf", "n", "beam", "dataset", "faults", "against")),  # against: plateau_check
    "length_curve": (_length_text, ("buckets",)),
    "general_results": (_general_text, ("bleu", "chrf", "faults")),
    "heads": (heads_table, ("bleu", "n", "heads")),
    "dev_results": (_dev_text, ()),
    "examples": (_examples_text, ()),
    "speed": (_speed_text, ("median_ms",)),
    "alignment_results": (_alignment_text, ("aer", "aligner", "n", "heads")),  # heads: a Transformer's every grid
    "decoding": (_decoding_text, ("penalties",)),
    "marks": (_marks_text, ()),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("checkpoints", type=Path, nargs="+", help="the checkpoint folders whose cards are re-written")
    p.add_argument("--timeline-from", type=Path, metavar="RUN",
                   help="first put the timeline of this run folder beside each checkpoint, marked as not the run "
                        "that made its weights (attn_demo.measures.timeline.attach)")
    p.add_argument("--plateau-from", type=Path, metavar="RUN",
                   help="record that the checkpoint was at its plateau: RUN, its continuation until its plateau (or "
                        "the mean of its last saves), evaluated on the test set --against it, was no better (plateau_check)")
    args = p.parse_args(argv)
    for folder in args.checkpoints:
        if args.plateau_from:
            training = read_card(folder)["training"]
            write_model_card(folder, training={**training, "plateau": plateau_check(args.plateau_from, folder)})
            continue
        if args.timeline_from:
            timeline = attach(args.timeline_from, folder)
            print(f"{folder}: {len(timeline['points'])} points, first α agreement after "
                  f"{first_agreement(timeline)} target pieces")
        write_model_card(folder)


if __name__ == "__main__":
    main()
