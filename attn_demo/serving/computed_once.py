"""Results a whole class shares: the same question asked by many sessions at once is computed once.

functools.lru_cache remembers a result only after it is computed, so thirty students pressing the
same button in the same second start thirty computations. Here the first caller of a key computes
and the others wait for its result. A result is what the model computes for that key (model,
sentence, method …) and nothing else, so sharing it between sessions is exact.
"""
import threading
from collections import OrderedDict
from concurrent.futures import Future


class ComputedOnce:
    """`compute(*key)` at most once per key among the `maxsize` keys asked for most recently.

    A computation that raises is not kept: its waiters get the exception, and the next caller of
    that key tries again."""

    def __init__(self, compute, maxsize: int):
        self.compute, self.maxsize = compute, maxsize
        self._results: OrderedDict[tuple, Future] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, *key):
        with self._lock:
            future = self._results.get(key)
            first = future is None
            if first:
                future = self._results[key] = Future()
                if len(self._results) > self.maxsize:  # a waiter of the evicted key still holds its future
                    self._results.popitem(last=False)
            else:
                self._results.move_to_end(key)
        if first:
            try:
                future.set_result(self.compute(*key))
            except Exception as error:
                with self._lock:
                    if self._results.get(key) is future:
                        del self._results[key]
                future.set_exception(error)
        return future.result()
