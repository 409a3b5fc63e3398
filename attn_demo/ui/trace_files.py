"""The files the page offers for download (a translation's traces, its exported HTML file): one folder for
every writer, each file written whole or not at all, and files older than an hour removed.

A file's name is a hash of what it holds (the models' weights, the sentence, the beam size…), so a class
asking for the same download shares one file, written once."""
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

FOLDER = Path(tempfile.gettempdir()) / "attn-demo-traces"  # shared by restarts: the hash names the weights
MAX_AGE_S = 3600
SWEEP_EVERY_S = 60  # the folder is swept at most this often: a sweep stats every file (8 ms at 700 files)


def remove_expired(folder: Path):
    """Files older than MAX_AGE_S. Other requests write, rename and remove files here at the same
    moment: one that is gone by the time it is looked at is passed over."""
    for old in folder.glob("attention-*"):
        try:
            if time.time() - old.stat().st_mtime > MAX_AGE_S:
                old.unlink(missing_ok=True)
        except FileNotFoundError:
            continue


class TraceFiles:
    """The download folder, shared by every session and section."""

    def __init__(self, folder: Path = FOLDER):
        self.folder = folder
        self.swept_at = float("-inf")  # time.monotonic() of the folder's last sweep

    def write(self, name: str, contents: Callable[[], bytes]) -> str:
        """The path of `name` in the folder, written from contents() unless it is there already. The
        file appears whole (written aside, then renamed): two users asking at once never see half a file."""
        path = self.folder / name
        if not path.exists():
            self.folder.mkdir(exist_ok=True)
            self.sweep()
            partial = path.with_suffix(f".{os.getpid()}.{time.monotonic_ns()}.part")
            partial.write_bytes(contents())
            partial.replace(path)
        return str(path)

    def sweep(self):
        """Remove the expired files, unless the folder was swept less than SWEEP_EVERY_S ago: a class
        writes a file for every new sentence, and a sweep for each cost as much as writing it
        (BENCHMARKS.md). Two requests sweeping at once is harmless (remove_expired)."""
        now = time.monotonic()
        if now - self.swept_at >= SWEEP_EVERY_S:
            self.swept_at = now
            remove_expired(self.folder)
