import os

import pytest

from attn_demo.serving.toy_worker import NICENESS, Worker


class BrokenPipe:
    """A pipe to a process that died: the system resets it as the answer is read, or it is broken before the ask."""

    def __init__(self, where: str):
        self.where = where

    def send(self, message):
        if self.where == "send":
            raise BrokenPipeError(32, "Broken pipe")

    def recv(self):
        raise ConnectionResetError(104, "Connection reset by peer")


class Alive:
    def is_alive(self) -> bool:
        return True  # as it still looks in the instant it dies


@pytest.mark.parametrize("where", ["send", "recv"])
def test_a_pipe_broken_by_the_process_dying_says_it_stopped_and_the_next_call_starts_another(where):
    worker = Worker()
    worker.process, worker.pipe = Alive(), BrokenPipe(where)
    with pytest.raises(RuntimeError, match="process stopped"):
        worker.ask("train", ("settings", True), 1.0, 0.1)
    assert worker.process is None  # the next ask starts a process anew


def test_the_worker_process_trains_at_the_lowest_priority_so_a_translation_takes_the_core_first():
    worker = Worker()
    try:
        worker.ask("drop", ("no such lesson", False))  # answered once serve has set its priority
        assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == NICENESS  # the lowest, whatever the app's
    finally:
        worker.process.kill()
