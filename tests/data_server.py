"""A local HTTP server for the data sets' tests: it serves the files of a folder as a publisher would (with HTTP
ranges, so a download can be resumed), and on request misbehaves as networks do: a file cut short, a server
gone in the middle of one. Every request it answered is kept, with its Range header."""
import gzip
import io
import shutil
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class DataServer:
    """Serves `folder` on 127.0.0.1: /NAME whole (or the range asked), /cut/NAME stops half-way through NAME while
    promising all of it, /gone/NAME sends half of NAME and the server then stops listening; anything else is a 404."""

    def __init__(self, folder: Path, port: int = 0):
        self.folder, self.requests = Path(folder), []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                mode, _, name = self.path.lstrip("/").rpartition("/")
                path = server.folder / name
                if mode not in ("", "cut", "gone") or not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                start = int(self.headers["Range"].split("=")[1].split("-")[0]) if self.headers.get("Range") else 0
                if start >= len(data) and start:
                    self.send_error(416)
                    return
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if mode in ("cut", "gone"):
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    if mode == "gone":
                        threading.Thread(target=server.stop).start()
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, mode: str = "") -> str:
        return f"http://127.0.0.1:{self.port}" + (f"/{mode}" if mode else "")

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def published_copies(data: Path, into: Path) -> Path:
    """The files of the data sets in `data` (a data home) packed as their authors publish them, into `into`."""
    into.mkdir(parents=True, exist_ok=True)
    tatoeba, flores, hansards = data / "tatoeba-fra-eng", data / "flores200-devtest", data / "hansards-wpt03"
    with zipfile.ZipFile(into / "fra-eng.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("fra.txt", gzip.decompress((tatoeba / "fra-eng-2019-04-07.tsv.gz").read_bytes()))
        z.write(tatoeba / "ABOUT-manythings.txt", "_about.txt")
    test = (tatoeba / "tatoeba-test-v2020-07-28.eng-fra.tsv").read_text(encoding="utf-8")
    (into / "test.txt").write_text("".join(f"eng\tfra\t{line}\n" for line in test.splitlines()), encoding="utf-8")
    english, french = zip(*(line.split("\t") for line in (flores / "flores200-devtest.eng-fra.tsv")
                            .read_text(encoding="utf-8").splitlines()))
    with tarfile.open(into / "flores200_dataset.tar.gz", "w:gz") as tar:
        _add(tar, "flores200_dataset/devtest/eng_Latn.devtest", "".join(f"{en}\n" for en in english))
        _add(tar, "flores200_dataset/devtest/fra_Latn.devtest", "".join(f"{fr}\n" for fr in french))
        _add(tar, "flores200_dataset/dev/eng_Latn.dev", "another split\n")
    with tarfile.open(into / "English-French.test.tar.gz", "w:gz") as tar:
        for split, folder in (("test", "test"), ("trial", "trial")):
            ours = "test" if split == "test" else "dev"
            for side in ("e", "f"):
                lines = (hansards / f"{ours}.{side}").read_text(encoding="utf-8").splitlines()
                _add(tar, f"English-French/{folder}/{split}.{side}",
                     "".join(f"<s snum={i:04d}> {line}</s>\n" for i, line in enumerate(lines, 1)))
        _add(tar, "English-French/answers/test.wa.nonullalign", (hansards / "test.wa.nonullalign").read_text())
        _add(tar, "English-French/trial/trial.wa", (hansards / "dev.wa.nonullalign").read_text())
    return into


def _add(tar: tarfile.TarFile, name: str, text: str) -> None:
    data = text.encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def copy_changed(published: Path, into: Path) -> Path:
    """The published files with the Tatoeba pairs grown by one pair, as a newer release of the packager's would be."""
    shutil.copytree(published, into)
    with zipfile.ZipFile(published / "fra-eng.zip") as old, zipfile.ZipFile(into / "fra-eng.zip", "w") as new:
        new.writestr("fra.txt", old.read("fra.txt") + "A new sentence.\tUne nouvelle phrase.\tCC-BY 2.0 (France)\n".encode())
        new.writestr("_about.txt", old.read("_about.txt"))
    return into
