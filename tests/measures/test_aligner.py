from attn_demo.measures.aligner import aligner_links, grow_diag_final_and, tokenise_english, tokenise_french
from conftest import toy_pairs


def test_tokenisers_write_the_hansards_way():
    assert tokenise_english("The government's plan, today.") == ["the", "government", "'s", "plan", ",", "today", "."]
    assert tokenise_french("L’homme s'adresse au ministre des Transports aujourd'hui.") == [
        "le", "homme", "se", "adresse", "à", "le", "ministre", "de", "les", "transports", "aujourd'", "hui", "."]


def test_grow_diag_final_and_by_hand():
    forward = {(0, 0), (1, 1), (2, 1), (3, 3)}
    reverse = {(0, 0), (1, 1), (1, 2), (4, 4)}
    # from the intersection {(0,0), (1,1)}: (2,1) and (1,2) neighbour (1,1) with one word unaligned;
    # (3,3) and (4,4) join two unaligned words in the final step
    assert grow_diag_final_and(forward, reverse) == {(0, 0), (1, 1), (2, 1), (1, 2), (3, 3), (4, 4)}
    assert grow_diag_final_and(forward, forward) == forward


def test_eflomal_finds_the_adjective_noun_inversion():
    """The toy corpus puts French adjectives after their nouns: an aligner must cross the links.
    Each direction may leave a word unaligned (eflomal samples; about 1 run in 10 the forward
    direction sends "rouge" or "chat" to NULL), but none may draw a wrong link."""
    pairs = toy_pairs()
    english, french = [["the", "red", "cat"]], [["le", "chat", "rouge"]]
    links = aligner_links(english, french, pairs)
    assert set(links) == {"eflomal forward", "eflomal reverse", "eflomal intersection", "eflomal grow-diag-final-and"}
    right = {(0, 0), (1, 2), (2, 1)}
    for name, sentence_links in links.items():
        assert len(sentence_links) == 1 and sentence_links[0] <= right, name
    assert links["eflomal grow-diag-final-and"][0] == right
