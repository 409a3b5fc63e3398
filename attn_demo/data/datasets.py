"""The data sets: what each is, where the package reads it (the data home), and `fetch`, which gets it from
where its authors publish it, checked against the files the shipped models were trained and scored on.

    python -m attn_demo.data.datasets                     # where the data home is, and which sets it holds
    python -m attn_demo.data.datasets fetch               # every set (or name some: fetch hansards-wpt03)
    python -m attn_demo.data.datasets fetch --mirror URL  # from a copy of the published files (URL/<file name>)

The data home is the folder ATTN_DEMO_DATA names, else ~/.cache/attn-demo/data (under XDG_CACHE_HOME where
that is set): one folder a set, each file as its card names it. A download is resumed where it stopped; what
it unpacks to is checked file by file (sha256 of the text, of what a .gz file unzips to) and moved into the
data home only when every file is the one the cards were made with, or with --accept-changed, when the
publisher's file has changed since (FETCHED.json in the set's folder then says so)."""
import argparse
import gzip
import hashlib
import http.client
import json
import os
import re
import shutil
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from attn_demo.cli import HelpFormatter, run

HOME_VARIABLE = "ATTN_DEMO_DATA"
FETCHED = "FETCHED.json"  # what fetch got: where from, when, each file's checksum and whether it is the cards' own
USER_AGENT = "attn-demo-fetch/1 (+https://github.com/attn-demo)"  # some publishers refuse a request without one


def data_home() -> Path:
    """ATTN_DEMO_DATA where set, else the user's cache folder."""
    if os.environ.get(HOME_VARIABLE):
        return Path(os.environ[HOME_VARIABLE]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "attn-demo" / "data"


class MissingData(FileNotFoundError):
    """A data file that is not where it is read from; its message says the command that gets it."""


class FetchError(RuntimeError):
    """A download or an unpacked file that cannot be installed; its message says why and what to do."""


@dataclass(frozen=True)
class Download:
    """One file as its authors publish it, and how it becomes files of the set: unpack(downloaded, folder)."""
    url: str
    unpack: Callable[[Path, Path], None]

    @property
    def file_name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DataSet:
    name: str  # its folder in the data home
    what: str
    licence: str
    credit: str
    downloads: tuple[Download, ...]
    files: dict  # file name → (sha256 of its text, lines): the files the shipped cards were made with

    @property
    def folder(self) -> Path:
        return data_home() / self.name

    def path(self, file: str) -> Path:
        return self.folder / file

    def fetch_command(self) -> str:
        return f"python -m attn_demo.data.datasets fetch {self.name}"


# ---- unpacking: each publisher's format into the files the package reads -------------------------------------------

def _write_text(path: Path, lines) -> None:
    """Lines written as UTF-8 text; a .gz path gzipped without a time stamp or name, so the same text gives the same file."""
    data = "".join(lines).encode("utf-8")
    if path.suffix == ".gz":
        with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
            out.write(data)
    else:
        path.write_bytes(data)


def _member(names: list[str], wanted: tuple[str, ...]) -> str:
    """The archive member whose path ends with one of `wanted` (the first found), wherever the archive puts it."""
    for end in wanted:
        for name in names:
            if name == end or name.endswith("/" + end):
                return name
    raise FetchError(f"the archive holds none of {', '.join(wanted)}: it is not the file this set is made from")


def _archive_texts(archive: Path, wanted: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """{key: text of the member matching wanted[key]} of a .zip or a tar (any compression)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                names = z.namelist()
                return {key: z.read(_member(names, ends)).decode("utf-8") for key, ends in wanted.items()}
        with tarfile.open(archive) as tar:
            names = tar.getnames()
            return {key: tar.extractfile(_member(names, ends)).read().decode("utf-8") for key, ends in wanted.items()}
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, UnicodeDecodeError) as error:
        raise FetchError(f"{archive.name} cannot be read as an archive of UTF-8 text ({error})") from error


def _first_columns(text: str, first: int, last: int) -> list[str]:
    """Tab-separated lines cut to their columns first … last (0-based, inclusive)."""
    return ["\t".join(line.split("\t")[first:last + 1]) + "\n" for line in text.splitlines() if line.strip()]


def unpack_manythings(archive: Path, folder: Path) -> None:
    """manythings.org's fra-eng.zip: fra.txt (english, french, in later releases an attribution) → the pairs, gzipped;
    _about.txt → its notes and terms."""
    texts = _archive_texts(archive, {"pairs": ("fra.txt",), "about": ("_about.txt",)})
    _write_text(folder / "fra-eng-2019-04-07.tsv.gz", _first_columns(texts["pairs"], 0, 1))
    (folder / "ABOUT-manythings.txt").write_bytes(texts["about"].encode("utf-8"))


def unpack_tatoeba_test(download: Path, folder: Path) -> None:
    """The Tatoeba Challenge's test.txt (source language, target language, English, French) → english<TAB>french."""
    text = download.read_text(encoding="utf-8")
    _write_text(folder / "tatoeba-test-v2020-07-28.eng-fra.tsv", _first_columns(text, 2, 3))


def unpack_flores(archive: Path, folder: Path) -> None:
    """FLORES-200's archive: devtest/eng_Latn.devtest and devtest/fra_Latn.devtest, line by line → english<TAB>french."""
    texts = _archive_texts(archive, {"en": ("devtest/eng_Latn.devtest",), "fr": ("devtest/fra_Latn.devtest",)})
    english, french = texts["en"].splitlines(), texts["fr"].splitlines()
    if len(english) != len(french):
        raise FetchError(f"{archive.name}: {len(english)} English lines but {len(french)} French ones")
    _write_text(folder / "flores200-devtest.eng-fra.tsv", (f"{en}\t{fr}\n" for en, fr in zip(english, french)))


SENTENCE_MARKUP = re.compile(r"^<s snum=\d+>\s?|</s>\s*$")  # the shared task's texts wrap each line so


def unpack_hansards(archive: Path, folder: Path) -> None:
    """An archive of the WPT 2003 English–French data: the test and trial texts (their <s snum=…> markup taken off)
    and gold links, as test.* and dev.* (the trial set)."""
    wanted = {"test.e": ("test.e",), "test.f": ("test.f",), "test.wa.nonullalign": ("test.wa.nonullalign",),
              "dev.e": ("dev.e", "trial.e"), "dev.f": ("dev.f", "trial.f"), "dev.wa.nonullalign": ("dev.wa.nonullalign", "trial.wa")}
    for name, text in _archive_texts(archive, wanted).items():
        lines = text.splitlines()
        if not name.endswith(".wa.nonullalign"):
            lines = [SENTENCE_MARKUP.sub("", line) for line in lines]
        _write_text(folder / name, (line + "\n" for line in lines))


TATOEBA = DataSet(
    "tatoeba-fra-eng",
    "the training pairs (Tatoeba, as manythings.org/anki packaged it on 2019-04-07) and the Tatoeba Challenge test set "
    "(v2020-07-28)", "CC-BY 2.0 FR", "tatoeba.org, www.manythings.org/anki; Tiedemann 2020",
    (Download("https://www.manythings.org/anki/fra-eng.zip", unpack_manythings),
     Download("https://raw.githubusercontent.com/Helsinki-NLP/Tatoeba-Challenge/"
              "8bdab36cca8d33f912981c080c81da9a32120b8e/data/test/eng-fra/test.txt", unpack_tatoeba_test)),
    {"fra-eng-2019-04-07.tsv.gz": ("0bb85dbaa1c896844649094d7eaf2e34bee34e84fe362b26ce7e8f2e12aae104", 167130),
     "tatoeba-test-v2020-07-28.eng-fra.tsv": ("ef2fc98ee47f918ebe5bc3d85329f80afb267b4221ec42fcfa0bdd80efc4a6b2", 10000),
     "ABOUT-manythings.txt": ("79f39a53dbddaf7ab43c801f231089174a611f23987244056f9e3cb5aa79358b", 60)})
FLORES = DataSet(
    "flores200-devtest",
    "FLORES-200 devtest: 1,012 sentences of general text, professionally translated; test only, never trained or tuned on",
    "CC-BY-SA 4.0", "NLLB Team et al. 2022; Goyal et al. 2022",
    (Download("https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz", unpack_flores),),
    {"flores200-devtest.eng-fra.tsv": ("bd58df91cd6b2cc90e86b3e1f8b5ecb9e83a4cd4002568c87f2432f9d7c2d8c7", 1012)})
HANSARDS = DataSet(
    "hansards-wpt03",
    "the HLT-NAACL 2003 shared task's gold word alignments (Canadian Hansards): 447 test and 37 trial sentences",
    "released for research by the shared task", "Mihalcea & Pedersen 2003",
    (Download("https://web.eecs.umich.edu/~mihalcea/wpt/data/English-French.test.tar.gz", unpack_hansards),),
    {"test.e": ("d73d6edcf34615f9f9489d0c234a44eadb3294635d10c9ceb77c22afca46bb39", 447),
     "test.f": ("7aece2a76346cd3e36a43d6e2958bf08bd22a24469e50c7e21da90fe49e0402d", 447),
     "test.wa.nonullalign": ("eedb9a219cb672a79130557fd4a4bc698565078c6a64abe8d9b18c3bb3ec0651", 17438),
     "dev.e": ("56a871f16eafc2b44f9ba5942a636e2949baf288f228561f1889d821c04398d0", 37),
     "dev.f": ("fb337c8e86297a538ebe533f9d283dc6e186961ab9ca032257bc1c1769f71b6e", 37),
     "dev.wa.nonullalign": ("1c04fe099aa83c1ef0fd1044547e34684618f2362e20da8dca3d94cb3b096f74", 1784)})
DATASETS = {dataset.name: dataset for dataset in (TATOEBA, FLORES, HANSARDS)}


def require(path: Path) -> Path:
    """`path` if it is a file; else MissingData saying which set it belongs to and the command that gets it."""
    path = Path(path)
    if path.is_file():
        return path
    dataset = DATASETS.get(path.parent.name)
    if dataset is not None and path.name in dataset.files:
        raise MissingData(f"{path} is not here: the data set {dataset.name} is not in the data home {path.parent.parent} "
                          f"({HOME_VARIABLE} names another). Get it with: {dataset.fetch_command()}")
    raise MissingData(f"no file {path}")


def text_sha256(path: Path) -> tuple[str, int]:
    """(sha256, lines) of a file's text: of what it unzips to for a .gz file, so any gzip of the same text agrees."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return hashlib.sha256(data).hexdigest(), data.count(b"\n")


# ---- fetching ------------------------------------------------------------------------------------------------------

def download(url: str, target: Path, progress: bool = True, timeout: float = 60) -> Path:
    """`url` saved as `target`: written into target.part first and renamed when whole, so a stop leaves no file
    where a whole one is expected; a .part left by an earlier try is resumed (an HTTP range) where the server allows."""
    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": USER_AGENT, **({"Range": f"bytes={have}-"} if have else {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            if have and response.status != 206:  # the server sends the whole file again
                have = 0
            length = response.headers.get("Content-Length")
            total = have + int(length) if length is not None else None
            with part.open("ab" if have else "wb") as out, \
                    tqdm(total=total, initial=have, unit="B", unit_scale=True, desc=target.name, disable=not progress) as bar:
                while chunk := response.read(1 << 16):
                    out.write(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # the range asked for starts at the end: the .part is whole or was of another file
            part.unlink()
            return download(url, target, progress, timeout)
        raise FetchError(f"{url} answered HTTP {error.code} {error.reason}") from error
    except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
        got = part.stat().st_size if part.is_file() else 0
        reason = getattr(error, "reason", None) or error.__class__.__name__
        raise FetchError(f"the download of {url} stopped after {got:,} bytes ({reason}); run fetch again to go on "
                         "from there") from error
    got = part.stat().st_size
    if total is not None and got != total:
        raise FetchError(f"the download of {url} stopped at {got:,} of {total:,} bytes; run fetch again to go on from there")
    part.replace(target)
    return target


def _checksums(dataset: DataSet, folder: Path) -> dict:
    """{file: {"sha256", "lines"}} of each of the set's files that `folder` has."""
    return {name: dict(zip(("sha256", "lines"), text_sha256(folder / name))) for name in dataset.files
            if (folder / name).is_file()}


def _differences(dataset: DataSet, got: dict) -> list[str]:
    """How each file's checksums `got` differ from the cards' file (nothing: every file is that one)."""
    said = []
    for name, (sha256, lines) in dataset.files.items():
        if name not in got:
            said.append(f"{name} is missing")
        elif got[name]["sha256"] != sha256:
            said.append(f"{name} has {got[name]['lines']:,} lines (the cards': {lines:,}) and sha256 "
                        f"{got[name]['sha256'][:12]}… (the cards': {sha256[:12]}…)")
    return said


def fetch(dataset: DataSet, mirror: str | None = None, accept_changed: bool = False, progress: bool = True) -> Path:
    """Download, unpack and check `dataset`, then move it into the data home whole: its folder there, or FetchError."""
    home = data_home()
    incoming, downloads = home / f".{dataset.name}.incoming", home / ".downloads"
    try:
        downloads.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(incoming, ignore_errors=True)
        incoming.mkdir()
    except OSError as error:
        raise FetchError(f"the data home {home} cannot be written ({error.strerror or error}): set {HOME_VARIABLE} "
                         "to a folder you can write") from error
    try:
        got = []
        for item in dataset.downloads:
            url = f"{mirror.rstrip('/')}/{item.file_name}" if mirror else item.url
            saved = download(url, downloads / f"{dataset.name}--{item.file_name}", progress)
            try:  # a whole download is unpacked once: damaged or changed, the next fetch downloads it again
                item.unpack(saved, incoming)
                got.append({"url": url, "sha256": hashlib.sha256(saved.read_bytes()).hexdigest(), "bytes": saved.stat().st_size})
            finally:
                saved.unlink()
        files = _checksums(dataset, incoming)
        differences = _differences(dataset, files)
        if differences and not accept_changed:
            raise FetchError(f"{dataset.name}: what was published is not what the shipped cards were made with: "
                             + "; ".join(differences) + ". The cards' figures were made on the other release. Nothing was "
                             "installed; --accept-changed installs it anyway, marked as changed in " + FETCHED)
        record = {"dataset": dataset.name, "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "downloads": got, "files": files, "as_the_cards": not differences, "differences": differences}
        (incoming / FETCHED).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        return _install(incoming, home / dataset.name)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _install(incoming: Path, folder: Path) -> Path:
    """The checked folder put in place of the set's folder in two renames: never a set half old and half new."""
    old = folder.with_name(f".{folder.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    incoming.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def holds(dataset: DataSet, home: Path | None = None) -> bool:
    """Whether `home` (by default the data home) has every file of `dataset`."""
    folder = dataset.folder if home is None else Path(home) / dataset.name
    return all((folder / name).is_file() for name in dataset.files)


def find(dataset: DataSet, *homes: Path) -> Path | None:
    """The folder of `dataset` in the data home, else in the first of `homes` (folders laid out as the data home)
    that has all of it; None where none has."""
    for home in (data_home(), *homes):
        if holds(dataset, home):
            return Path(home) / dataset.name
    return None


def describe() -> str:
    """Where the data home is and what it holds, a line a set."""
    lines = [f"data home: {data_home()} ({HOME_VARIABLE} {'sets it' if os.environ.get(HOME_VARIABLE) else 'is not set'})"]
    for dataset in DATASETS.values():
        state = "here" if holds(dataset) else f"missing: {dataset.fetch_command()}"
        lines.append(f"  {dataset.name:<20} {state}")
    return "\n".join(lines)


def credits_table() -> str:
    """The README's table of the data sets: what each is, its licence and credit (the command that gets one is said once
    above it: `python -m attn_demo.data.datasets fetch SET`)."""
    rows = [f"| `{d.name}` | {d.what} | {d.licence}; {d.credit} |" for d in DATASETS.values()]
    return "| set | what it is | licence; credit |\n|---|---|---|\n" + "\n".join(rows)


def files_table() -> str:
    """docs/data.md's table: every file of every set, the sha256 of its text (`sha256sum FILE`, or `zcat FILE |
    sha256sum` for a .gz file) and its lines, as the shipped cards were made with, and where it is published."""
    rows = [f"| `{d.name}/{name}` | `{sha256}` | {lines:,} |" for d in DATASETS.values() for name, (sha256, lines) in d.files.items()]
    sources = [f"| `{d.name}` | " + "<br>".join(item.url for item in d.downloads) + " |" for d in DATASETS.values()]
    return ("| file | sha256 of its text | lines |\n|---|---|---|\n" + "\n".join(rows)
            + "\n\n| set | published at |\n|---|---|\n" + "\n".join(sources))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m attn_demo.data.datasets", description=__doc__, formatter_class=HelpFormatter)
    commands = p.add_subparsers(dest="command")
    get = commands.add_parser("fetch", help="download, check and install data sets", formatter_class=HelpFormatter)
    get.add_argument("names", nargs="*", metavar="NAME", help=f"the sets to get (default: all): {', '.join(DATASETS)}")
    get.add_argument("--mirror", metavar="URL", help="get each published file from URL/<its file name> instead")
    get.add_argument("--accept-changed", action="store_true",
                     help="install a set whose published files differ from those the cards were made with")
    get.add_argument("--quiet", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    if args.command != "fetch":
        print(describe())
        return 0
    unknown = [name for name in args.names if name not in DATASETS]
    if unknown:
        get.error(f"no data set called {', '.join(unknown)}: the sets are {', '.join(DATASETS)}")
    failed = 0
    for name in args.names or DATASETS:
        try:
            folder = fetch(DATASETS[name], args.mirror, args.accept_changed, progress=not args.quiet)
            print(f"{name}: in {folder}")
        except FetchError as error:
            print(f"{name}: {error}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    run(main)
