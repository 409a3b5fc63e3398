"""Does attention align words? Gold word alignments, the alignment error rate, and the rules that draw links
from a translation's word-level α (attn_demo.decoding.grids).

Gold links: the HLT-NAACL 2003 shared task (Mihalcea & Pedersen 2003), English–French Hansards,
`test.e` / `test.f` one tokenised sentence per line and `test.wa.nonullalign` with lines
`sentID engPos frPos S|P` (1-based). A link is (English word, French word), 0-based here.
"""
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_demo.data.datasets import HANSARDS, require
from attn_demo.decoding.grids import WORD_START, head_grids, word_attention
from attn_demo.models.tokenizer import named

GOLD_DIR = HANSARDS.folder  # in the data home (attn_demo.data.datasets)
THRESHOLDS = (0.1, 0.3, 0.5)


@dataclass
class GoldAlignments:
    english: list[list[str]]  # words of each sentence
    french: list[list[str]]
    sure: list[set]  # S: links every annotator drew
    possible: list[set]  # P ⊇ S: links some annotator drew, or marked as possible


def read_gold(folder: Path, split: str = "test") -> GoldAlignments:
    folder = Path(folder)
    for suffix in (".e", ".f", ".wa.nonullalign"):
        require(folder / f"{split}{suffix}")
    english = [line.split() for line in (folder / f"{split}.e").read_text(encoding="utf-8").splitlines()]
    french = [line.split() for line in (folder / f"{split}.f").read_text(encoding="utf-8").splitlines()]
    if len(english) != len(french):
        raise ValueError(f"{folder}: {len(english)} English and {len(french)} French sentences")
    sure, possible = [set() for _ in english], [set() for _ in english]
    for line in (folder / f"{split}.wa.nonullalign").read_text(encoding="utf-8").splitlines():
        sentence, e, f, kind = line.split()
        link = (int(e) - 1, int(f) - 1)
        possible[int(sentence) - 1].add(link)
        if kind == "S":
            sure[int(sentence) - 1].add(link)
    return GoldAlignments(english, french, sure, possible)


def alignment_error(links, sure, possible) -> dict:
    """Corpus-level AER, precision and recall over parallel lists of link sets (Och & Ney 2003):
    precision = |A∩P| / |A|, recall = |A∩S| / |S|, AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)."""
    a = sum(len(x) for x in links)
    s = sum(len(x) for x in sure)
    a_s = sum(len(x & y) for x, y in zip(links, sure))
    a_p = sum(len(x & y) for x, y in zip(links, possible))
    return {"aer": 1 - (a_s + a_p) / (a + s), "precision": a_p / a if a else 0.0, "recall": a_s / s}


def word_spans(pieces: list[str], words: list[str]) -> list[range]:
    """The piece positions of each given word, or a ValueError when the pieces (EOS excluded)
    do not spell exactly these words."""
    starts = [i for i, piece in enumerate(pieces) if piece.startswith(WORD_START)]
    spans = [range(a, b) for a, b in zip(starts, starts[1:] + [len(pieces)])]
    spelt = ["".join(pieces[i] for i in span)[len(WORD_START):] for span in spans]
    if starts[:1] != [0] or spelt != words:
        raise ValueError(f"pieces {pieces} do not spell the words {words}")
    return spans








def argmax_links(alpha: np.ndarray) -> set:
    """Each French word → its most-attended English word (Luong et al. 2015, §5.4)."""
    return {(int(e), f) for f, e in enumerate(alpha.argmax(1))}


def threshold_links(alpha: np.ndarray, tau: float) -> set:
    """Every pair with word α ≥ tau: a French word may link to several English words, or none."""
    return {(int(e), int(f)) for f, e in zip(*np.nonzero(alpha >= tau))}


def intersect_links(alpha: np.ndarray) -> set:
    """Argmax both ways: kept only where the French word's best English word also attends most to
    it among all French words (the intersection heuristic of Och & Ney 2003, on one α matrix)."""
    return argmax_links(alpha) & {(e, int(f)) for e, f in enumerate(alpha.argmax(0))}


def _rules(shift: int, suffix: str) -> dict:
    rules = {f"argmax{suffix}": (shift, argmax_links), f"intersect{suffix}": (shift, intersect_links)}
    for tau in THRESHOLDS:
        rules[f"threshold-{tau}{suffix}"] = (shift, lambda alpha, tau=tau: threshold_links(alpha, tau))
    return rules


# name → (shift, rule). Step t's α is computed before y_t is fed back: Bahdanau's query s_{t−1},
# and Luong's s_t, have both seen only y_<t. Luong's α_{t+1} is the first to read y_t (its query
# s_{t+1} = GRU(E y_t, s_t)), Bahdanau's comes a step later; "+1" rules measure whether reading
# French piece t's links from the next step's α helps.
ALIGNERS = {**_rules(0, ""), **_rules(1, "+1")}


def links_source(rule: str) -> str:
    """What a rule's links are drawn from, for tables: "α, `argmax`" or "integrated-gradients, `argmax`"."""
    method, _, name = rule.rpartition(" ")
    return f"{method or 'α'}, `{name}`"


def attention_links(attention: np.ndarray, source_spans, target_spans) -> dict:
    """name → the links each rule of ALIGNERS draws from one sentence's piece-level α."""
    alphas = {shift: word_attention(attention, source_spans, target_spans, shift) for shift in (0, 1)}
    return {name: rule(alphas[shift]) for name, (shift, rule) in ALIGNERS.items()}


def model_input(words: list[str]) -> list[str]:
    """The gold words as the model reads them: the Hansards text is lowercased, and the models
    were trained on Tatoeba sentences that start with a capital, so the first letter is raised
    (measured, argmax AER: Bahdanau 0.631 instead of 0.647, Luong 0.487 instead of 0.507). Words stay as tokenised
    ("de le" for "du"), so that every piece maps back to a gold word position."""
    return [words[0][:1].upper() + words[0][1:], *words[1:]] if words else words


def check_readable(translator, english: str, french: str) -> None:
    """Refuse a gold pair the model cannot read as given: what read or encode_target refuses, and
    English with a character read as the unknown piece, which a word alignment cannot trace back to
    its gold word (the '(' or '«' of 14 Hansards test sentences)."""
    unknown = translator.read(english)[1]
    if unknown:
        raise ValueError(f"The model has never seen these characters: {named(unknown)}.")
    translator.encode_target(french)


def attention_alignments(translator, gold: GoldAlignments, batch_size: int = 32) -> tuple[dict, list[int]]:
    """Teacher-force every gold pair through the model → (rule name → links of each sentence
    read, the indices of those sentences). A sentence the model cannot read as given (check_readable)
    or whose pieces do not spell its words is left out, not guessed at."""
    attends = translator.config.attention != "none"  # without α no rule applies; the sentences read are still counted
    links, kept = {name: [] for name in ALIGNERS} if attends else {}, []
    for i, result, source_spans, target_spans in _forced_gold(translator, gold, batch_size):
        if attends:
            for name, sentence_links in attention_links(result.attention, source_spans, target_spans).items():
                links[name].append(sentence_links)
        kept.append(i)
    return links, kept


def head_alignments(translator, gold: GoldAlignments, batch_size: int = 32) -> tuple[dict, list[int]]:
    """A Transformer's every cross-attention grid as an aligner: (layer, head) for each head and (layer, None) for each
    layer's mean over its heads → the argmax links of each gold sentence read, and the indices of those sentences
    (as attention_alignments reads them)."""
    links, kept = {}, []
    for i, result, source_spans, target_spans in _forced_gold(translator, gold, batch_size):
        for grid, alpha in head_grids(result.heads).items():
            links.setdefault(grid, []).append(argmax_links(word_attention(alpha, source_spans, target_spans)))
        kept.append(i)
    return links, kept
















def _forced_gold(translator, gold: GoldAlignments, batch_size: int):
    """(index, Translation, English word spans, French word spans) of every gold pair the model reads as given,
    teacher-forced in batches."""
    pairs = [(model_input(e), model_input(f)) for e, f in zip(gold.english, gold.french)]
    read = []
    for i, (english, french) in enumerate(pairs):
        try:
            check_readable(translator, " ".join(english), " ".join(french))
            read.append(i)
        except ValueError:
            pass
    for start in range(0, len(read), batch_size):
        chunk = read[start:start + batch_size]
        results = translator.force_decode_batch([(" ".join(pairs[i][0]), " ".join(pairs[i][1])) for i in chunk])
        for i, result in zip(chunk, results):
            try:
                yield i, result, word_spans(result.source_tokens[:-1], pairs[i][0]), word_spans(result.target_tokens[:-1], pairs[i][1])
            except ValueError:
                continue


class OtherLinks(ValueError):
    """A kept file of links that other weights or other sentences made."""


def attribution_alignments(translator, gold: GoldAlignments, method: str, sentences: list[int],
                           kept: Path | None = None) -> dict:
    """Links drawn from a gradient attribution instead of α (attn_demo.decoding.attribution), for the given
    sentences (those attention_alignments kept): the gold French is teacher-forced, the attribution
    summed over an English word's pieces and averaged over a French word's, and each French word
    linked to the English word that raised its log-probability most (argmax), or only where that
    holds both ways (intersect). Ding, Xu & Koehn (2019) found such saliency aligns better than α.
    `kept`: a file of each sentence's links, one JSON line each as it is made, read first, so that a run stopped
    midway (integrated gradients take hours on a CPU) goes on where it stopped."""
    weights = weights_digest(translator.model) if kept else None  # whose links the file keeps
    made = read_kept_links(kept, weights, gold, method) if kept else {}
    links = {f"{method} argmax": [], f"{method} intersect": []}
    for i in sentences:
        if i not in made:
            made[i] = sentence_attribution_links(translator, gold, method, i)
            if kept:
                keep_links(kept, weights, gold, method, i, made[i])
        for rule, found in made[i].items():
            links[f"{method} {rule}"].append(found)
    return links


def sentence_attribution_links(translator, gold: GoldAlignments, method: str, i: int) -> dict:
    """Sentence i's links by each rule (argmax, intersect) from its attribution, as attribution_alignments draws them."""
    english, french = model_input(gold.english[i]), model_input(gold.french[i])
    result = translator.attribute(" ".join(english), " ".join(french), method)
    scores = word_attention(result.scores, word_spans(result.source_tokens[:-1], english),
                            word_spans(result.target_tokens[:-1], french))
    return {"argmax": argmax_links(scores), "intersect": intersect_links(scores)}


def keep_links(kept: Path, weights: str, gold: GoldAlignments, method: str, i: int, links: dict):
    """One line of the kept file: whose weights (weights_digest), which method and sentence, its links by rule."""
    line = {"weights": weights, "method": method, "sentence": i, "pair": gold_pair(gold, i),
            **{rule: sorted(found) for rule, found in links.items()}}
    kept.parent.mkdir(parents=True, exist_ok=True)
    with open(kept, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def read_kept_links(kept: Path, weights: str, gold: GoldAlignments, method: str) -> dict:
    """Sentence → its links by rule, of `method`, from a kept file (none yet: nothing); OtherLinks where the file
    holds other weights' links (weights_digest) or other sentences'. A last line cut short (a run killed while
    writing it) is dropped from the file, so that the next line written starts a line of its own."""
    if not kept.exists():
        return {}
    text = kept.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):  # cut short: its sentence is made again
        lines.pop()
        kept.write_text("".join(whole + "\n" for whole in lines), encoding="utf-8")
    made = {}
    for number, whole in enumerate(lines, 1):
        try:
            line = json.loads(whole)
        except json.JSONDecodeError:
            raise OtherLinks(f"{kept}, line {number}: not a line of kept links") from None
        i = line["sentence"]
        if line["weights"] != weights:
            raise OtherLinks(f"{kept} holds the links of other weights: give a new file for this model")
        if line["pair"] != gold_pair(gold, i):
            raise OtherLinks(f"{kept} holds the links of other sentences than these gold alignments'")
        if line["method"] == method:
            made[i] = {rule: {tuple(link) for link in line[rule]} for rule in ("argmax", "intersect")}
    return made


def gold_pair(gold: GoldAlignments, i: int) -> list | None:
    """Sentence i of the gold alignments as two lines of words (None past their end)."""
    return [" ".join(gold.english[i]), " ".join(gold.french[i])] if 0 <= i < len(gold.english) else None


def weights_digest(model) -> str:
    """The first 16 hex digits of a sha256 of the model's weights as it holds them: which weights a kept file's
    links came from."""
    digest = hashlib.sha256()
    for name, weight in sorted(model.state_dict().items()):
        digest.update(name.encode() + weight.detach().float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def sentence_reading(translator, english: list[str], french: list[str]) -> tuple:
    """The model reading one gold pair as attention_alignments reads every pair: its Translation (teacher forced)
    and each English and French word's pieces; a ValueError when the model cannot read it as given."""
    english, french = model_input(english), model_input(french)
    check_readable(translator, " ".join(english), " ".join(french))
    result = translator.force_decode(" ".join(english), " ".join(french))
    return result, word_spans(result.source_tokens[:-1], english), word_spans(result.target_tokens[:-1], french)


def reading_word_attention(reading: tuple, grid=None) -> np.ndarray:
    """Word-level α (French words, English words) of a sentence_reading; grid: a Transformer's (layer, head) to
    read (head None: the layer's mean; head_grids), None for Translation.attention."""
    result, source_spans, target_spans = reading
    attention = result.attention if grid is None else head_grids(result.heads)[tuple(grid)]
    return word_attention(attention, source_spans, target_spans)


def sentence_word_attention(translator, english: list[str], french: list[str], grid=None) -> np.ndarray:
    """Word-level α of the model reading one gold pair (sentence_reading, then reading_word_attention)."""
    return reading_word_attention(sentence_reading(translator, english, french), grid)
