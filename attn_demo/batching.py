"""Micro-batching: requests that arrive within a few milliseconds of each other are decoded as
one batch. Sixty students pressing Translate at once cost a few batched calls instead of sixty
single ones (batched greedy decoding costs a fraction of a sentence-at-a-time loop per sentence)."""
import threading
import time
from concurrent.futures import Future


class MicroBatcher:
    """Call `batch_fn(items)` on the items submitted within `window_s` of the first one
    (at most `max_batch` a call); each caller blocks until its own result is ready.

    Items are grouped by `key(item)` so only compatible requests share a batch (e.g. the same
    beam size). An exception from `batch_fn` goes to every caller of that batch, so validate
    inputs before submitting them: one bad input must not fail its neighbours.
    """

    def __init__(self, batch_fn, key=lambda item: None, max_batch: int = 32, window_s: float = 0.005):
        self.batch_fn, self.key, self.max_batch, self.window_s = batch_fn, key, max_batch, window_s
        self._lock = threading.Lock()
        self._pending = {}  # key → list of (item, Future)

    def __call__(self, item):
        future, leader = Future(), False
        with self._lock:
            queue = self._pending.setdefault(self.key(item), [])
            queue.append((item, future))
            leader = len(queue) == 1  # the first caller of a window runs the batch
        if leader:
            time.sleep(self.window_s)
            self._run(self.key(item))
        return future.result()

    def _run(self, key):
        while True:
            with self._lock:
                queue = self._pending.get(key, [])
                batch, rest = queue[:self.max_batch], queue[self.max_batch:]
                if rest:
                    self._pending[key] = rest
                else:
                    self._pending.pop(key, None)
            if not batch:
                return
            try:
                results = self.batch_fn([item for item, _ in batch])
                for (_, future), result in zip(batch, results):
                    future.set_result(result)
            except Exception as error:  # handed to the callers, who see it as their own
                for _, future in batch:
                    future.set_exception(error)
            if not rest:
                return
