"""Micro-batching: concurrent requests are decoded together. Sixty students pressing Translate at
once cost a few batched calls instead of sixty single ones (batched greedy decoding costs a
fraction of a sentence-at-a-time loop per sentence)."""
import queue
import threading
import time
from concurrent.futures import Future


class MicroBatcher:
    """One worker thread calls `batch_fn(items)` on what callers submitted; each caller blocks
    until its own result is ready.

    The worker waits `window_s` after the first item so that simultaneous requests share a
    call; everything that arrives while a batch is being decoded forms the next batch (at most
    `max_batch` a call). Under load, batches grow by themselves and never run two at once on
    the same cores; alone, a request waits only `window_s`.

    Items are grouped by `key(item)` so only compatible requests share a batch (e.g. the same
    beam size). An exception from `batch_fn` goes to every caller of that batch, so validate
    inputs before submitting them: one bad input must not fail its neighbours.
    """

    def __init__(self, batch_fn, key=lambda item: None, max_batch: int = 32, window_s: float = 0.005):
        self.batch_fn, self.key, self.max_batch, self.window_s = batch_fn, key, max_batch, window_s
        self._queue = queue.Queue()  # (key, item, Future)
        threading.Thread(target=self._work, name="micro-batcher", daemon=True).start()

    def __call__(self, item):
        future = Future()
        self._queue.put((self.key(item), item, future))
        return future.result()

    def _work(self):
        while True:
            waiting = [self._queue.get()]
            time.sleep(self.window_s)
            while len(waiting) < self.max_batch and not self._queue.empty():
                waiting.append(self._queue.get_nowait())
            groups = {}
            for key, item, future in waiting:
                groups.setdefault(key, []).append((item, future))
            for batch in groups.values():
                self._run(batch)

    def _run(self, batch):
        try:
            results = self.batch_fn([item for item, _ in batch])
            for (_, future), result in zip(batch, results):
                future.set_result(result)
        except Exception as error:  # handed to the callers, who see it as their own
            for _, future in batch:
                future.set_exception(error)
