"""benchmarks/classroom.py and benchmarks.rest_load, the room and lecture-hall benchmarks, against apps they start or
the running one: each must run end to end, and every vote it sends be counted once. Their timings are not asserted."""
import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # starts apps and loads them


def test_the_room_benchmark_plays_a_small_room_through_and_counts_every_vote_once(app_url):
    """benchmarks/classroom.py against the running app: a few phones, each vote counted once, no errors."""
    shown = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "classroom.py"), "--url", app_url, "--students", "4",
                            "--within", "2", "--rooms", "1"], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert "every vote counted once: True" in shown.stdout and "errors: 0" in shown.stdout


def test_the_room_benchmark_compares_others_translating_with_the_echo_only_on_servers_it_starts(monkeypatch, capsys):
    from benchmarks.classroom import main as room_benchmark
    monkeypatch.setattr(sys, "argv", ["classroom.py", "--url", "http://127.0.0.1:9/", "--translators", "2"])
    with pytest.raises(SystemExit) as refused:
        room_benchmark()
    assert refused.value.code == 2 and "leave out --url" in capsys.readouterr().err


def test_the_room_benchmark_times_others_translating_beside_the_room():
    """benchmarks/classroom.py --translators: the room twice, translations on the echo then on the app, compared."""
    shown = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "classroom.py"), "--students", "3", "--within", "2",
                            "--translators", "3", "--per-translator", "1"], capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    for app in ("echo", "attn-demo"):
        assert re.search(rf"translate on {app} during the room: p50 \d+ ms, p95 \d+ ms, max \d+ ms \(n=3\); errors 0", out), out
    assert out.count("every vote counted once: True") == 2 and re.search(r"p95 \d+\.\d\d× the echo's", out)


def test_the_lecture_hall_benchmark_loads_the_student_page_and_votes_for_every_phone_through_a_dead_process(app_url):
    """benchmarks.rest_load --with-page on the running app beside an address that refuses every connection (a process
    killed), as a load balancer in front of both: each phone sent there first loads its page and votes on the app,
    each counted once."""
    import asyncio

    import app
    from benchmarks import rest_load
    from benchmarks.server import free_port

    code, _ = asyncio.run(rest_load.call(app_url, "class_open", "The red car.", app.OPENING_PICKS[0])).data
    dead = f"http://127.0.0.1:{free_port()}/"
    result = asyncio.run(rest_load.join_and_vote([app_url, dead], code, 3, phones=8, within_s=0.5, seed=0))
    report = rest_load.hall_report(result)
    assert (report["pages_ok"], report["votes_ok"], report["pages_failed"], report["votes_failed"]) == (8, 8, 0, 0)
    assert 0 < report["page_kB"] < 50
    assert sum(asyncio.run(rest_load.call(app_url, "class_tally", code)).data[0]["counts"]) == 8


def test_the_press_benchmark_has_every_student_translate_then_press_in_its_own_session(app_url):
    """benchmarks.rest_load --press: each student's press reads the translation its own session made (an attribution,
    not a request to translate first), every one answered with the same reply."""
    import asyncio

    import app
    from benchmarks import rest_load

    press = ("attribute", "input-x-gradient", False, "pieces")
    summary, reply = asyncio.run(rest_load.press_together(app_url, 3, "The red car.", app.OPENING_PICKS, press))
    assert {key: summary[key] for key in ("translated", "answered", "errors", "distinct_replies")} == \
        {"translated": 3, "answered": 3, "errors": 0, "distinct_replies": 1}
    assert "Spearman" in json.dumps(reply, ensure_ascii=False)
