import threading
import time

import pytest

from attn_demo.serving.batching import MicroBatcher


def run_at_once(batcher, items):
    results, threads = {}, []
    for item in items:
        threads.append(threading.Thread(target=lambda i=item: results.__setitem__(i, batcher(i))))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_concurrent_calls_share_batches_and_each_gets_its_own_result():
    calls = []

    def square_all(items):
        calls.append(list(items))
        time.sleep(0.01)
        return [x * x for x in items]

    batcher = MicroBatcher(square_all, max_batch=4, window_s=0.05)
    results = run_at_once(batcher, list(range(10)))
    assert results == {x: x * x for x in range(10)}
    assert sorted(x for call in calls for x in call) == list(range(10))
    assert len(calls) < 10 and max(len(call) for call in calls) <= 4


def test_items_with_different_keys_never_share_a_batch():
    calls = []
    batcher = MicroBatcher(lambda items: calls.append(list(items)) or items, key=lambda x: x % 2, window_s=0.05)
    results = run_at_once(batcher, [1, 2, 3, 4, 5, 6])
    assert results == {x: x for x in range(1, 7)}
    assert all(len({x % 2 for x in call}) == 1 for call in calls)


def test_a_failing_batch_reaches_its_callers_and_the_batcher_keeps_working():
    def fail_on_seven(items):
        if 7 in items:
            raise RuntimeError("boom")
        return items

    batcher = MicroBatcher(fail_on_seven, window_s=0.0)
    with pytest.raises(RuntimeError, match="boom"):
        batcher(7)
    assert batcher(8) == 8


def test_items_arriving_during_a_batch_form_the_next_one_and_batches_never_overlap():
    calls, running, overlaps = [], [], []
    first_started, release = threading.Event(), threading.Event()

    def slow(items):
        running.append(1)
        overlaps.append(len(running))
        calls.append(list(items))
        first_started.set()
        release.wait(timeout=30)
        running.pop()
        return items

    batcher = MicroBatcher(slow, max_batch=8, window_s=0.0)
    first = threading.Thread(target=batcher, args=(0,))
    first.start()
    assert first_started.wait(timeout=30)
    later = [threading.Thread(target=batcher, args=(i,)) for i in range(1, 6)]
    for thread in later:
        thread.start()
    time.sleep(0.2)  # all five are queued behind the running batch
    release.set()
    for thread in [first, *later]:
        thread.join(timeout=30)
    assert len(calls) == 2 and calls[0] == [0] and sorted(calls[1]) == [1, 2, 3, 4, 5]
    assert max(overlaps) == 1
