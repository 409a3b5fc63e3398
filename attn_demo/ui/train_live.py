"""Train attention live: a toy task (attn_demo.training.toy) trained on the server, for a lesson checked without a
browser. The REST API's train_toy(task, attention, seconds, seed) trains a new run for that long and answers one JSON
object: its settings, updates, seconds, loss curve (update, mean loss of the 10 before) and the fraction of held-out
strings of each length it gets exactly right.

TOY_RUNS run at once, each on the app's one thread and at most MAX_SECONDS; the others wait in their own queue,
told their place, and never take a translation's slot. The same request asked by a class at once is one run
(ComputedOnce): everyone gets its answer.
"""
import gradio as gr

from attn_demo.serving.computed_once import ComputedOnce
from attn_demo.training.toy import MAX_SECONDS, ToySettings, train_for

TOY_RUNS = 1  # a 2-core machine trains one toy run while the other core serves the page
RUNS_KEPT = 32  # answers kept for a class asking again
TOY_CALLS = {"concurrency_id": "toy", "concurrency_limit": TOY_RUNS}


class TrainLiveSection:
    """The toy runs of the whole app: identical requests share one run."""

    def __init__(self):
        self.runs = ComputedOnce(train_for, maxsize=RUNS_KEPT)

    def train_toy(self, task: str, attention: str, seconds: float, seed: int) -> dict:
        """train_toy: a new toy run of `task` with `attention` ("none": no attention), trained for `seconds` from `seed`."""
        try:
            settings = ToySettings(task=task, attention=attention, seed=whole(seed, "seed"))
            seconds = number(seconds, "seconds")
        except ValueError as error:
            raise gr.Error(str(error), print_exception=False) from None
        if not 0 < seconds <= MAX_SECONDS:
            raise gr.Error(f"A toy run trains for more than 0 and at most {MAX_SECONDS:g} seconds, not {seconds:g}.",
                           print_exception=False)
        return self.runs(settings, seconds)

    def render_api(self):
        gr.api(self.train_toy, api_name="train_toy", **TOY_CALLS)


def number(value, what: str) -> float:
    """A number from a client, or a ValueError naming `what`."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a number, not {str(value)[:20]!r}.") from None


def whole(value, what: str) -> int:
    """A whole number from a client (which may send 3.0), or a ValueError naming `what`."""
    value = number(value, what)
    if not value.is_integer():
        raise ValueError(f"The {what} must be a whole number, not {value:g}.")
    return int(value)
