import threading
import time

import pytest

from attn_demo.serving.computed_once import ComputedOnce


def test_callers_of_one_key_at_once_share_one_computation_and_other_keys_run_beside_it():
    calls, start = [], threading.Barrier(12)

    def compute(key):
        calls.append(key)
        time.sleep(0.05)  # long enough for every caller to arrive while it runs
        return [key]

    shared = ComputedOnce(compute, maxsize=8)
    results = {}

    def ask(i):
        start.wait()
        results[i] = shared("a" if i < 10 else "b")

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(calls) == ["a", "b"]
    assert all(results[i] is results[0] for i in range(10)) and results[10] is results[11] == ["b"]


def test_the_least_recently_asked_key_is_dropped_beyond_maxsize():
    calls = []
    shared = ComputedOnce(lambda key: calls.append(key) or key, maxsize=2)
    for key in ("a", "b", "a", "c", "a", "b"):  # "b" was the oldest when "c" came
        shared(key)
    assert calls == ["a", "b", "c", "b"]


def test_a_failure_reaches_its_caller_and_is_not_kept():
    attempts = []

    def compute(key):
        attempts.append(key)
        if len(attempts) == 1:
            raise ValueError("the model cannot read this")
        return key

    shared = ComputedOnce(compute, maxsize=4)
    with pytest.raises(ValueError, match="cannot read"):
        shared("x")
    assert shared("x") == "x" and attempts == ["x", "x"]
