"""attn_demo.data.datasets: the data home, and fetch against a local server that serves the data sets as their authors
publish them (packed from the copies the tests read), including a file cut short, one changed since the cards, a
server gone mid-file and a data home that cannot be written."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attn_demo.data import datasets
from attn_demo.data.datasets import DATASETS, FETCHED, HOME_VARIABLE, FetchError, MissingData, data_home, fetch, require
from data_server import DataServer, copy_changed, published_copies

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ[HOME_VARIABLE])  # the copies the tests read (conftest)


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    return published_copies(DATA, tmp_path_factory.mktemp("published"))


@pytest.fixture
def server(published):
    served = DataServer(published)
    yield served
    served.stop()


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(HOME_VARIABLE, str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_data_home_is_the_variable_else_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(HOME_VARIABLE, str(tmp_path / "mine"))
    assert data_home() == tmp_path / "mine"
    monkeypatch.delenv(HOME_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_home() == tmp_path / "cache" / "attn-demo" / "data"
    assert DATASETS["hansards-wpt03"].folder == tmp_path / "cache" / "attn-demo" / "data" / "hansards-wpt03"


@pytest.mark.parametrize("name", DATASETS)
def test_every_file_the_tests_read_is_the_one_the_cards_were_made_with(name):
    for file, (sha256, lines) in DATASETS[name].files.items():
        assert datasets.text_sha256(DATA / name / file) == (sha256, lines), file


@pytest.mark.parametrize("name", DATASETS)
def test_fetch_unpacks_each_published_file_into_exactly_the_files_of_the_cards(name, home, server):
    folder = fetch(DATASETS[name], server.url(), progress=False)
    assert folder == home / name
    assert sorted(p.name for p in folder.iterdir()) == sorted([*DATASETS[name].files, FETCHED])
    record = json.loads((folder / FETCHED).read_text())
    assert record["as_the_cards"] and record["differences"] == []
    assert [d["url"] for d in record["downloads"]] == [f"{server.url()}/{d.file_name}" for d in DATASETS[name].downloads]
    assert sorted(p.name for p in home.iterdir()) == [".downloads", name]  # nothing half-made left beside it
    assert list((home / ".downloads").iterdir()) == []


def test_a_file_cut_short_is_said_kept_as_a_part_only_and_resumed_where_it_stopped(home, server, published):
    flores = DATASETS["flores200-devtest"]
    with pytest.raises(FetchError, match=r"stopped .* run fetch again to go on from there"):
        fetch(flores, server.url("cut"), progress=False)
    part = home / ".downloads" / "flores200-devtest--flores200_dataset.tar.gz.part"
    size = (published / "flores200_dataset.tar.gz").stat().st_size
    assert part.is_file() and 0 < part.stat().st_size < size
    assert not (home / flores.name).exists()  # no set where a whole one is expected
    fetch(flores, server.url(), progress=False)
    assert server.requests[-1] == ("/flores200_dataset.tar.gz", f"bytes={size // 2}-")  # resumed, not started again
    assert datasets.holds(flores) and not part.exists()


def test_a_server_gone_mid_file_is_said_and_the_next_fetch_goes_on(home, published):
    hansards = DATASETS["hansards-wpt03"]
    gone = DataServer(published)
    with pytest.raises(FetchError, match="stopped"):
        fetch(hansards, gone.url("gone"), progress=False)
    with pytest.raises(FetchError, match="stopped after [0-9,]+ bytes"):  # the server is not there at all now
        fetch(hansards, gone.url(), progress=False)
    assert not (home / hansards.name).exists()
    back = DataServer(published, port=gone.port)
    try:
        fetch(hansards, back.url(), progress=False)
    finally:
        back.stop()
    assert datasets.holds(hansards)


def test_a_published_file_changed_since_the_cards_is_said_and_installed_only_when_accepted(home, published, tmp_path):
    changed = DataServer(copy_changed(published, tmp_path / "changed"))
    tatoeba = DATASETS["tatoeba-fra-eng"]
    try:
        with pytest.raises(FetchError) as refused:
            fetch(tatoeba, changed.url(), progress=False)
        said = str(refused.value)
        assert "fra-eng-2019-04-07.tsv.gz has 167,131 lines (the cards': 167,130)" in said
        assert "The cards' figures were made on the other release. Nothing was installed" in said
        assert not (home / tatoeba.name).exists() and not list((home / ".downloads").iterdir())
        fetch(tatoeba, changed.url(), accept_changed=True, progress=False)
    finally:
        changed.stop()
    record = json.loads((home / tatoeba.name / FETCHED).read_text())
    assert not record["as_the_cards"] and "fra-eng-2019-04-07.tsv.gz" in record["differences"][0]
    assert record["files"]["tatoeba-test-v2020-07-28.eng-fra.tsv"]["lines"] == 10000


def test_a_set_fetched_again_replaces_the_old_one_whole(home, server):
    hansards = DATASETS["hansards-wpt03"]
    fetch(hansards, server.url(), progress=False)
    (home / hansards.name / "test.e").write_text("damaged\n")
    fetch(hansards, server.url(), progress=False)
    assert datasets.text_sha256(home / hansards.name / "test.e")[0] == hansards.files["test.e"][0]


def test_a_wrong_address_and_a_data_home_that_cannot_be_written_are_said(home, server, tmp_path, monkeypatch):
    with pytest.raises(FetchError, match="answered HTTP 404"):
        fetch(DATASETS["hansards-wpt03"], server.url("nowhere"), progress=False)
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(HOME_VARIABLE, str(tmp_path / "a-file" / "data"))
    with pytest.raises(FetchError, match=f"cannot be written .* set {HOME_VARIABLE} to a folder you can write"):
        fetch(DATASETS["hansards-wpt03"], server.url(), progress=False)


def test_a_missing_data_file_names_the_command_that_gets_it(tmp_path):
    missing = tmp_path / "tatoeba-fra-eng" / "tatoeba-test-v2020-07-28.eng-fra.tsv"
    with pytest.raises(MissingData, match="python -m attn_demo.data.datasets fetch tatoeba-fra-eng"):
        require(missing)
    with pytest.raises(MissingData, match="no file"):
        require(tmp_path / "mine.tsv")


def run_module(module: str, *args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, HOME_VARIABLE: str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_the_commands_say_a_missing_set_in_one_line_and_fetch_gets_it(tmp_path, server):
    empty = tmp_path / "empty"
    ran = run_module("attn_demo.evaluation.evaluate", str(ROOT / "checkpoints" / "luong-en-fr"), "--general", home=empty, cwd=tmp_path)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert "python -m attn_demo.data.datasets fetch flores200-devtest" in ran.stderr.strip().splitlines()[-1]
    listed = run_module("attn_demo.data.datasets", home=empty, cwd=tmp_path)
    assert listed.returncode == 0 and "missing: python -m attn_demo.data.datasets fetch hansards-wpt03" in listed.stdout
    got = run_module("attn_demo.data.datasets", "fetch", "hansards-wpt03", "flores200-devtest", "--mirror", server.url(),
                     home=empty, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert f"hansards-wpt03: in {empty / 'hansards-wpt03'}" in got.stdout
    unknown = run_module("attn_demo.data.datasets", "fetch", "wmt14", home=empty, cwd=tmp_path)
    assert unknown.returncode == 2 and "no data set called wmt14" in unknown.stderr and "Traceback" not in unknown.stderr


def test_the_readme_and_the_data_guide_show_the_sets_as_the_package_describes_them():
    assert datasets.credits_table() in (ROOT / "README.md").read_text(encoding="utf-8")
    assert datasets.files_table() in (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
