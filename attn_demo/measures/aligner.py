"""The reference a word aligner sets: eflomal (Östling & Tiedemann 2017, Bayesian IBM-style
models with HMM alignment and fertility), trained unsupervised on the sentences it aligns plus
Tatoeba pairs, as aligners are used, then symmetrised.

The Tatoeba text is lowercased and split by regular expressions into the Hansards tokenisation:
words and single punctuation marks, English "'s" as a word, French elisions and contractions
spelled out ("l'" → "le", "du" → "de le"), as in the gold files."""
import re
import tempfile
from pathlib import Path

ENGLISH_TOKEN = re.compile(r"'s\b|\w+|[^\w\s]")
FRENCH_TOKEN = re.compile(r"\w+'|\w+|[^\w\s]")  # "l'homme" → "l'", "homme"
ELISIONS = {"c'": "ce", "d'": "de", "j'": "je", "l'": "le", "m'": "me", "n'": "ne", "qu'": "que", "s'": "se",
            "t'": "te", "jusqu'": "jusque", "lorsqu'": "lorsque", "puisqu'": "puisque"}
CONTRACTIONS = {"du": "de le", "des": "de les", "au": "à le", "aux": "à les"}
NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def tokenise_english(text: str) -> list[str]:
    return ENGLISH_TOKEN.findall(text.replace("’", "'").lower())


def tokenise_french(text: str) -> list[str]:
    tokens = FRENCH_TOKEN.findall(text.replace("’", "'").lower())
    return " ".join(CONTRACTIONS.get(t, ELISIONS.get(t, t)) for t in tokens).split()


def eflomal_links(english: list[list[str]], french: list[list[str]]) -> tuple[list[set], list[set]]:
    """Forward (each French word → one English word or none) and reverse links of every pair,
    as (English word, French word) sets; eflomal writes both in source–target order."""
    import eflomal  # a development requirement: the app reads the tokenisers here without it
    with tempfile.TemporaryDirectory() as folder:
        forward, reverse = Path(folder) / "fwd", Path(folder) / "rev"
        eflomal.Aligner().align([" ".join(e) + "\n" for e in english], [" ".join(f) + "\n" for f in french],
                                links_filename_fwd=str(forward), links_filename_rev=str(reverse))
        return _read_links(forward), _read_links(reverse)


def _read_links(path: Path) -> list[set]:
    return [{tuple(int(i) for i in link.split("-")) for link in line.split()}
            for line in path.read_text().splitlines()]


def grow_diag_final_and(forward: set, reverse: set) -> set:
    """Koehn, Och & Marcu 2003: start from the intersection, add union links next to (or
    diagonal to) a link while either word is unaligned, then union links joining two unaligned words."""
    union, links = forward | reverse, forward & reverse
    grown = True
    while grown:
        grown = False
        for e, f in sorted(links):
            for de, df in NEIGHBOURS:
                link = (e + de, f + df)
                english_aligned, french_aligned = {a for a, _ in links}, {b for _, b in links}
                if link in union and link not in links and (link[0] not in english_aligned or link[1] not in french_aligned):
                    links.add(link)
                    grown = True
    for link in sorted(forward) + sorted(reverse):
        if link[0] not in {a for a, _ in links} and link[1] not in {b for _, b in links}:
            links.add(link)
    return links


def aligner_links(english: list[list[str]], french: list[list[str]], extra_pairs) -> dict:
    """Align the given sentences, trained together with extra_pairs (raw English–French text);
    → name → links of each given sentence, for each symmetrisation."""
    english = english + [tokenise_english(e) for e, _ in extra_pairs]
    french = french + [tokenise_french(f) for _, f in extra_pairs]
    forward, reverse = eflomal_links(english, french)
    n = len(english) - len(extra_pairs)
    forward, reverse = forward[:n], reverse[:n]
    return {
        "eflomal forward": forward,
        "eflomal reverse": reverse,
        "eflomal intersection": [f & r for f, r in zip(forward, reverse)],
        "eflomal grow-diag-final-and": [grow_diag_final_and(f, r) for f, r in zip(forward, reverse)],
    }
