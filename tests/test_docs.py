"""The guides describe the project as it is: every share link of docs/teaching.md opens a valid view of
one of the page's sentences with shipped models, the translation it quotes for a search it walks through
is the model's, the Transformer's grid, heads and card figures it quotes are the shipped Transformer's, its
answer key gives each conceptual question's right answer as the quiz words it, and every command of CONTRIBUTING.md names a module and options that exist."""
import ast
import dataclasses
import json
import re
import runpy
import subprocess
import sys
import warnings
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest

from attn_demo.checkpoints.card import read_card
from attn_demo.classroom.quiz import concept_questions
from attn_demo.decoding.attribution import METHODS
from attn_demo.decoding.grids import grid_name
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.measures.heads import corpus_statistics
from attn_demo.models.config import ModelConfig, read_config
from attn_demo.translator import load_translator
from attn_demo.ui.page import CONTENTS, section_id
from attn_demo.ui.share import LINK_FIELDS, link, read_link
from attn_demo.ui.translate import UNITS
from conftest import ROOT

TEACHING = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
SHIPPED = sorted(path.name for path in (ROOT / "checkpoints").iterdir() if (path / "config.json").is_file())


def flat(text: str) -> str:
    return " ".join(text.split())


def test_every_share_link_of_the_teaching_guide_opens_a_valid_view_as_the_share_button_writes_it():
    links = re.findall(r"`(\?q=[^`]+)`", TEACHING)
    assert len(links) >= 7
    sections = {section_id(key): key for key, _ in CONTENTS}
    defaults = {"q": EXAMPLES[0], "left": SHIPPED[0], "right": SHIPPED[0], "beam": 1, "step": 1, "unit": UNITS[0]}
    for written in links:
        parts = urlsplit(written)
        params = dict(parse_qsl(parts.query))
        assert list(params) == list(LINK_FIELDS), written
        view, problems = read_link(params, defaults, SHIPPED, UNITS)
        assert problems == [] and view["q"] in [*EXAMPLES, LONG_EXAMPLE], written
        section = sections[parts.fragment] if parts.fragment else CONTENTS[0][0]
        assert link("", *(view[field] for field in LINK_FIELDS), section) == written


def test_the_answer_key_gives_each_conceptual_questions_right_answer_as_the_quiz_words_it():
    configs = [read_config(ROOT / "checkpoints" / name / "config.json") for name in SHIPPED]
    sizes = {(c.dec_hidden_size, c.annotation_size) for c in configs if isinstance(c, ModelConfig)}
    assert len(sizes) == 1  # the quiz asks with the sizes of the first GRU model (a Transformer has none); the key quotes them
    key = flat(TEACHING[TEACHING.index("## Answer key"):])
    for question in concept_questions(*sizes.pop()):
        assert flat(question.choices[question.answer]) in key, question.prompt


def test_the_lesson_s_beam_at_every_step_writes_the_long_example_as_the_guide_quotes_it():
    """The coverage block sets β_cov 0, β_rep 1 and ticks "At every step" in the explorer on Luong (general)."""
    quoted = re.search(r'At every step\*\*: .*? writes "…(.+?)"', flat(TEACHING))[1]
    luong = load_translator(ROOT / "checkpoints" / "luong-en-fr")
    penalties = dataclasses.replace(luong.penalties, coverage=0.0, repeat=1.0, stepwise=True)  # as the explorer sets them
    assert luong.translate(LONG_EXAMPLE, beam_size=5, penalties=penalties).text.endswith(quoted)
    assert not luong.translate(LONG_EXAMPLE, beam_size=5).text.endswith(quoted)  # its own ranking repeats instead


def test_the_transformer_minutes_quote_the_shipped_transformer_s_grid_heads_and_card():
    """The grid the page shows, each head the guide picks out in its sentence with that head's own numbers (the
    page's: attn_demo.measures.heads), and the head the model card finds it needs most."""
    section = flat(TEACHING[TEACHING.index("### Ten more minutes"):TEACHING.index("## Answer key")])
    folder = ROOT / "checkpoints" / "transformer-en-fr"
    config, card = read_config(folder / "config.json"), read_card(folder)
    assert f"the note under it says which ({grid_name(config.layer_shown, config.shown_head)})" in section
    sentence = re.search(r"`\?q=([^&`]+)&left=[^&`]+&right=transformer-en-fr", section)[1]
    heads = corpus_statistics([load_translator(folder).translate(unquote(sentence))])
    confident, c, on_eos, eos_most, e, widest, w = re.search(
        r"In this sentence (layer \d, head \d) is among the most confident \(mean largest α ([\d.]+), (\d+)% of its α on "
        r"`</s>`\), (layer \d, head \d) puts the most on `</s>` \((\d+)%\) and (layer \d, head \d) spreads widest "
        r"\(([\d.]+)\)", section).groups()
    by_confidence = sorted(heads, key=lambda name: heads[name]["confidence"])
    assert confident in by_confidence[-3:] and f"{heads[confident]['confidence']:.2f}" == c
    assert f"{100 * heads[confident]['eos_share']:.0f}" == on_eos
    assert eos_most == max(heads, key=lambda name: heads[name]["eos_share"])
    assert f"{100 * heads[eos_most]['eos_share']:.0f}" == e
    assert widest == by_confidence[0] and f"{heads[widest]['confidence']:.2f}" == w
    needed = re.search(r"without (layer \d, head \d) or (layer \d, head \d) the model loses more than three times as much "
                       r"BLEU as without any other head, yet neither aligns as well as the grid the page shows", section).groups()
    costs = sorted(card["heads"]["heads"], key=lambda name: card["heads"]["heads"][name]["bleu_cost"], reverse=True)
    cost = {name: card["heads"]["heads"][name]["bleu_cost"] for name in costs}
    assert list(needed) == costs[:2] and cost[costs[1]] > 3 * cost[costs[2]]
    aer = card["alignment_results"]["heads"]["test"]  # each grid's argmax AER on the Hansards test split
    assert all(aer[name] > aer[grid_name(config.layer_shown, config.shown_head)] for name in needed)


def test_the_readme_s_lesson_on_the_transformer_follows_the_cards():
    """Whether the Transformer trails or leads the RNNs on the Tatoeba test and on general text, and whether integrated
    gradients align better than α in the RNNs and in the Transformer, as the cards measure (the teaching guide says
    the latter too)."""
    cards = {name: read_card(ROOT / "checkpoints" / name) for name in SHIPPED}
    kinds = {name: read_config(ROOT / "checkpoints" / name / "config.json").attention for name in SHIPPED}

    def place(results: str) -> str:
        transformer = max(cards[name][results]["bleu"] for name in SHIPPED if kinds[name] == "transformer")
        rnns = max(cards[name][results]["bleu"] for name in SHIPPED if kinds[name] != "transformer")
        return "leads" if transformer > rnns else "trails"

    def attribution(name: str) -> str:  # the best AER of integrated gradients' links against α's best
        aer = cards[name]["alignment_results"]["aer"]
        alpha = min(value for rule, value in aer.items() if not rule.startswith(METHODS))
        return "better" if min(value for rule, value in aer.items() if rule.startswith("integrated-gradients")) < alpha else "worse"

    rnns = {attribution(name) for name in SHIPPED if kinds[name] not in ("transformer", "none")}
    transformers = {attribution(name) for name in SHIPPED if kinds[name] == "transformer"}
    lesson = f"integrated gradients align {rnns.pop()} than α in the RNNs (Ding, Xu & Koehn 2019), {transformers.pop()} in the Transformer"
    assert lesson in flat(README) and lesson in flat(TEACHING) and not rnns and not transformers
    tatoeba, general = place("test_results"), place("general_results")
    said = (f"the Transformer {tatoeba} on Tatoeba and on general text" if tatoeba == general
            else f"the Transformer {tatoeba} on Tatoeba but {general} on general text")
    assert said in flat(README)


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(set(re.findall(r"python -m ((?:attn_demo|benchmarks)(?:\.\w+)+)", CONTRIBUTING))))
def test_every_command_of_the_contributors_guide_has_the_options_it_writes(module, monkeypatch, capsys):
    commands = CONTRIBUTING.replace("\\\n", " ")
    options = {option for rest in re.findall(rf"python -m {re.escape(module)}\b([^\n`]*)", commands)
               for option in re.findall(r"(?<!\S)(--[a-z][a-z-]*)", rest)}
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    with pytest.raises(SystemExit) as ended, warnings.catch_warnings():  # `python -m module --help`, in this process
        warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module was imported before, by another test
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    shown = capsys.readouterr().out
    assert ended.value.code in (0, None)
    assert all(option in shown for option in options), sorted(o for o in options if o not in shown)


# Words about how the project is being built, not about the project (its people read code, docs and
# cards as they are now): numbered work stops or sittings, issue numbers, borrowed machines.
BUILD_WORDS = re.compile(r"\bstops? \d|\bsittings? \d|\bissues? #?\d|\bleas(e|es|ed)\b|\blent\b|\btravel",
                         re.IGNORECASE)
# A checkpoint's data files hold the training corpus's vocabulary and the model's own sentences (English words
# the models learned, some of them on the list), not words about the project.
DATA_FILES = ("training-data.json", "timeline.json")


def tracked_text_files() -> list:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for name in listed.stdout.split("\0"):
        path = ROOT / name
        if name and path.is_file() and not name.endswith(DATA_FILES):
            data = path.read_bytes()
            if b"\0" not in data[:8000]:
                yield name, data.decode("utf-8", errors="replace")


def test_no_file_speaks_of_how_the_project_is_being_built():
    found = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}"
             for name, text in tracked_text_files() for match in BUILD_WORDS.finditer(text)]
    assert found == [], "\n".join(found)


def test_the_readme_s_layout_is_the_package_s_tree():
    """The README's Layout block names every subpackage of attn_demo, and nothing else, under attn_demo/; each
    subpackage has a docstring saying its concern."""
    block = README.split("## Layout", 1)[1].split("```")[1]
    listed = re.findall(r"^  (\w+)/ ", block, flags=re.MULTILINE)
    packages = sorted(path.parent.name for path in (ROOT / "attn_demo").glob("*/__init__.py"))
    assert sorted(listed) == packages
    for name in packages:
        doc = ast.get_docstring(ast.parse((ROOT / "attn_demo" / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc, name


@pytest.mark.parametrize("name, limit", [("README.md", 15_000), ("BENCHMARKS.md", 20_000)])  # a card's: test_card
def test_the_front_docs_stay_short_enough_to_read(name, limit):
    assert len((ROOT / name).read_text(encoding="utf-8")) <= limit


def test_the_benchmark_tables_are_those_of_the_committed_run():
    """BENCHMARKS.md shows each section of benchmarks/results.json, the classroom load of
    benchmarks/classroom.json and the step changes of benchmarks/steps.json, as the benchmark prints them: a re-run
    that is committed without the document following (or an edited figure) fails here."""
    from benchmarks.bench import SECTIONS, table
    from benchmarks.bench_app import classroom_table
    results = json.loads((ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    classroom = json.loads((ROOT / "benchmarks" / "classroom.json").read_text(encoding="utf-8"))
    steps = json.loads((ROOT / "benchmarks" / "steps.json").read_text(encoding="utf-8"))
    shown = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    commands = " ".join(shown.replace("\\\n", " ").split())
    sections = [key for key in SECTIONS if key in results]
    assert sections == list(SECTIONS) and results["quick"] is False and classroom["quick"] is False
    for key in sections:
        assert table(results[key]) in shown, key
    assert table(classroom_table(classroom["classroom"])) in shown and table(steps["steps"]) in shown
    assert all(run["command"] in commands and run["quick"] is False for run in (results, classroom, steps))


def test_the_train_live_table_is_that_of_the_committed_run():
    """BENCHMARKS.md shows benchmarks/train_live.json's table as benchmarks.train_live prints it, with its command."""
    from benchmarks.train_live import table
    run = json.loads((ROOT / "benchmarks" / "train_live.json").read_text(encoding="utf-8"))
    shown = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert table(run) in shown and run["command"] in shown


def test_the_first_view_tables_are_those_of_the_committed_run():
    """BENCHMARKS.md shows benchmarks/first_view.json's two tables as benchmarks.first_view prints them."""
    from benchmarks.first_view import grid_table, join_table
    run = json.loads((ROOT / "benchmarks" / "first_view.json").read_text(encoding="utf-8"))
    shown = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert grid_table(run["grids"]) in shown and join_table(run["joins"]) in shown and run["command"] in shown

def test_the_training_step_table_is_that_of_the_committed_run():
    """BENCHMARKS.md shows benchmarks/train_step.json's table as benchmarks.train_step prints it, with its command."""
    from benchmarks.train_step import table
    run = json.loads((ROOT / "benchmarks" / "train_step.json").read_text(encoding="utf-8"))
    shown = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert table(run) in shown and run["command"] in shown
