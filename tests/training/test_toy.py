import pytest
import torch

from attn_demo.models.config import ATTENTION_TYPES
from attn_demo.training.toy import FIRST_DIGIT, HELD_OUT, TASKS, ToyRun, ToySettings, encode, held_out, train_for


def tiny(attention: str = "bahdanau", **changes) -> ToySettings:
    return ToySettings(**{"task": "reverse", "attention": attention, "hidden": 12, "min_length": 2, "max_length": 5,
                          "batch": 8, **changes})


@pytest.mark.parametrize("task, digits, target", [("reverse", [3, 1, 4], [4, 1, 3]), ("copy", [3, 1, 4], [3, 1, 4]),
                                                  ("sort", [3, 1, 4, 1], [1, 1, 3, 4])])
def test_each_task_writes_its_target(task, digits, target):
    assert TASKS[task](digits) == target
    assert encode(digits) == [FIRST_DIGIT + d for d in digits] + [3]


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_same_seed_trains_the_same_run_and_another_seed_another(attention):
    first, again, other = ToyRun(tiny(attention)), ToyRun(tiny(attention)), ToyRun(tiny(attention, seed=1))
    for run in (first, again, other):
        run.train(20)
    assert first.curve == again.curve and len(first.curve) == 2
    assert first.curve != other.curve
    assert all(torch.equal(a, b) for a, b in zip(first.model.parameters(), again.model.parameters()))


def test_the_held_out_strings_are_the_same_for_every_seed_and_never_trained_on():
    settings = tiny()
    strings = held_out(settings)
    assert strings == held_out(tiny(seed=7)) and sorted(strings) == [2, 3, 4, 5]
    assert len(strings[2]) <= HELD_OUT and all(len(s) == 5 for s in strings[5])
    run = ToyRun(settings)
    for _ in range(20):
        src = run.batch()[0]
        for row in src.tolist():
            digits = tuple(t - FIRST_DIGIT for t in row if t >= FIRST_DIGIT)
            assert digits not in run.kept_out


def test_attention_learns_to_reverse_short_strings_and_the_answer_says_how_well():
    torch.set_num_threads(1)
    run = ToyRun(ToySettings(hidden=32, min_length=2, max_length=4, seed=0))
    before = run.exact_by_length()
    run.train(300)
    after = run.measure(1.0)
    assert after["updates"] == 300 and len(after["loss_curve"]) == 30
    assert after["loss_curve"][-1][1] < 0.5 * after["loss_curve"][0][1]
    assert sum(after["exact_by_length"].values()) > sum(before.values()) + 1  # on held-out strings
    assert after["settings"]["task"] == "reverse"


def test_a_run_for_seconds_stops_at_its_time_and_at_most_the_longest_allowed():
    ticks = iter(range(0, 10_000))
    result = train_for(tiny(), seconds=3, clock=lambda: next(ticks))  # each reading one second later
    assert result["updates"] == 20  # two readings per round of 10 updates: 0, 1 | 2, 3 → stops
    ticks = iter(range(0, 10_000, 10))
    assert train_for(tiny(), seconds=10_000, clock=lambda: next(ticks))["updates"] == 50  # MAX_SECONDS: 60


@pytest.mark.parametrize("changes, message", [({"task": "spell"}, "no toy task 'spell'"),
                                              ({"attention": "transformer"}, "no attention 'transformer'"),
                                              ({"min_length": 6}, "lengths"), ({"max_length": 99}, "lengths"),
                                              ({"hidden": 7}, "hidden size")])
def test_bad_settings_get_a_clear_message(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(**changes)
