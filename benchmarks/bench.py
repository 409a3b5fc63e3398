"""Benchmarks: latency, a naive reference decoder, a decode step against the memory roofline,
batched throughput and figure cost of the picked models, then the app as its users meet it
(benchmarks.bench_app: cold start, a classroom load test, a step change in the browser).

    python -m benchmarks.bench [--quick] [--json OUT] [--models LEFT RIGHT] [--sections NAME ...]

Prints a table per section and writes every figure, with the machine, to --json. --quick runs
each section small (a smoke test for CI, well under a minute of work); its numbers mean nothing.
--sections runs only those (e.g. `--sections attribution` to restate one target after a change).
`--sections classroom --students-apart` runs the classroom load with the servers on one core and the students
on the others: on a machine of few cores the students' own CPU otherwise slows the server they measure.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from attn_demo.cli import HelpFormatter
from attn_demo.data.pairs import TEST_SET, read_pairs
from attn_demo.decoding.attribution import METHODS
from attn_demo.decoding.search import max_target_length
from attn_demo.evaluation.timing import SENTENCES, interleaved, machine, timed
from attn_demo.models.rnn import gradients_through_eval_gru
from attn_demo.models.transformer import Transformer
from attn_demo.serving.catalogue import CHECKPOINTS
from attn_demo.translator import load_translator
from attn_demo.views.figures import alignment_figure, beam_search_figure, to_json
from attn_demo.views.steps import pca_projection, step_payload
from benchmarks.bench_app import bench_app, bench_classroom, bench_steps, classroom_table, cores_to_set_apart

MODELS = ("bahdanau-en-fr", "luong-en-fr")  # the two checkpoints timed unless --models names others
FULL = dict(runs=30, warmup=5, step_runs=300, batch_sizes=(1, 8, 32), batches=5, clients=60, requests_per_client=3, rounds=3,
            soak=1000, step_presses=15, press_clients=30)
QUICK = dict(runs=3, warmup=1, step_runs=5, batch_sizes=(1, 8), batches=1, clients=4, requests_per_client=2, rounds=1, soak=20,
             step_presses=3, press_clients=3)


def naive_greedy(translator, text: str) -> list[int]:
    """Decoding as tutorials write it: one sentence, the per-sentence memory (attention keys, or
    the fixed c without attention) recomputed at every step, autograd left on, a Python int pulled
    out at every step; a Transformer's with no cache, its whole prefix run again at every step."""
    model, cfg = translator.model, translator.config
    src = torch.tensor([translator.encode(text)], device=translator.device)
    if isinstance(model, Transformer):
        return naive_transformer_greedy(model, src)
    annotations, backward_first = model.encoder(src, torch.tensor([src.size(1)]))
    state = torch.tanh(model.decoder.init(backward_first))
    y, coverage, tokens = torch.tensor([cfg.bos_id], device=translator.device), None, []
    for _ in range(int(max_target_length(torch.tensor(src.size(1))))):
        memory = model.decoder.memory(annotations, backward_first, src != cfg.pad_id)  # the same every step, recomputed anyway
        step = model.decoder.step(y, state, memory, coverage=coverage)
        y = step.logits.argmax(-1)
        tokens.append(int(y))
        state, coverage = step.state, step.coverage
        if tokens[-1] == cfg.eos_id:
            return tokens
    tokens[-1] = cfg.eos_id  # the length limit ends the sentence, as in attn_demo.decoding.search
    return tokens


def naive_transformer_greedy(model, src) -> list[int]:
    """Greedy decoding that runs the whole output so far through the Transformer at every step."""
    cfg, lengths = model.config, torch.tensor([src.size(1)], device=src.device)
    y_in, tokens = torch.tensor([[cfg.bos_id]], device=src.device), []
    for _ in range(int(max_target_length(torch.tensor(src.size(1))))):
        y = model(src, lengths, y_in)[0, -1].argmax()
        tokens.append(int(y))
        if tokens[-1] == cfg.eos_id:
            return tokens
        y_in = torch.cat([y_in, y.view(1, 1)], 1)
    tokens[-1] = cfg.eos_id  # the length limit ends the sentence, as in attn_demo.decoding.search
    return tokens


def bench_latency(translators, p) -> list[dict]:
    rows = []
    for name, translator in translators.items():
        for words, text in SENTENCES.items():
            for beam in (1, 5):
                stats = timed(lambda: translator.translate(text, beam_size=beam), p["runs"], p["warmup"])
                rows.append({"model": name, "words": words, "beam": beam, **stats})
    return rows


def arithmetic(fn) -> int:
    """Floating-point operations fn() runs (matrix products, as counted by torch)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def bench_naive(translators, p) -> list[dict]:
    """Ours against the naive reference, timed in turn (a slow minute slows both alike). flops_ratio
    (naive / ours) bounds the speedup that skipping its extra work can bring, unless the naive code
    also runs slower per operation."""
    rows = []
    for name, translator in translators.items():
        for words, text in SENTENCES.items():
            naive_tokens = translator.target_tokenizer.pieces(naive_greedy(translator, text))
            identical = naive_tokens == translator.translate(text).target_tokens
            both = interleaved({"ours": lambda: translator.translate(text), "naive": lambda: naive_greedy(translator, text)},
                               p["runs"], p["warmup"])
            ours, naive = both["ours"], both["naive"]
            flops_ratio = arithmetic(lambda: naive_greedy(translator, text)) / arithmetic(lambda: translator.translate(text))
            rows.append({"model": name, "words": words, "ours_median_ms": ours["median_ms"],
                         "naive_median_ms": naive["median_ms"], "speedup": round(naive["median_ms"] / ours["median_ms"], 2),
                         "flops_ratio": round(flops_ratio, 2), "identical_output": identical})
    return rows


def wait_for(device: torch.device):
    """CUDA and MPS run asynchronously: a timing must wait until the queued work is done."""
    if device.type != "cpu":
        torch.accelerator.synchronize(device)


def memory_bandwidth(device: torch.device, p) -> float:
    """Read bandwidth from main memory in GB/s, as a batch-1 decode step uses it: the median time
    to sum a 256 MB float32 buffer, far larger than any last-level cache (32 MB on the CI machine),
    so every byte comes from memory. The sum reads each number once and writes nothing, like a
    matrix-vector product streaming its weights, and runs on this process's threads, as the decoder does."""
    buffer = torch.ones(64 * 2**20, device=device)  # 256 MB
    seconds = timed(lambda: (buffer.sum(), wait_for(device)), p["runs"], p["warmup"])["median_ms"] / 1000
    return buffer.nbytes / seconds / 1e9


def first_step_inputs(translator, sources: list[list[int]]):
    """What greedy search hands the decoder's first step for these source ids (EOS last), padded
    as translate_batch pads them: y = BOS (B,), s_0 (B, H) and the memory."""
    memory = translator.encode_batch(sources)
    return torch.full((len(sources),), translator.config.bos_id, device=translator.device), memory.init_state, memory


def step_weight_bytes(translator) -> int:
    """Bytes of the weights one decoder step reads: the parameters its logits are computed from,
    the memory being fixed. That is the GRU, the query side of attention (W_s and v of the additive
    scores, U of the low-rank one; the general and dot scores need none), the readout (W_o or W_c),
    the output bias and the whole target embedding table, which the tied output layer reads; the
    B rows the step looks up lie in that table and are counted with it. Not counted: what is
    computed once per sentence (keys W_h h_j, W h_j, V h_j and s_0 = tanh(W_init ←h_1)), nor the
    memory and activations, which grow with the batch. Four bytes a number, two where a product
    reads a float16 copy (models.transformer.product)."""
    with torch.no_grad():  # the memory is built once, before decoding: its weights are not the step's
        y, state, memory = first_step_inputs(translator, [[translator.config.eos_id]])
        translator.model.decoder.step(y, state, memory)  # the products keep their copies
    weights = list(translator.model.decoder.parameters())
    with gradients_through_eval_gru():
        logits = translator.model.decoder.step(y, state, memory).logits
        grads = torch.autograd.grad(logits.sum(), weights, allow_unused=True)  # None: the step never read it
    halved = float16_weights(translator.model.decoder)
    return sum(w.numel() * (2 if w.data_ptr() in halved else w.element_size())
               for w, grad in zip(weights, grads) if grad is not None)


def float16_weights(module) -> set[int]:
    """Where the weights lie (data pointers) whose products without gradients read a float16 copy."""
    kept = (value for m in module.modules() for key, value in vars(m).items() if key.startswith("_kept"))
    return {pointer for k in kept if k.packed is not None for pointer, _ in k.version[0::2]}  # (W, b) pairs' W


@torch.inference_mode()
def median_step_ms(translator, sources: list[list[int]], p) -> float:
    """Median milliseconds of one decoder step on this batch, called as greedy_search calls it."""
    y, state, memory = first_step_inputs(translator, sources)

    def step():
        translator.model.decoder.step(y, state, memory)
        wait_for(translator.device)

    return timed(step, p["step_runs"], p["warmup"])["median_ms"]


def bench_roofline(translators, p) -> list[dict]:
    """A decode step at batch 1 and 32 against the time to read its weights once at the bandwidth
    measured just before: roofline_ratio 1.0 is a step at the memory roof; above it the time goes
    to something else (arithmetic, which grows with the batch, or overhead per operation)."""
    fifteen_words = [en for en, _ in read_pairs(TEST_SET) if len(en.split()) == 15]
    batch_32 = np.random.default_rng(2).choice(fifteen_words, 32, replace=False).tolist()
    rows = []
    for name, translator in translators.items():
        weight_bytes, bandwidth = step_weight_bytes(translator), memory_bandwidth(translator.device, p)
        read_ms = 1000 * weight_bytes / (bandwidth * 1e9)
        for texts in ([SENTENCES[15]], batch_32):
            ms = median_step_ms(translator, [translator.encode(text) for text in texts], p)
            rows.append({"model": name, "batch": len(texts), "step_ms": ms, "weight_MB": round(weight_bytes / 1e6, 2),
                         "bandwidth_GBps": round(bandwidth, 1), "read_time_ms": round(read_ms, 3),
                         "roofline_ratio": round(ms / read_ms, 2), "step_ms_per_sentence": round(ms / len(texts), 3)})
    return rows


def bench_throughput(translators, p) -> list[dict]:
    sentences = [en for en, _ in read_pairs(TEST_SET)]
    rng = np.random.default_rng(0)
    rows = []
    for name, translator in translators.items():
        for batch in p["batch_sizes"]:
            chunks = [[sentences[i] for i in rng.choice(len(sentences), batch, replace=False)] for _ in range(p["batches"])]
            translator.translate_batch(chunks[0])
            start = time.perf_counter()
            for chunk in chunks:
                translator.translate_batch(chunk)
            seconds = time.perf_counter() - start
            rows.append({"model": name, "batch": batch, "sentences_per_s": round(batch * len(chunks) / seconds, 1)})
    return rows


def bench_explore(translators, p) -> list[dict]:
    """The explorer's server work for a 20-word sentence: beam 5 laid open (its 5 best hypotheses and
    the figure of what it kept and pruned), the model's choices at a step, and one what-if (a
    changed piece, or a moved α, and on)."""
    text, rows = SENTENCES[20], []
    for name, translator in translators.items():
        best = translator.translate(text, beam_size=5, n_best=5)
        pieces, t = best[0].target_tokens, 3
        other = translator.choices(text, pieces, t)[1][0]
        one_hot = {t: np.eye(len(best[0].source_tokens), dtype=np.float32)[2]}
        def laid_open():
            beam = translator.beam(text, 5, 5)
            return beam_search_figure(beam.weighed, beam.pieces, [h.target_tokens for h in beam.translations])

        work = {"beam 5 laid open and its figure": laid_open,
                "choices at a step": lambda: translator.choices(text, pieces, t),
                "what if: another piece": lambda: translator.translate(text, beam_size=5, prefix=[*pieces[:t - 1], other]),
                "what if: α moved": lambda: translator.translate(text, beam_size=5, prefix=pieces[:t - 1], force_attention=one_hot)}
        if translator.config.attention == "none":
            del work["what if: α moved"]
        for what, fn in work.items():
            rows.append({"model": name, "words": 20, "what": what, **timed(fn, p["runs"], p["warmup"])})
    return rows


def bench_attribution(translators, p) -> list[dict]:
    """Attributing a 20-word sentence's translation, each method (the page's "What did each model
    rely on?" for one model), and the completeness gap integrated gradients reached."""
    rows = []
    for name, translator in translators.items():
        for method in METHODS:
            result = translator.attribute(SENTENCES[20], method=method)
            stats = timed(lambda: translator.attribute(SENTENCES[20], method=method), max(1, p["runs"] // 10), 0)  # warm already
            gap = None if result.completeness_gap is None else round(float(result.completeness_gap.max()), 4)
            rows.append({"model": name, "method": method, "words": 20, "path_points": result.path_points,
                         "max_completeness_gap": gap, **stats})
    return rows


def request_figures(results) -> tuple[list, list]:
    """Everything the page draws for one translation: the two grids (the /translate reply) and
    every step of both models (the /step_data reply, which the browser scrubs through alone)."""
    grids, steps = [], []
    for result in results:
        if result.attention is not None:  # the baseline has no grid
            grids.append(alignment_figure(result.source_tokens, result.target_tokens, result.attention, "grid"))
        steps.append(step_payload("model", result, pca_projection(result.encoder_states)))
    return grids, steps


def request_json(results) -> tuple[str, str]:
    grids, steps = request_figures(results)
    return "".join(to_json(figure) for figure in grids), json.dumps(steps)


def bench_figures(translators, p) -> list[dict]:
    rows = []
    for words in (15, 30):
        results = [t.translate(SENTENCES[words]) for t in translators.values()]
        build = timed(lambda: request_figures(results), p["runs"], p["warmup"])
        serialise = timed(lambda: request_json(results), p["runs"], p["warmup"])
        grids, steps = (len(text.encode()) for text in request_json(results))
        rows.append({"words": words, "steps": max(len(r.target_tokens) for r in results),
                     "build_median_ms": build["median_ms"], "build_and_json_median_ms": serialise["median_ms"],
                     "json_kB": round((grids + steps) / 1000, 1), "grids_kB": round(grids / 1000, 1),
                     "all_steps_kB": round(steps / 1000, 1), "kB_per_step_moved": 0})
    return rows


def table(rows: list[dict]) -> str:
    """Rows as a Markdown table: BENCHMARKS.md shows a run's tables as this writes them (tests/test_docs.py)."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    return "\n".join(lines + ["| " + " | ".join(str(row[k]) for k in keys) + " |" for row in rows])


def print_rows(title: str, rows: list[dict]):
    print(f"\n### {title}\n")
    if rows:
        print(table(rows))


STEPS_TITLE = "step change in the browser"
CLASSROOM_TITLE = "classroom load (echo: the framework's floor; outputs: the page's outputs, no work)"


def print_app(app: dict):
    print(f"\n### app\n\ncold start {app['cold_start_s']} s, RSS after start {app['rss_after_start_mb']} MB, peak {app['peak_rss_mb']} MB")
    print_rows(STEPS_TITLE, app["step_change"])
    print_rows(CLASSROOM_TITLE, classroom_table(app["classroom"]))
    print_rows("a class presses one button together, on a shared 20-word sentence", app["class_press"])
    print(f"RSS over {app['soak_requests']} requests: {app['soak_rss_before_mb']} → {app['soak_rss_after_mb']} MB")


SECTIONS = {"latency": ("translate() latency", bench_latency), "naive": ("ours vs naive reference, greedy", bench_naive),
            "roofline": ("decode step against the memory roofline", bench_roofline),
            "throughput": ("batched throughput", bench_throughput), "figures": ("figures per request", bench_figures),
            "explore": ("the explorer's server work, 20 words", bench_explore),
            "attribution": ("attribution of a 20-word sentence", bench_attribution)}  # then "app" (and "classroom", its load alone): benchmarks.bench_app


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke test, not a measurement")
    parser.add_argument("--json", type=Path, help="write all results here")
    parser.add_argument("--models", nargs=2, default=MODELS, metavar=("LEFT", "RIGHT"),
                        help="the two checkpoints in checkpoints/ to time, and to pick on the page for the app benchmarks")
    parser.add_argument("--sections", nargs="+", choices=[*SECTIONS, "app", "classroom", "steps"], default=[*SECTIONS, "app"],
                        help="run only these sections, in this order (classroom: the app's classroom load alone; steps: its "
                             "step changes in the browser alone, the opening pair beside --models)")
    parser.add_argument("--students-apart", action="store_true",
                        help="classroom: the servers on one core and the students on the others, as in a class whose "
                             "phones do their own work (Linux, 2+ cores); by default they share every core")
    args = parser.parse_args(argv)
    if args.students_apart and (args.sections != ["classroom"] or cores_to_set_apart() < 2):
        parser.error("--students-apart is for --sections classroom alone, on 2 or more cores")
    p = QUICK if args.quick else FULL
    translators = {name: load_translator(CHECKPOINTS / name) for name in args.models}
    report = {"machine": machine(), "quick": args.quick, "command": " ".join(["python -m benchmarks.bench", *(argv or sys.argv[1:])])}
    print(json.dumps(report["machine"]))
    for key in args.sections:
        if key == "app":
            report["app"] = bench_app(tuple(args.models), p)
            print_app(report["app"])
        elif key == "steps":  # the page's opening pair, then the pair named, in the same run
            report["steps"] = bench_steps(list(dict.fromkeys([MODELS, tuple(args.models)])), p)
            print_rows(STEPS_TITLE, report["steps"])
        elif key == "classroom":
            report["classroom"] = bench_classroom(tuple(args.models), p, args.students_apart)
            print_rows(CLASSROOM_TITLE, classroom_table(report["classroom"]))
        else:
            title, fn = SECTIONS[key]
            report[key] = fn(translators, p)
            print_rows(title, report[key])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
