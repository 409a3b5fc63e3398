"""The models the app serves: every checkpoint folder in checkpoints/, then each folder or Hub repo
id named in the environment, each loaded once per process.

    ATTN_DEMO_MODELS="your-org/luong-dot-en-fr ../my-checkpoints/bahdanau-big" python app.py

A checkpoint dropped into checkpoints/ appears on the page with no code change. A Hub checkpoint
that can be neither fetched nor found in the local cache (a classroom whose network dropped) is
left out and the page says so: the bundled checkpoints are still there. Anything else that fails
to load (a folder that does not exist, a broken checkpoint) stops the start with one line.

Every call of a model goes through Model.run (attn_demo.serving.zerogpu: on a ZeroGPU Space, the GPU is held
for it). Each model decodes its own requests: concurrent translations with the same beam size are decoded
as one batch (MicroBatcher), and a translation is made once (ComputedOnce): a class sending the same sentence
together waits for one decoding, and the next user who asks for it gets it at once (read-only, shared by every
session).
"""
import hashlib
import os
from pathlib import Path

from attn_demo.checkpoints.card import run_gpu, training_runs
from attn_demo.measures.alignment import ALIGNERS
from attn_demo.models.attention import KINDS, AttentionKind
from attn_demo.models.config import ACTIVATION_NAMES
from attn_demo.serving import zerogpu
from attn_demo.serving.batching import MicroBatcher
from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.translator import CheckpointUnavailable, Translator, load_translator
from attn_demo.views.steps import pca_projection

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"
ENVIRONMENT = "ATTN_DEMO_MODELS"  # folders or Hub repo ids, separated by spaces or commas
MAX_BATCH = 48  # sentences decoded at once by one model; as many as the page lets translate at once
CACHED_TRANSLATIONS = 512  # per model: a class typing the same example 60 times costs one translation


class Model:
    """One served checkpoint: its translator, the names the page gives it, and its decoding worker.
    Shared by every session: the model keeps no per-call state and cached results are read-only."""

    def __init__(self, key: str, translator: Translator, title: str):
        self.key = key  # folder name or Hub repo id: what a picker or a shared link names
        self.translator = translator
        self.title = title  # the attention type's title, with the key where two models share a type
        weights = (translator.folder / "model.safetensors").read_bytes()
        self.fingerprint = hashlib.sha1(weights).hexdigest()  # trace files of other weights are never served
        self.batcher = MicroBatcher(self._translate_requests, key=lambda request: request[1], max_batch=MAX_BATCH,
                                    window_s=0.005)
        self.view = ComputedOnce(self._view, CACHED_TRANSLATIONS)
        zerogpu.load(translator)

    @property
    def kind(self) -> AttentionKind:
        return KINDS[self.translator.config.attention]

    @property
    def has_attention(self) -> bool:
        return self.kind.score is not None

    def run(self, function, *args, **kwargs):
        """function(self.translator, *args, **kwargs), a Translator method or a function taking the
        translator first, where the model computes (attn_demo.serving.zerogpu)."""
        return zerogpu.run(self.translator, function, *args, **kwargs)

    def _translate_requests(self, requests: list) -> list:
        """[(text, beam size)] sharing one beam size, decoded as one batch."""
        return self.run(Translator.translate_batch, [text for text, _ in requests], beam_size=requests[0][1])

    def _view(self, text: str, beam_size: int) -> "View":
        """The translation of a normalised input (View). A bad input fails here, alone, before it can join a
        batch and fail its neighbours."""
        self.translator.encode(text)
        return View(result=self.batcher((text, beam_size)))  # the one decoding thread does nothing but decode


class View(dict):
    """A model's view of one input: {"result": its Translation, "projection": the PCA projection of its encoder
    states}. The projection is computed when first read: only the step views draw it, and a reply without them
    (a REST client's /translate) never pays for it. Two first reads at once may both compute it: the same value."""

    def __missing__(self, key):
        if key != "projection":
            raise KeyError(key)
        self[key] = pca_projection(self["result"].encoder_states)
        return self[key]


def requested_models(environment: dict = os.environ) -> list[str]:
    """The folders and Hub repo ids named in ATTN_DEMO_MODELS, in order."""
    return environment.get(ENVIRONMENT, "").replace(",", " ").split()


def model_key(source: str) -> str:
    """What names a model on the page and in a card: a folder's name, or the Hub repo id as given."""
    return Path(source).name if Path(source).expanduser().is_dir() else source


def local_checkpoints(folder: Path) -> list[Path]:
    """The checkpoint folders (those with a config.json) in `folder`, by name; none where `folder` does not exist."""
    if not Path(folder).is_dir():
        return []
    return [path for path in sorted(Path(folder).iterdir()) if (path / "config.json").is_file()]


def load_models(folder: Path = CHECKPOINTS, requested: list[str] = (), device=None) -> tuple[list[Model], list[str]]:
    """Every checkpoint folder in `folder` (none where it does not exist), then each of `requested`; the
    notices of those left out. Models are listed by attention type (in the order of attention.KINDS), then by key."""
    sources = [(path.name, path) for path in local_checkpoints(folder)]
    sources += [(model_key(name), name) for name in requested]
    translators, notices = {}, []
    for key, source in sources:
        if key in translators:
            raise ValueError(f"two checkpoints are both called {key!r}: rename one of the folders")
        try:
            translators[key] = load_translator(source, device)
        except CheckpointUnavailable as error:
            notices.append(f"{error} It is left out; the bundled checkpoints are on the page.")
    if not translators:
        raise FileNotFoundError(f"no checkpoint in {folder} (a folder with config.json, model.safetensors, …)")
    order = list(KINDS)
    keys = sorted(translators, key=lambda key: (order.index(translators[key].config.attention), key))
    kinds = [translators[key].config.attention for key in keys]
    models = []
    for key in keys:
        kind = KINDS[translators[key].config.attention]
        shared = kinds.count(translators[key].config.attention) > 1
        models.append(Model(key, translators[key], f"{kind.title} · {key}" if shared else kind.title))
    return models, notices


def summary(model: Model) -> dict:
    """One row of "compare them all", from the model card and the loaded weights: sizes, scores,
    speed, alignment and how it was trained; None where the card has not measured it."""
    translator, card = model.translator, model.translator.card
    aer = [value for rule, value in (translator.alignment_scores.get("aer") or {}).items() if rule in ALIGNERS]  # α's rules
    return {
        "title": model.title, "key": model.key,
        "attention_parameters": translator.model.num_params(attention_only=True),
        "parameters": translator.model.num_params(),
        "test_bleu": translator.metrics.get("bleu"), "test_chrf": translator.metrics.get("chrf"),
        "long_41_50_bleu": translator.length_curve.get("41-50", {}).get("bleu"),
        "long_1_10_bleu": translator.length_curve.get("1-10", {}).get("bleu"),
        "repeat_or_short": ((card.get("test_results") or {}).get("faults") or {}).get("repeat_or_short"),
        "general_bleu": (card.get("general_results") or {}).get("bleu"),
        "general_chrf": (card.get("general_results") or {}).get("chrf"),
        "general_repeat_or_short": ((card.get("general_results") or {}).get("faults") or {}).get("repeat_or_short"),
        "ms_per_sentence": (card.get("speed") or {}).get("median_ms"),
        "best_aer": min(aer) if aer else None,
        "training": training_summary(card.get("training") or {}),
    }


def training_summary(training: dict) -> str:
    """A model's training runs, first to last, in a line: "60 min from scratch → 8.0M pieces, 34.9 min"; a run on
    a GPU names it ("6.0M pieces, 0.8 min on NVIDIA H200"; the CPU goes unsaid), and so does a run that moved to
    one ("40.0M pieces, 261.4 min (6.2 min on NVIDIA H100)");
    a run whose dropout differs from the run before it says so ("…, dropout 0"), as does one that took its weights into
    another feed-forward φ ("…, GELU"), and so does the first
    with clause-joined examples ("…, clause joins"), one that ended at its plateau ("…, to its plateau") and one
    whose continuation to its plateau was no better ("…, at its plateau": checkpoints.card.plateau_check)."""
    runs, parts = training_runs(training), []
    for before, run in zip([{}] + runs, runs):
        tokens = f"{run['target_tokens'] / 1e6:.1f}M pieces, " if run.get("target_tokens") else ""
        warm = run.get("continued_from") or {}  # what the run took from the checkpoint before (checkpoints.folder.warm_start)
        step = f"{tokens}{run['minutes']} min"
        if "parts" in run:  # a run that a --resume moved names the time each GPU took of it
            step += "".join(f" ({part['minutes']} min on {run_gpu(part)})" for part in run["parts"] if run_gpu(part))
        elif run_gpu(run):
            step += f" on {run_gpu(run)}"
        step += " from scratch" if not parts else ""
        if "dropout" in before and "dropout" in run and run["dropout"] != before["dropout"]:
            step += f", dropout {run['dropout']:g}"
        if "activation" in warm:
            step += f", {ACTIVATION_NAMES[warm['activation'][1]]}"
        if run.get("clause_join_prob") and not before.get("clause_join_prob"):
            step += ", clause joins"
        if run.get("ended") == "plateau":
            step += ", to its plateau"
        elif run.get("plateau"):  # continued until its plateau and found no better (checkpoints.card.plateau_check)
            step += ", at its plateau"
        parts.append(f"attention replaced, then {step}" if "replaced_by" in warm else step)
    return " → ".join(parts) if parts else "not recorded"
