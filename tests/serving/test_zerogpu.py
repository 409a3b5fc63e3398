import pickle
import sys
import types

import numpy as np
import pytest

from attn_demo.serving import zerogpu
from attn_demo.serving.catalogue import Model
from attn_demo.translator import Translator

ENGLISH = "the red cat"


def test_without_the_spaces_package_a_function_is_left_as_it_is(monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", None)  # import spaces raises ImportError
    function = lambda: 1  # noqa: E731
    assert zerogpu.on_gpu(function) is function


def test_with_the_spaces_package_a_function_is_decorated_with_spaces_gpu(monkeypatch):
    asked = []

    def GPU(duration):
        asked.append(duration)
        return lambda function: ("decorated", function)

    monkeypatch.setitem(sys.modules, "spaces", types.SimpleNamespace(GPU=GPU))
    function = lambda: 1  # noqa: E731
    assert zerogpu.on_gpu(function) == ("decorated", function) and asked == [zerogpu.GPU_SECONDS]


def across_a_process(function):
    """What ZeroGPU does to a decorated call: arguments and result pickled, as to and from a worker
    process; the worker (forked after the models loaded) finds them in LOADED by number."""
    calls = []

    def worker_call(*args, **kwargs):
        args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))
        calls.append((args[0], args[1].__name__))  # (translator's number, function)
        return pickle.loads(pickle.dumps(function(*args, **kwargs)))

    worker_call.calls = calls
    return worker_call


@pytest.fixture
def worker(monkeypatch):
    """zerogpu._run as a ZeroGPU Space decorates it (zerogpu._run itself where spaces is not installed)."""
    crossing = across_a_process(zerogpu._run)
    monkeypatch.setattr(zerogpu, "_run", crossing)
    return crossing


def test_every_model_call_of_the_page_crosses_to_a_worker_and_back_unchanged(toy_checkpoint, attention, worker):
    translator = Translator(toy_checkpoint, "cpu")
    model = Model("tiny", translator, "Tiny")
    view = model.view(ENGLISH, 2)["result"]  # the MicroBatcher's decoding
    here = translator.translate(ENGLISH, beam_size=2)
    assert view.target_tokens == here.target_tokens and view.log_prob == here.log_prob
    np.testing.assert_array_equal(view.contexts, here.contexts)
    with pytest.raises(ValueError, match="read-only"):  # still read-only, as a cached result shared by sessions must be
        view.contexts[0, 0] = 1.0
    beam = model.run(Translator.beam, ENGLISH, 3, 2)
    assert [h.target_tokens for h in beam.translations] == [h.target_tokens for h in translator.beam(ENGLISH, 3, 2).translations]
    assert model.run(Translator.choices, ENGLISH, here.target_tokens, 1, 3) == translator.choices(ENGLISH, here.target_tokens, 1, 3)
    forced = model.run(Translator.translate, ENGLISH, beam_size=2, prefix=here.target_tokens[:1])
    assert forced.target_tokens == translator.translate(ENGLISH, beam_size=2, prefix=here.target_tokens[:1]).target_tokens
    attributed = model.run(Translator.attribute, ENGLISH, here.target_tokens, "input-x-gradient")
    np.testing.assert_array_equal(attributed.scores, translator.attribute(ENGLISH, here.target_tokens, "input-x-gradient").scores)
    pair = "I see the red cat.", "je vois le chat rouge."  # the alignment check reads a gold pair so
    np.testing.assert_array_equal(model.run(Translator.force_decode, *pair).contexts, translator.force_decode(*pair).contexts)
    assert worker.calls == [(id(translator), name) for name in  # by number: the translator itself never crosses
                            ("translate_batch", "beam", "choices", "translate", "attribute", "force_decode")]


def test_input_the_model_refuses_is_refused_in_words_across_the_worker(toy_checkpoint, worker):
    model = Model("tiny", Translator(toy_checkpoint, "cpu"), "Tiny")
    with pytest.raises(ValueError, match="Not a French piece of this model"):  # the model's own message, not the worker's
        model.run(Translator.translate, ENGLISH, prefix=["▁no-such-piece"])
    assert [name for _, name in worker.calls] == ["translate"]
