from attn_demo.measures.aligner import aligner_links, grow_diag_final_and, tokenise_english, tokenise_french
from attn_demo.measures.marks import ALIGNER_VOTES
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
    Each direction may leave a word unaligned (eflomal samples, seeded from the system: of 1,000 runs, each direction
    sent "rouge" or "chat" to NULL in about 60, both in 1), but no run may draw a wrong link, and the majority of
    ALIGNER_VOTES runs finds all three, as the measures that read eflomal count (measures.marks)."""
    pairs = toy_pairs()
    english, french = [["the", "red", "cat"]], [["le", "chat", "rouge"]]
    runs = [aligner_links(english, french, pairs) for _ in range(ALIGNER_VOTES)]
    right = {(0, 0), (1, 2), (2, 1)}
    for links in runs:
        assert set(links) == {"eflomal forward", "eflomal reverse", "eflomal intersection", "eflomal grow-diag-final-and"}
        for name, sentence_links in links.items():
            assert len(sentence_links) == 1 and sentence_links[0] <= right, name
    symmetrised = [links["eflomal grow-diag-final-and"][0] for links in runs]
    assert 2 * symmetrised.count(right) > ALIGNER_VOTES, symmetrised
