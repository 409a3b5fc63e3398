import pytest
import torch

from attn_demo.models.config import ATTENTION_TYPES
from attn_demo.models.attention import KINDS
from attn_demo.training.toy import (CHARACTERS, FIRST_PIECE, HELD_OUT, SPACE, TASKS, ToyRun, ToySettings, encode,
                                    held_out, read_input, train_for)
from attn_demo.views.steps import step_payload


def tiny(attention: str = "bahdanau", **changes) -> ToySettings:
    return ToySettings(**{"task": "reverse", "attention": attention, "hidden": 12, "min_length": 2, "max_length": 5,
                          "batch": 8, **changes})


@pytest.mark.parametrize("task, text, target", [("reverse", "314", "413"), ("copy", "314", "314"), ("sort", "3141", "1134"),
                                                ("date", "5 January 2020", "2020-01-05"), ("date", "31 December 1999", "1999-12-31")])
def test_each_task_writes_its_target(task, text, target):
    assert TASKS[task].target(text) == target
    assert encode(text) == [FIRST_PIECE + CHARACTERS.index(c) for c in text] + [3]


def test_a_date_is_drawn_as_a_person_writes_it_and_its_lengths_are_its_own():
    settings = tiny(task="date", min_length=2, max_length=5)
    assert (settings.min_length, settings.max_length) == (10, 17)  # one run per date setting, whatever was sent
    strings = held_out(settings)
    assert sorted(strings) == list(range(10, 18)) and all(len(s) == n for n, texts in strings.items() for s in texts)
    assert all(TASKS["date"].target(s)[4] == "-" for texts in strings.values() for s in texts)


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
            assert "".join(CHARACTERS[t - FIRST_PIECE] for t in row if t >= FIRST_PIECE) not in run.kept_out


def test_one_digit_strings_keep_some_to_train_on():
    settings = tiny(min_length=1, max_length=1)
    assert len(held_out(settings)[1]) == 5
    assert ToyRun(settings).batch()[0].shape == (8, 2)  # the other five digits, with EOS


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_a_runs_translation_is_a_trace_the_page_s_step_view_draws(attention):
    run = ToyRun(tiny(attention, task="date"))
    result = run.translation("5 May 2020")
    assert result.source_tokens == ["5", SPACE, "M", "a", "y", SPACE, "2", "0", "2", "0", "</s>"]
    assert result.attention_type == attention and result.encoder_states.shape == (11, 12)  # S, D = 2 × H/2
    assert (result.attention is None) == (KINDS[attention].score is None)
    if result.attention is not None:
        assert result.attention.shape == (len(result.target_tokens), 11)
        assert abs(result.attention.sum(1) - 1).max() < 1e-5
    payload = step_payload("toy", result, None)
    assert payload["source"] == result.source_tokens and payload["target"] == result.target_tokens


@pytest.mark.parametrize("task, text, message", [("reverse", "", "digits"), ("reverse", "1" * 31, "at most 30"),
                                                 ("date", "5 Mai 2020!", "a date such as 5 January 2020"),
                                                 ("reverse", None, "digits")])
def test_a_typed_input_the_task_cannot_read_gets_a_clear_message(task, text, message):
    with pytest.raises(ValueError, match=message):
        read_input(tiny(task=task), text)


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
