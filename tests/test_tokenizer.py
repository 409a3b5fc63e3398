import pytest

from attn_demo.tokenizer import MAX_INPUT_CHARS, check_text


def test_check_text_normalises_whitespace():
    assert check_text("  the \t red\n cat  ") == "the red cat"


def test_check_text_accepts_latin_punctuation_and_accents():
    assert check_text("Où est le café? It's 5 o'clock!") == "Où est le café? It's 5 o'clock!"


@pytest.mark.parametrize("text", ["\x07bell", "tab\x1bescape", "right\u202eto-left override", "soft\u00adhyphen"])
def test_control_and_invisible_characters_are_named(text):
    with pytest.raises(ValueError, match=r"U\+"):
        check_text(text)


def test_limit_is_stated_in_the_message():
    assert check_text("a" * MAX_INPUT_CHARS)
    with pytest.raises(ValueError, match=str(MAX_INPUT_CHARS)):
        check_text("a" * (MAX_INPUT_CHARS + 1))


def test_special_ids_are_fixed(toy_tokenizers):
    for tok, text in zip(toy_tokenizers, ("I see the red cat.", "je vois le chat rouge.")):
        assert (tok.sp.pad_id(), tok.sp.unk_id(), tok.sp.bos_id(), tok.sp.eos_id()) == (0, 1, 2, 3)
        ids = tok.encode(text)
        assert min(ids) > 3 and tok.decode(ids) == text
