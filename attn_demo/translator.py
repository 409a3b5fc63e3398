"""The public API: load a checkpoint (local folder or Hub repo id) and translate with a trace."""
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from huggingface_hub import snapshot_download
from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

from attn_demo.checkpoints.card import scores_on_test_set
from attn_demo.checkpoints.folder import read_folder
from attn_demo.data.pairs import pad
from attn_demo.decoding.attribution import Attribution, attribute
from attn_demo.decoding.search import (
    NO_PENALTIES, NO_STEER, Candidate, Hypothesis, Penalties, Steer, beam_search_n_best, forced_search, greedy_search,
    max_target_length)
from attn_demo.models.tokenizer import check_known, check_length, check_text, read_english
from attn_demo.models.transformer import Transformer


@dataclass(frozen=True, eq=False)
class Heads:
    """Every layer and head of a Transformer's translation of one sentence (float32 numpy, read-only): what
    each head of each decoder layer's cross-attention computed, step by step, and both self-attentions.
    L decoder layers (L_enc encoder layers), H heads of size d_k, D = H · d_k.

    A head forms its output as o_t = Σ_j α_tj v_j; the layer's output is W_O [o_t^1; …; o_t^H] + b_O."""

    cross: np.ndarray  # α_tj (L, H, T, S) of the cross-attention, rows sum to 1
    cross_scores: np.ndarray  # e_tj = q_t · k_j / √d_k (L, H, T, S)
    queries: np.ndarray  # q_t (L, H, T, d_k)
    keys: np.ndarray  # k_j (L, H, S, d_k)
    values: np.ndarray  # v_j (L, H, S, d_k)
    outputs: np.ndarray  # o_t = Σ_j α_tj v_j (L, H, T, d_k)
    attended: np.ndarray  # W_O [o_t^1; …; o_t^H] + b_O (L, T, D)
    W_O: np.ndarray  # (L, D, D), the model's own, shared by every translation
    b_O: np.ndarray  # (L, D)
    encoder: np.ndarray  # α of the encoder's self-attention (L_enc, H, S, S): row i, what h_i read
    decoder: np.ndarray  # α of the decoder's masked self-attention (L, H, T, T): row t reads steps ≤ t only
    shown: tuple[int, int | None]  # the layer and head (None: the mean of its heads) of Translation.attention
    activation: str  # the feed-forward sublayers' φ (config.ACTIVATIONS)
    off: tuple = ()  # the (layer, head) pairs turned off: their outputs are zero, their α still shown

    def __post_init__(self):
        for value in self.__dict__.values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def concatenated(self) -> np.ndarray:
        """[o_t^1; …; o_t^H] (L, T, D), what W_O reads."""
        L, H, T, d_k = self.outputs.shape
        return self.outputs.transpose(0, 2, 1, 3).reshape(L, T, H * d_k)


@dataclass(frozen=True, eq=False)
class Translation:
    """What the model computed for one sentence; every array is float32 numpy, one row per output step.

    A model without attention ("none") has no query, no e and no α: scores, attention and queries
    are None, and every row of contexts is the one fixed c = [→h_S; ←h_1].

    A Transformer's attention is the grid of its config's shown layer and head (or the mean of that
    layer's heads), its contexts that layer's cross-attention output; it has no single query and no
    single e (queries and scores are None): every head's are in heads."""

    text: str  # detokenised French
    source_tokens: list[str]  # S pieces, EOS last
    unknown_characters: list[str]  # input characters the source tokenizer lacks, read as its "<unk>" piece
    target_tokens: list[str]  # T pieces, EOS last
    scores: np.ndarray | None  # e_tj (T, S), before softmax
    attention: np.ndarray | None  # α_tj (T, S), rows sum to 1
    contexts: np.ndarray  # c_t = Σ_j α_tj h_j (T, D), or c at every step
    encoder_states: np.ndarray  # h_j (S, D)
    queries: np.ndarray | None  # the attention query at each step (T, H): s_{t−1} or s_t
    attention_type: str  # config name, e.g. "bahdanau", "luong-general", "none"
    query_symbol: str | None  # "s_{t-1}", "s_t", or None without attention
    log_prob: float  # log p(y | x) of the chosen hypothesis
    coverage: np.ndarray | None = None  # C_j = Σ_t α_tj (S,): the attention each source piece received in all; None without α
    score: float | None = None  # what the beam search ranked it by (search.Penalties); None from greedy search
    heads: Heads | None = None  # a Transformer's every layer and head; None for the GRU models

    def __post_init__(self):
        # results may be cached and shared between users: nobody may change them in place
        for value in self.__dict__.values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def __setstate__(self, state: dict):
        # unpickled (the result of a ZeroGPU worker, attn_demo.serving.zerogpu): pickling drops the read-only flag
        self.__dict__.update(state)
        self.__post_init__()

    def to_dict(self) -> dict:
        """Its fields, arrays as the model holds them (float32 numpy), for the trace download; what a
        model without attention lacks (query, e, α) is left out rather than written as null."""
        fields = {k: v for k, v in self.__dict__.items() if v is not None}
        if self.heads is not None:
            fields["heads"] = {k: v for k, v in self.heads.__dict__.items() if k not in ("W_O", "b_O")}
        return fields


@dataclass(frozen=True, eq=False)
class Beam:
    """A beam search of one sentence: its n best Translations, best first, and every extension of a
    kept beginning it weighed (search.Candidate, with `pieces` the piece of each)."""

    translations: list[Translation]
    weighed: list[Candidate]
    pieces: list[str]


def pick_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def device_name(device: torch.device) -> str:
    """The device as a person names it: a GPU by its card ("NVIDIA H200"), else "CPU" or "MPS"."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type.upper()


def resolve_checkpoint(name_or_path: str, revision: str | None = None) -> Path:
    """A local folder as is; anything else is a Hub repo id fetched (or found in the cache) by
    huggingface_hub, which honours HF_HUB_OFFLINE, HF_HUB_CACHE / HF_HOME and the revision."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    if path.exists() or name_or_path.count("/") != 1:
        raise FileNotFoundError(f"{name_or_path!r} is neither a checkpoint folder nor a Hub repo id (org/name)")
    try:
        return Path(snapshot_download(repo_id=name_or_path, revision=revision))
    except OSError as error:  # huggingface_hub's every failure to fetch: offline, unreachable, no such repo
        raise CheckpointUnavailable(f"Hub checkpoint {name_or_path!r} could not be loaded: {_why(error)}.") from error


class CheckpointUnavailable(OSError):
    """A Hub checkpoint that can neither be fetched nor found in the local cache."""


def _why(error: OSError) -> str:
    if isinstance(error, RepositoryNotFoundError):
        return "the Hub has no such repository (or it is private)"
    if isinstance(error, RevisionNotFoundError):
        return "the repository has no such revision"
    if isinstance(error, (LocalEntryNotFoundError, ConnectionError)):
        return "the Hub cannot be reached and the checkpoint is not in the local cache"
    return " ".join(str(error).split())  # one line, whatever the library wrote


class Translator:
    def __init__(self, folder: Path, device=None):
        self.folder = Path(folder)
        self.device = torch.device(device) if device is not None else pick_device()
        checkpoint = read_folder(self.folder, self.device)
        self.model, self.source_tokenizer, self.target_tokenizer = (checkpoint.model, checkpoint.source_tokenizer,
                                                                    checkpoint.target_tokenizer)
        self.config = self.model.config
        self.card = checkpoint.card  # its card's facts as plain data: training, test_results, …
        self.metrics = scores_on_test_set(self.card)  # e.g. {"bleu": 41.2, "chrf": 60.1}
        self.length_curve = (self.card.get("length_curve") or {}).get("buckets", {})  # {"41-50": {"n", "bleu", …}, …}
        self.alignment_scores = self.card.get("alignment_results") or {}  # evaluate --alignments: {"aer": {rule: …}, …}
        self.training_data = checkpoint.training_data  # what it learned from; None if not recorded
        self.timeline = checkpoint.timeline  # how it learned (attn_demo.measures.timeline); None if not recorded
        decoding = (self.card.get("decoding") or {}).get("penalties")
        self.penalties = NO_PENALTIES if decoding is None else Penalties(**decoding)  # a beam's ranking (evaluate --tune)
        self.marks = checkpoint.marks  # evaluate --marks: {"threshold", "low": {…}, …}; None if not measured

    def read(self, text: str) -> tuple[list[int], list[str]]:
        """Source ids with EOS and the characters read as the unknown piece (see read_english), or a
        ValueError with a message fit for a user."""
        text, unknown = read_english(text, self.source_tokenizer)
        ids = self.source_tokenizer.encode(text)
        check_length(ids, self.config.max_source_pieces)
        return ids + [self.config.eos_id], unknown

    def encode(self, text: str) -> list[int]:
        """Source ids with EOS (see read)."""
        return self.read(text)[0]

    def encode_target(self, text: str) -> list[int]:
        """French ids with EOS, within the English piece limit. The French is only ever given as what
        the model must emit (teacher forcing against gold words), where an unknown piece could not
        be traced back to its word: any character the model never saw is refused."""
        text = check_text(text, what="a French sentence")
        check_known(text, self.target_tokenizer, language="French")
        ids = self.target_tokenizer.encode(text)
        check_length(ids, self.config.max_source_pieces)
        return ids + [self.config.eos_id]

    def translate(self, text: str, beam_size: int = 1, max_len: int | None = None, n_best: int | None = None,
                  prefix: str | list[str] | None = None, force_attention: dict | None = None,
                  penalties: Penalties | None = None, heads_off=()):
        """The Translation of one sentence, or with n_best the n best hypotheses of a beam search, best
        first (the first is translate(text, beam_size=k)). What if? prefix: French the translation
        must start with, as text or as pieces (a Translation's target_tokens, without </s>), after which
        the model goes on by itself (greedy or beam); force_attention:
        {t: weights}, α set by hand at output step t (1-based, weights over the S source pieces,
        </s> included, summing to 1): c_t = Σ_j α_tj h_j from them, every later step the model's own.
        penalties: how a beam search ranks what it finishes (length and coverage, search.Penalties);
        None: those the model card records (self.penalties). heads_off: a Transformer's cross-attention heads
        turned off, (layer, head) pairs from 0: each one's output is zeroed (Michel et al. 2019)."""
        ids, _ = self.read(text)
        steer = Steer(self._prefix_ids(prefix), self._forced_attention(force_attention, len(ids)),
                      self._heads_off(heads_off))
        results = self.translate_batch([text], beam_size, max_len, n_best or 1, steer, penalties)[0]
        return results if n_best else results[0]

    def beam(self, text: str, beam_size: int, n_best: int, penalties: Penalties | None = None) -> "Beam":
        """A beam search of one sentence laid open: its n best hypotheses (as translate(text,
        beam_size=k, n_best=n) gives them) and every extension it weighed on the way, kept or pruned."""
        if beam_size < 2:
            raise ValueError(f"a beam search keeps at least 2 beginnings, not {beam_size}")
        results, weighed = self._search([text], beam_size, None, n_best, NO_STEER, penalties)
        return Beam(results[0], weighed[0], self.target_tokenizer.pieces([c.token for c in weighed[0]]))

    def translate_batch(self, texts, beam_size: int = 1, max_len: int | None = None, n_best: int | None = None,
                        steer: Steer = NO_STEER, penalties: Penalties | None = None, heads: bool = True) -> list:
        """Translate many sentences in one batch: a Translation each, or with n_best a list of the n
        best each; a ValueError names the first bad input. heads=False leaves a Transformer's Translation.heads
        out (None): a second pass of every layer, which a score of the translations alone (BLEU) never reads."""
        results, _ = self._search(texts, beam_size, max_len, n_best, steer, penalties, heads)
        return results if n_best else [best[0] for best in results]

    @torch.inference_mode()
    def _search(self, texts, beam_size: int, max_len: int | None, n_best: int | None, steer: Steer,
                penalties: Penalties | None = None, heads: bool = True):
        """Each sentence's n best Translations (a list each), and for a beam search what it weighed
        (a list of search.Candidate per sentence; None for greedy search)."""
        if not 1 <= beam_size <= 16:
            raise ValueError(f"beam size must be between 1 and 16, not {beam_size}")
        if max_len is not None and max_len < 1:
            raise ValueError(f"max_len must be at least 1, not {max_len}")
        read = [self.read(text) for text in texts]
        if not read:
            return [], None
        memory, encoder = self._encode([ids for ids, _ in read])
        memory.heads_on = self._heads_on(steer.heads_off, len(read))
        lengths = memory.mask.sum(1)  # (B,) pieces, EOS included
        limits = max_target_length(lengths) if max_len is None else torch.full_like(lengths, max_len)
        if beam_size == 1:
            if n_best not in (None, 1):
                raise ValueError("n_best needs a beam: beam_size must be at least n_best")
            hypotheses, weighed = [[hyp] for hyp in greedy_search(self.model, memory, limits, steer)], None
        else:
            hypotheses, weighed = beam_search_n_best(self.model, memory, limits, beam_size, n_best or 1,
                                                     self.penalties if penalties is None else penalties, steer)
        return self._translations(read, memory, encoder, hypotheses, steer, heads), weighed

    def _heads_off(self, heads_off) -> frozenset:
        """The (layer, head) pairs of a Transformer's cross-attention to turn off, each checked."""
        if not heads_off:
            return frozenset()
        if self.config.attention != "transformer":
            raise ValueError("Only a Transformer has heads to turn off: this model attends with one score.")
        cfg, pairs = self.config, set()
        for pair in heads_off:
            layer, head = (int(n) for n in pair)
            if not (0 <= layer < cfg.dec_layers and 0 <= head < cfg.heads):
                raise ValueError(f"There is no head {head + 1} of layer {layer + 1}: this Transformer has "
                                 f"{cfg.dec_layers} decoder layers of {cfg.heads} heads.")
            pairs.add((layer, head))
        return frozenset(pairs)

    def _heads_on(self, heads_off: frozenset, rows: int) -> torch.Tensor | None:
        """(rows, L, H): 1 for a cross-attention head at work, 0 for one turned off; None where none is off."""
        if not heads_off:
            return None
        heads_on = torch.ones(self.config.dec_layers, self.config.heads, device=self.device)
        for layer, head in heads_off:
            heads_on[layer, head] = 0.0
        return heads_on.expand(rows, -1, -1)

    def _prefix_ids(self, prefix: str | list[str] | None) -> tuple[int, ...]:
        """The pieces of a French prefix the translation must start with (no EOS), from text or pieces."""
        if not prefix:
            return ()
        if isinstance(prefix, list):
            return tuple(self._piece_ids(prefix))
        return tuple(self.encode_target(prefix)[:-1])

    def _piece_ids(self, pieces: list[str]) -> list[int]:
        """Target pieces (as a Translation holds them) back to ids; an unknown piece is refused."""
        ids = [self.target_tokenizer.sp.piece_to_id(piece) for piece in pieces]
        unknown = [piece for piece, i in zip(pieces, ids) if i == self.config.unk_id and piece != "<unk>"]
        if unknown:
            raise ValueError(f"Not a French piece of this model: {unknown[0]!r}")
        return ids

    @torch.inference_mode()
    def choices(self, english: str, pieces: list[str], t: int, k: int = 5) -> list[tuple[str, float]]:
        """The k pieces the model finds most probable at output step t (1-based), having written
        pieces[:t − 1] (teacher forcing), with their probabilities, most probable first."""
        ids = self._piece_ids(pieces[:t - 1])
        memory = self.encode_batch([self.read(english)[0]])
        y, state, coverage = torch.tensor([self.config.bos_id], device=self.device), memory.init_state, None
        for previous in ids:
            step = self.model.decoder.step(y, state, memory, coverage=coverage)
            y, state, coverage = torch.tensor([previous], device=self.device), step.state, step.coverage
        probabilities = self.model.decoder.step(y, state, memory, coverage=coverage).logits.softmax(-1)[0]  # (V,)
        top = probabilities.topk(k)
        return [(self.target_tokenizer.pieces([int(i)])[0], float(p)) for p, i in zip(top.values, top.indices)]

    def _forced_attention(self, force_attention: dict | None, S: int) -> dict:
        """{t: weights (S,) tensor}, each checked: a model with α, a step from 1, S weights ≥ 0 summing to 1."""
        if not force_attention:
            return {}
        if self.config.attention == "none":
            raise ValueError("This model has no attention: there is no α to move (it reads one fixed c at every step).")
        forced = {}
        for t, weights in force_attention.items():
            weights = torch.as_tensor(np.asarray(weights, dtype=np.float32), device=self.device)
            if int(t) < 1 or weights.shape != (S,) or bool((weights < 0).any()) or abs(float(weights.sum()) - 1) > 1e-4:
                raise ValueError(f"α at step {t} must be {S} weights (one per English piece, </s> included), "
                                 "none negative, summing to 1")
            forced[int(t)] = weights
        return forced

    def force_decode(self, english: str, french: str) -> "Translation":
        return self.force_decode_batch([(english, french)])[0]

    @torch.inference_mode()
    def force_decode_batch(self, pairs) -> list["Translation"]:
        """The trace of the model reading each given French sentence (teacher forcing), as
        translate_batch returns it for the model's own output. The French is split into pieces by
        the target tokenizer: the model's own output re-encodes to the same pieces only when it
        emitted SentencePiece's segmentation of its text (it almost always does)."""
        read = [self.read(english) for english, _ in pairs]
        targets = [self.encode_target(french) for _, french in pairs]
        if not read:
            return []
        memory, encoder = self._encode([ids for ids, _ in read])
        hypotheses = [[hyp] for hyp in forced_search(self.model, memory, targets)]
        return [only for only, in self._translations(read, memory, encoder, hypotheses)]

    def attribute(self, english: str, french: str | list[str] | None = None,
                  method: str = "integrated-gradients", workers: int = 1, integrator=None) -> Attribution:
        """How much each English piece contributed to each French piece's log-probability (see
        attn_demo.decoding.attribution): for the model's own greedy translation, or for a given French
        sentence read by teacher forcing, as text or as the pieces of a Translation (target_tokens,
        </s> last). A (T, S) array, rows in the order of the French pieces. Integrated gradients' batches
        are integrated on `workers` threads at once: the same numbers; `integrator` another integrator of the path (e.g.
        attribution.evenly's reference)."""
        source_ids, _ = self.read(english)
        if french is None or isinstance(french, list):
            target_ids = self._piece_ids(self.translate(english).target_tokens if french is None else french)
        else:
            target_ids = self.encode_target(french)
        scores, log_probs, gap, points = attribute(self.model, source_ids, target_ids, method, workers, integrator)
        return Attribution(method, self.source_tokenizer.pieces(source_ids), self.target_tokenizer.pieces(target_ids),
                           scores, log_probs, gap, points)

    def encode_batch(self, sources: list[list[int]]):
        """The encoder's Memory of a batch of source ids (EOS last), padded."""
        return self._encode(sources)[0]

    def _encode(self, sources: list[list[int]]) -> tuple:
        """encode_batch's Memory, and a Transformer's encoder self-attention α (B, L_enc, H, S, S), which its Heads
        show (None for the GRU models)."""
        src = pad(sources, self.config.pad_id).to(self.device)  # (B, S)
        lengths = torch.tensor([len(s) for s in sources], device=self.device)
        if isinstance(self.model, Transformer):
            return self.model.encode_traced(src, lengths)
        return self.model.encode(src, lengths), None

    def _translations(self, read, memory, encoder, hypotheses, steer: Steer = NO_STEER,
                      with_heads: bool = True) -> list[list["Translation"]]:
        """The Translations of each sentence's hypotheses (a list per sentence, as searched) from the batch's memory
        and encoder self-attention (_encode); a Transformer's with every layer and head (Translation.heads) unless
        with_heads is False."""
        annotations = memory.annotations.float().cpu().numpy()  # (B, S, D)
        heads = self._heads(memory, encoder, hypotheses, steer) if with_heads and encoder is not None else None
        return [[self._translation(ids, unknown, hyp, annotations[b, :len(ids)], None if heads is None else heads[b][k])
                 for k, hyp in enumerate(hyps)]
                for b, ((ids, unknown), hyps) in enumerate(zip(read, hypotheses))]

    def _heads(self, memory, encoder, hypotheses, steer: Steer) -> list[list[Heads]]:
        """Every layer's and head's numbers of each hypothesis (a list per sentence): its pieces run through
        the Transformer's decoder all at once (Transformer.trace) on its sentence's memory, with the α a user set at
        the steps they set it; the encoder's self-attention as it encoded the batch (encoder (B, L_enc, H, S, S))."""
        rows = [(b, hyp.tokens) for b, hyps in enumerate(hypotheses) for hyp in hyps]
        sentence = torch.tensor([b for b, _ in rows], device=self.device)  # (N,): the sentence of each row
        y_in = pad([[self.config.bos_id, *tokens[:-1]] for _, tokens in rows], self.config.eos_id).to(self.device)  # (N, T)
        forced = None
        if steer.attention:
            forced = torch.full((*y_in.shape, memory.mask.size(1)), float("nan"), device=self.device)  # (N, T, S)
            for t, weights in steer.attention.items():
                if t <= y_in.size(1):
                    forced[:, t - 1, :weights.size(0)], forced[:, t - 1, weights.size(0):] = weights, 0.0
        trace = self.model.trace(memory.select(sentence), y_in, forced)
        lengths, off = memory.mask.sum(1).tolist(), tuple(sorted(steer.heads_off))
        per_row = iter(self._heads_of(trace, encoder[b], k, lengths[b], len(tokens), off)
                       for k, (b, tokens) in enumerate(rows))
        return [[next(per_row) for _ in hyps] for hyps in hypotheses]

    def _heads_of(self, trace, encoder, row: int, S: int, T: int, off: tuple) -> Heads:
        """Row `row` of a Transformer.trace, cut to its S source and T target pieces, with its sentence's encoder
        self-attention (L_enc, H, S', S')."""
        def stacked(layers, field, *cut):  # (L, H, …) of one row
            return torch.stack([getattr(attended, field)[row] for attended in layers])[(slice(None), slice(None), *cut)]

        cross, cfg = trace.cross, self.config
        keys = trace.cross_keys[row, :, :, :, :S]  # (L, 2, H, S, d_k)
        arrays = dict(
            cross=stacked(cross, "weights", slice(T), slice(S)), cross_scores=stacked(cross, "scores", slice(T), slice(S)),
            queries=stacked(cross, "queries", slice(T)), keys=keys[:, 0], values=keys[:, 1],
            outputs=stacked(cross, "heads", slice(T)), attended=torch.stack([a.output[row, :T] for a in cross]),
            encoder=encoder[:, :, :S, :S],
            decoder=stacked(trace.decoder, "weights", slice(T), slice(T)))
        numbers = {name: value.float().cpu().numpy() for name, value in arrays.items()}
        return Heads(**numbers, W_O=self._output_weights[0], b_O=self._output_weights[1],
                     shown=(cfg.layer_shown, cfg.shown_head), activation=cfg.activation, off=off)

    @cached_property
    def _output_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Every decoder layer's cross-attention W_O (L, D, D) and b_O (L, D), read-only, once per model."""
        layers = [layer.cross_attention.W_O for layer in self.model.decoder.layers]
        weights = (torch.stack([layer.weight for layer in layers]).detach().float().cpu().numpy(),
                   torch.stack([layer.bias for layer in layers]).detach().float().cpu().numpy())
        for array in weights:
            array.flags.writeable = False
        return weights

    def _translation(self, source_ids, unknown_characters, hyp: Hypothesis, encoder_states, heads=None) -> Translation:
        return traced(self.model, self.source_tokenizer, self.target_tokenizer, source_ids, unknown_characters, hyp,
                      encoder_states, heads)


def traced(model, source_tokenizer, target_tokenizer, source_ids, unknown_characters, hyp: Hypothesis, encoder_states,
           heads=None) -> Translation:
    """The Translation of one searched hypothesis: its pieces through the tokenizers (anything with pieces(ids)
    and decode(ids): the toy task's characters too), its trace cut to the S source pieces."""
    S, eos = len(source_ids), model.config.eos_id
    scores, attention = hyp.trace["scores"], hyp.trace["attention"]
    return Translation(
        text=target_tokenizer.decode(hyp.tokens[:-1] if hyp.tokens[-1] == eos else hyp.tokens),
        source_tokens=source_tokenizer.pieces(source_ids), unknown_characters=unknown_characters,
        target_tokens=target_tokenizer.pieces(hyp.tokens),
        scores=None if scores is None else scores[:, :S], attention=None if attention is None else attention[:, :S],
        contexts=hyp.trace["context"], encoder_states=encoder_states, queries=hyp.trace["query"],
        attention_type=model.config.attention, query_symbol=model.query_symbol, log_prob=hyp.log_prob,
        coverage=None if attention is None else attention[:, :S].sum(0), score=hyp.score, heads=heads,
    )


def load_translator(name_or_path: str, device=None, revision: str | None = None) -> Translator:
    """A Translator from a local checkpoint folder or a Hub repo id (org/name)."""
    return Translator(resolve_checkpoint(str(name_or_path), revision), device)
