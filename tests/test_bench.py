"""`python -m attn_demo.bench --quick` is CI's smoke test of the benchmark: it must run end to end
and its correctness checks must hold. Its timings are not asserted."""
import json

from attn_demo.bench import main, naive_greedy, percentiles
from attn_demo.translator import load_translator


def test_percentiles():
    stats = percentiles([float(x) for x in range(1, 101)])
    assert stats["median_ms"] == 50.5 and stats["p95_ms"] == 96.0 and stats["max_ms"] == 100.0 and stats["n"] == 100


def test_naive_reference_decodes_the_same_tokens(toy_checkpoint):
    translator = load_translator(toy_checkpoint, device="cpu")
    for text in ("the red cat", "I see the black dog."):
        tokens = translator.target_tokenizer.pieces(naive_greedy(translator, text))
        assert tokens == translator.translate(text).target_tokens


def test_quick_run_end_to_end(tmp_path, capsys):
    main(["--quick", "--json", str(tmp_path / "bench.json")])
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["quick"] and report["machine"]["cores"] >= 1
    assert {(r["model"], r["words"], r["beam"]) for r in report["latency"]} >= {("bahdanau", 15, 1), ("luong", 30, 5)}
    assert all(r["identical_output"] for r in report["naive"])
    assert all(r["sentences_per_s"] > 0 for r in report["throughput"])
    assert all(r["json_kB"] > 0 for r in report["figures"])
    for load in (report["app"]["bare_load"], report["app"]["app_load"]):
        assert load["errors"] == 0 and load["mixed_up"] == 0 and load["answered"] == load["requests"]
        assert load["server_cpu_ms_per_request"] > 0  # the servers really were measured
    assert report["app"]["soak_rss_after_mb"] > 0
    assert "classroom load" in capsys.readouterr().out
