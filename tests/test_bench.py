"""`python -m benchmarks.bench --quick` is CI's smoke test of the benchmark: it must run end to end
and its correctness checks must hold. Its timings are not asserted."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attn_demo.decoding.attribution import METHODS
from attn_demo.evaluation.timing import interleaved, percentiles
from attn_demo.models.transformer import FLOAT16_WEIGHTS
from attn_demo.translator import load_translator
from benchmarks.bench import QUICK, main, naive_greedy, step_weight_bytes
from benchmarks.bench_app import classroom_apps, cores_to_set_apart
from conftest import DEVICE

pytestmark = pytest.mark.slow  # runs the benchmark's sections


def test_percentiles():
    stats = percentiles([float(x) for x in range(1, 101)])
    assert stats["median_ms"] == 50.5 and stats["p95_ms"] == 96.0 and stats["max_ms"] == 100.0 and stats["n"] == 100


def test_interleaved_timing_calls_every_function_once_a_round_in_a_new_order():
    calls = []
    timings = interleaved({name: lambda name=name: calls.append(name) for name in "abcd"}, runs=6, warmup=2)
    assert calls[:8] == ["a", "a", "b", "b", "c", "c", "d", "d"]  # warm-up
    rounds = [tuple(calls[i:i + 4]) for i in range(8, len(calls), 4)]
    assert len(rounds) == 6 and all(sorted(r) == list("abcd") for r in rounds) and len(set(rounds)) > 1
    assert all(timing["n"] == 6 for timing in timings.values()) and list(timings) == list("abcd")


def test_naive_reference_decodes_the_same_tokens(toy_checkpoint):
    translator = load_translator(toy_checkpoint, device=DEVICE)
    for text in ("the red cat", "I see the black dog."):
        tokens = translator.target_tokenizer.pieces(naive_greedy(translator, text))
        assert tokens == translator.translate(text).target_tokens


def test_step_weight_bytes_counts_what_a_step_reads(toy_checkpoint):
    """By hand from the sizes: every decoder weight a step multiplies by, in float32, and none of
    the once-per-sentence ones (W_init, and W_h, W or V, which make the keys)."""
    translator = load_translator(toy_checkpoint, device=DEVICE)
    c = translator.config
    if c.attention == "transformer":  # every decoder weight but the cross-attention's W_K and W_V, which make the keys
        D, F, L, V = c.d_model, c.ff_size, c.dec_layers, c.tgt_vocab_size
        matrices = L * (6 * D * D + 2 * D * F) + V * D  # W_Q, W_K, W_V, W_O, W_Q, W_O, W_1, W_2 a layer; E_y
        vectors = L * (6 * D + D + F + 3 * 2 * D) + 2 * D + V  # their b, the layer norms' γ and β, b of the output
        width = 2 if FLOAT16_WEIGHTS else 4  # the checkpoint's weights are exact in float16: read from half the bytes
        assert step_weight_bytes(translator) == width * matrices + 4 * vectors
        return
    E, D, H, A, R, V = c.emb_size, c.annotation_size, c.dec_hidden_size, c.attn_hidden_size, c.attn_rank, c.tgt_vocab_size
    output = V * E + V  # the tied output layer reads the whole embedding table, and its bias
    query_side = {"bahdanau": H * A + A, "luong-concat": H * A + A, "luong-lowrank": R * H,  # W_s and v; U
                  "bahdanau-coverage": H * A + A + A,  # and w_c, which reads the coverage at every step
                  "luong-general": 0, "luong-dot": 0, "none": 0}[c.attention]
    if c.attention in ("bahdanau", "bahdanau-coverage", "none"):  # s_t = GRU([E y; c_t], s_{t−1}), readout W_o [s_t; c_t; E y]
        cell, readout = 3 * H * (E + D) + 3 * H * H + 6 * H, (H + D + E) * E + E
    else:  # s_t = GRU(E y, s_{t−1}), h̃_t = tanh(W_c [c_t; s_t])
        cell, readout = 3 * H * E + 3 * H * H + 6 * H, (D + H) * E + E
    assert step_weight_bytes(translator) == 4 * (output + query_side + cell + readout)


def test_quick_run_end_to_end(tmp_path, capsys):
    main(["--quick", "--json", str(tmp_path / "bench.json")])
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["quick"] and report["machine"]["cores"] >= 1
    models = ("bahdanau-en-fr", "luong-en-fr")  # the default pair
    assert {(r["model"], r["words"], r["beam"]) for r in report["latency"]} >= {(models[0], 15, 1), (models[1], 30, 5)}
    assert all(r["identical_output"] for r in report["naive"])
    assert {(r["model"], r["batch"]) for r in report["roofline"]} == {(m, b) for m in models for b in (1, 32)}
    assert all(r[key] > 0 for r in report["roofline"]
               for key in ("step_ms", "weight_MB", "bandwidth_GBps", "read_time_ms", "roofline_ratio", "step_ms_per_sentence"))
    assert all(r["sentences_per_s"] > 0 for r in report["throughput"])
    assert all(r["json_kB"] > 0 for r in report["figures"])
    assert {(r["model"], r["method"]) for r in report["attribution"]} == {(m, k) for m in models for k in METHODS}
    assert {(r["model"], r["what"]) for r in report["explore"]} >= {(m, "what if: α moved") for m in models}
    assert all(r["max_completeness_gap"] <= 0.05 for r in report["attribution"] if r["method"] == "integrated-gradients")
    loads = report["app"]["classroom"]
    assert [(load["calls"], load["app"]) for load in loads] == [(calls, app) for calls in ("translate", "flow")
                                                                 for app in ("echo", "outputs", "app")]
    for load in loads:
        assert load["errors"] == 0 and load["mixed_up"] == 0 and load["answered"] == load["requests"]
        assert load["server_cpu_ms_per_request"] > 0 and load["p95_to_echo"] > 0  # the servers really were measured
        assert load["clients_cpu_ms_per_request"] > 0  # and the students beside them
    assert report["app"]["soak_rss_after_mb"] > 0
    for press in report["app"]["class_press"]:  # every client answered, all alike: one shared computation, nothing mixed
        assert (press["answered"], press["errors"], press["distinct_replies"]) == (3, 0, 1), press
    assert [press["button"] for press in report["app"]["class_press"]] == ["translate", "attribution", "beam", "alignment check"]
    assert [(r["where"], r["n"] > 0) for r in report["app"]["step_change"]] == [("translate", True), ("explorer", True), ("watch it learn", True)]
    assert "classroom load" in capsys.readouterr().out


def test_sections_runs_only_the_ones_named_in_their_order(tmp_path, capsys, monkeypatch):
    """--sections: the named sections alone, "classroom" the app's classroom load without the rest of the app's
    benchmarks (its servers and load are timed end to end in the quick run above; here only that it is what runs)."""
    ran = []
    monkeypatch.setattr("benchmarks.bench.bench_classroom",
                        lambda picks, p, apart: ran.append((picks, p, apart)) or [{"calls": "translate"}])
    main(["--quick", "--sections", "classroom", "roofline", "--json", str(tmp_path / "bench.json")])
    report = json.loads((tmp_path / "bench.json").read_text())
    assert list(report) == ["machine", "quick", "command", "classroom", "roofline"] and len(report["roofline"]) == 2 * 2
    assert ran == [(("bahdanau-en-fr", "luong-en-fr"), QUICK, False)] and report["classroom"] == [{"calls": "translate"}]
    out = capsys.readouterr().out
    assert out.index("classroom load") < out.index("decode step against the memory roofline")
    if cores_to_set_apart() >= 2:
        main(["--quick", "--sections", "classroom", "--students-apart"])
        assert ran[-1][2] is True
    with pytest.raises(SystemExit):  # the servers' core is the classroom load's alone
        main(["--quick", "--sections", "classroom", "roofline", "--students-apart"])


def test_the_steps_section_times_the_opening_pair_beside_the_pair_named(tmp_path, capsys, monkeypatch):
    """--sections steps: the browser's step changes alone (their browser run is timed in the quick run's app section),
    the page's opening pair first, then --models where it differs: a pair's figures beside the opening pair's of the
    same hour."""
    ran = []
    monkeypatch.setattr("benchmarks.bench.bench_steps", lambda pairs, p: ran.append(pairs) or [
        {"models": " + ".join(pair), "where": "translate", "median_ms": 1.0} for pair in pairs])
    main(["--quick", "--sections", "steps", "--models", "luong-en-fr", "transformer-en-fr", "--json", str(tmp_path / "steps.json")])
    main(["--quick", "--sections", "steps"])
    assert ran == [[("bahdanau-en-fr", "luong-en-fr"), ("luong-en-fr", "transformer-en-fr")], [("bahdanau-en-fr", "luong-en-fr")]]
    report = json.loads((tmp_path / "steps.json").read_text())
    assert [row["models"] for row in report["steps"]] == ["bahdanau-en-fr + luong-en-fr", "luong-en-fr + transformer-en-fr"]
    assert "step change in the browser" in capsys.readouterr().out


@pytest.mark.skipif(cores_to_set_apart() < 2, reason="needs two cores to set apart (Linux)")
def test_students_apart_puts_every_server_thread_on_the_first_core_and_the_students_on_the_others(monkeypatch):
    """classroom_apps: each server's threads, those it had and those it starts later, on the first core; this
    process (the students) on the rest; this process's cores as they were afterwards."""
    started = []
    class Sleeper:  # a server stand-in with a thread of its own that starts another one later
        def __init__(self, script, env):
            code = ("import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(1.5); "
                    "threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)")
            self.process = subprocess.Popen([sys.executable, "-c", code])
            time.sleep(0.5)
            started.append(self)
        def stop(self):
            self.process.kill()
    monkeypatch.setattr("benchmarks.bench_app.Server", Sleeper)
    cores = os.sched_getaffinity(0)
    first, *others = sorted(cores)
    with classroom_apps(("a", "b"), students_apart=True) as servers:
        time.sleep(2)  # each server has started its later thread
        for server in servers.values():
            tasks = list(Path(f"/proc/{server.process.pid}/task").iterdir())
            assert len(tasks) == 3 and all(os.sched_getaffinity(int(task.name)) == {first} for task in tasks)
        assert os.sched_getaffinity(0) == set(others)
    assert os.sched_getaffinity(0) == cores and len(started) == len(servers)
