"""Shared fixtures: a toy English→French corpus with adjective–noun inversion, tokenizers
trained on it, and tiny models with distinct sizes (E=5, D=6, H=7, A=4; a Transformer of D=12 in 3
heads of d_k=4, 1 encoder and 2 decoder layers, feed-forward 10) so a swapped dimension fails loudly."""
import base64
import json
import os
import shutil
import sys
from pathlib import Path

import huggingface_hub.constants
import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The data sets the tests read (attn_demo.data.datasets): ../shared/data beside the checkout, where CI has it, unless a data
# home is named; set before attn_demo is imported, which reads it once.
os.environ.setdefault("ATTN_DEMO_DATA", str(ROOT.parent / "shared" / "data"))

from attn_demo.checkpoints.folder import save_checkpoint  # noqa: E402
from attn_demo.checkpoints.folder import build_model  # noqa: E402
from attn_demo.models.attention import KINDS  # noqa: E402
from attn_demo.models.config import MODEL_KINDS, ModelConfig, TransformerConfig  # noqa: E402
from attn_demo.models.tokenizer import train_tokenizer  # noqa: E402
from attn_demo.serving.catalogue import load_models  # noqa: E402
from attn_demo.translator import pick_device  # noqa: E402
from attn_demo.ui.page import ModelsOnPage  # noqa: E402
from attn_demo.ui.trace_files import TraceFiles  # noqa: E402
from attn_demo.ui.translate import TranslateSection  # noqa: E402
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS, REDIS_SERVER, RedisServer, Server  # noqa: E402

DEVICE = pick_device().type  # the suite's translators run where the app's would: on a GPU where there is one

COLOURS = {"red": "rouge", "blue": "bleu", "green": "vert", "black": "noir", "white": "blanc", "yellow": "jaune", "grey": "gris"}
NOUNS = {"cat": "chat", "dog": "chien", "book": "livre", "pen": "stylo", "bike": "vélo", "truck": "camion", "ball": "ballon", "boat": "bateau"}


def toy_pairs() -> list[tuple[str, str]]:
    pairs = []
    for en_adj, fr_adj in COLOURS.items():
        for en_noun, fr_noun in NOUNS.items():
            pairs.append((f"the {en_adj} {en_noun}", f"le {fr_noun} {fr_adj}"))
            pairs.append((f"I see the {en_adj} {en_noun}.", f"je vois le {fr_noun} {fr_adj}."))
    return pairs


@pytest.fixture(scope="session")
def toy_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "toy.tsv"
    path.write_text("".join(f"{en}\t{fr}\n" for en, fr in toy_pairs()), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def toy_tokenizers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm")
    pairs = toy_pairs()
    return (train_tokenizer((en for en, _ in pairs), folder / "source", 40),
            train_tokenizer((fr for _, fr in pairs), folder / "target", 40))


def tiny_config(attention: str, vocab: int = 40) -> ModelConfig | TransformerConfig:
    if attention == "transformer":
        return TransformerConfig(architecture="transformer", src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=12,
                                 heads=3, enc_layers=1, dec_layers=2, ff_size=10, dropout=0.0)
    dec = 6 if attention == "luong-dot" else 7  # sᵀh needs H = D
    return ModelConfig(attention=attention, src_vocab_size=vocab, tgt_vocab_size=vocab, emb_size=5,
                       enc_hidden_size=3, dec_hidden_size=dec, attn_hidden_size=4, attn_rank=2, dropout=0.0)


def tiny_model(attention: str, seed: int = 0):
    torch.manual_seed(seed)
    model = build_model(tiny_config(attention)).eval()
    if KINDS[attention].counts:  # w_c starts at zero (a warm start's identity): in tests the coverage must count
        torch.nn.init.normal_(model.decoder.attention.w_c.weight)
    return model


@pytest.fixture(params=MODEL_KINDS)
def attention(request) -> str:
    return request.param


@pytest.fixture
def toy_checkpoint(tmp_path, toy_tokenizers, attention) -> Path:
    """A tiny randomly initialised checkpoint folder in Hub layout, weights exact in float16."""
    model = tiny_model(attention)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    folder = tmp_path / f"tiny-{attention}"
    save_checkpoint(folder, model, *toy_tokenizers)
    return folder


@pytest.fixture
def offline_hub(monkeypatch, tmp_path) -> Path:
    """A Hub cache with outgoing traffic disabled, as in a classroom whose network dropped: empty until
    a test puts a snapshot in it (in_hub_cache)."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    return tmp_path / "hub-cache"


def in_hub_cache(cache: Path, repo_id: str, folder: Path, link: bool = False) -> Path:
    """`folder` as the snapshot of `repo_id`'s main in a Hub-layout cache (models--org--name/snapshots/<commit>,
    refs/main), copied or, like a Hub cache's own files, linked; the snapshot's path."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.parent.mkdir(parents=True)
    if link:
        snapshot.symlink_to(folder)
    else:
        shutil.copytree(folder, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snapshot


@pytest.fixture(scope="session")
def models(tmp_path_factory, toy_tokenizers) -> list:
    """The catalogue the page sections are tested over: a tiny checkpoint of every attention type
    ("tiny-<type>"), and one more Luong (general) dropped into the folder ("another")."""
    folder = tmp_path_factory.mktemp("checkpoints")
    for attention in MODEL_KINDS:
        save_checkpoint(folder / f"tiny-{attention}", tiny_model(attention), *toy_tokenizers)
    save_checkpoint(folder / "another", tiny_model("luong-general", seed=7), *toy_tokenizers)  # dropped in: no code change
    return load_models(folder, device=DEVICE)[0]


@pytest.fixture(scope="session")
def section(models, tmp_path_factory) -> TranslateSection:
    """The translate section over those models, opening on Bahdanau | Luong (general), its downloads in a folder of its own."""
    return TranslateSection(ModelsOnPage(models, ("tiny-bahdanau", "tiny-luong-general")),
                            TraceFiles(tmp_path_factory.mktemp("traces")))


@pytest.fixture(scope="session")
def shipped():
    """The page built from the shipped checkpoints as `python app.py` builds it, for the tests that mean to
    check those models on the page (the others build theirs from tiny checkpoints)."""
    import app
    return app.build_demo(*app.start())


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """`python app.py` on a free loopback port, as a user starts it."""
    server = Server(ROOT / "app.py", log=tmp_path_factory.mktemp("app") / "app.log")
    yield server.url
    server.stop()


ROOM_SENTENCE = "The red car is in front of the house."  # what the room tests' teacher opens a room on


@pytest.fixture(scope="module")
def teacher(app_url):
    """A teacher's client of the running app, calling its endpoints as the page does (gradio_client)."""
    from gradio_client import Client
    return Client(app_url, verbose=False)


@pytest.fixture
def room(teacher):
    """A room opened by the teacher's client on the page's opening model: (code, key)."""
    import app
    return teacher.predict(ROOM_SENTENCE, app.OPENING_PICKS[0], api_name="/class_open")


@pytest.fixture
def anyio_backend():
    """Async tests (pytest.mark.anyio) run on asyncio, the loop the app serves on, a new one for each test."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis_url():
    """A redis-server of the tests' own on a free loopback port. Skipped where none is installed, unless
    ATTN_DEMO_REQUIRE_REDIS=1 (CI) makes that a failure."""
    if not Path(REDIS_SERVER).exists():
        if os.environ.get("ATTN_DEMO_REQUIRE_REDIS"):
            pytest.fail(f"redis-server not found at {REDIS_SERVER}")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium driven by Playwright, one for a module's browser tests: not for the worker's whole run, as
    Playwright's sync API keeps an event loop running in the thread while it is open, where a later module's
    asyncio.run would fail. Skipped where it is not installed, unless ATTN_DEMO_REQUIRE_BROWSER=1 (CI) makes that a
    failure."""
    path = shutil.which("chromium") or CHROMIUM
    if not Path(path).exists():
        if os.environ.get("ATTN_DEMO_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {path}")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def profiles(chromium) -> dict:
    """The module's browser contexts by profile and options (Browser), kept for all its browser tests."""
    return {}


@pytest.fixture
def browser(chromium, profiles):
    """The module's Chromium as one test uses it (Browser); what the test opened is closed after it."""
    used = Browser(chromium, profiles)
    yield used
    used.close()


class Browser:
    """Pages of a test in the module's Chromium, as a returning visitor's: each in a browser context kept for the
    module's tests (its caches warm: the page's scripts neither fetched nor compiled again, which costs a new
    profile 12–15 s of CPU on two cores), one per profile and options, the viewport set on each page. Two phones
    that must be two voters (the classroom's voter id is kept in localStorage) are two profiles."""

    def __init__(self, chromium, contexts: dict):
        self.chromium, self.contexts, self.opened = chromium, contexts, []  # contexts: (profile, options) → context

    def new_page(self, viewport: dict | None = None, profile: str = "visitor", **options):
        key = (profile, tuple(sorted(options.items())))
        if key not in self.contexts:
            self.contexts[key] = self.chromium.new_context(**options)
        page = self.contexts[key].new_page()
        if viewport:
            page.set_viewport_size(viewport)
        self.opened.append(page)
        return page

    def new_context(self, **options):
        """A context of the test's own: a profile nobody used (nothing cached, nothing stored)."""
        context = self.chromium.new_context(**options)
        self.opened.append(context)
        return context

    def close(self):
        for opened in reversed(self.opened):
            opened.close()


def plotly_figure(figure):
    """A figure of attn_demo.views.figures (a plain dict), or a plot's value as the page sends it (PlotData), as
    plotly.py reads it: every property validated against Plotly's schema, so a misspelt one fails, and read
    as attributes (fig.data[0].z)."""
    import plotly.graph_objects as go
    from gradio.components.plot import PlotData

    return go.Figure(untyped(json.loads(figure.plot)) if isinstance(figure, PlotData) else figure)


def untyped(value):
    """value with every plotly.js typed array {dtype, bdata, shape} decoded into a numpy array."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return array.reshape([int(n) for n in value["shape"].split(",")]) if value.get("shape") else array
    if isinstance(value, dict):
        return {key: untyped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untyped(item) for item in value]
    return value


def assert_same_figure(actual, expected, path="figure"):
    """Two figure dicts hold the same properties: strings equal, numbers equal to float32 precision."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), f"{path}: {sorted(actual)} ≠ {sorted(expected)}"
        for key in expected:
            assert_same_figure(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, np.ndarray) or (isinstance(expected, (list, tuple)) and expected
                                               and all(isinstance(x, (int, float)) for x in expected)):
        np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                                   rtol=1e-6, atol=1e-7, err_msg=path)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_figure(a, e, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-6, abs=1e-7), path
    else:
        assert actual == expected, path
