"""The download folder: files written whole and once, expired ones removed, the folder swept at most once a minute."""
import os
import time

from attn_demo.ui import trace_files
from attn_demo.ui.trace_files import MAX_AGE_S, SWEEP_EVERY_S, TraceFiles, remove_expired


def test_expired_trace_files_go_and_one_gone_meanwhile_is_passed_over(tmp_path, monkeypatch):
    old, new = tmp_path / "attention-trace-old.json", tmp_path / "attention-trace-new.json"
    for path in (old, new):
        path.write_text("{}")
    os.utime(old, (time.time() - MAX_AGE_S - 1,) * 2)
    gone = tmp_path / "attention-trace-x.123.456.part"  # renamed by another request between glob and stat
    listed = [gone, old, new]
    monkeypatch.setattr(type(tmp_path), "glob", lambda self, pattern: iter(listed))
    remove_expired(tmp_path)
    assert not old.exists() and new.exists()


def test_a_file_is_written_once_whole_and_the_folder_swept_once_a_minute_not_for_every_new_file(tmp_path, monkeypatch):
    files, swept, written = TraceFiles(tmp_path / "downloads"), [], []
    monkeypatch.setattr(trace_files, "remove_expired", swept.append)

    def contents(name):
        return lambda: written.append(name) or name.encode()
    paths = [files.write(f"attention-{name}.json", contents(name)) for name in ("cat", "dog")]
    assert swept == [files.folder] and [open(path).read() for path in paths] == ["cat", "dog"]
    assert sorted(os.listdir(files.folder)) == ["attention-cat.json", "attention-dog.json"]  # no part left behind
    monkeypatch.setattr(files, "swept_at", time.monotonic() - SWEEP_EVERY_S)  # a minute later
    assert files.write("attention-cat.json", contents("again")) == paths[0] and written == ["cat", "dog"]  # there: not again
    assert swept == [files.folder]  # and no sweep for a file already written
    files.write("attention-pen.json", contents("pen"))
    assert swept == [files.folder, files.folder]


def test_the_translate_sections_trace_file_goes_through_the_download_folder(section):
    state = section.translate("I see a cat.", 1, False, "pieces").state
    path = section.trace_file(state)
    assert os.path.dirname(path) == str(section.files.folder) and section.trace_file(state) == path
