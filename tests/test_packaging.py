"""What leaves the repository: the Hub's limits on the files a push sends, the checkpoints as model repos,
the README's deploy commands (checked against the installed `hf` CLI, offline), and `pip install .` (then its data sets
fetched from a local server and read from outside the checkout)."""
import json
import os
import re
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import click
import pytest
from huggingface_hub import ModelCard, SpaceCard
from huggingface_hub.utils import filter_repo_objects
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from safetensors import safe_open

from attn_demo.checkpoints.card import CARD, FACTS
from attn_demo.checkpoints.folder import CHECKPOINT_FILES, TRAINING_DATA
from attn_demo.measures.marks import MARKS
from attn_demo.measures.timeline import TIMELINE
from data_server import DataServer, published_copies

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
HUB_FILE_LIMIT = 10 * 1024 * 1024  # the largest file the Hub takes outside LFS
LFS_POINTER = b"version https://git-lfs"
UPLOADED = {*CHECKPOINT_FILES, CARD, FACTS}  # what a model repo must hold for load_translator and the Hub
OPTIONAL = {TRAINING_DATA, TIMELINE, MARKS}


def checkpoint_folders() -> list[Path]:
    return sorted(path for path in CHECKPOINTS.iterdir() if (path / "config.json").is_file())


def git(*args: str, stdin: bytes | None = None) -> bytes:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    done = subprocess.run(["git", "-C", str(ROOT), *args], input=stdin, capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"not a git checkout: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def tracked_files() -> list[str]:
    return [name for name in git("ls-files", "-z").decode().split("\0") if name]


def lfs_files(names: list[str]) -> set[str]:
    """The names whose attributes hand them to git-lfs, as a push from a machine with git-lfs would."""
    out = git("check-attr", "-z", "--stdin", "filter", stdin="\0".join(names).encode()).decode().split("\0")
    return {path for path, _, value in zip(out[0::3], out[1::3], out[2::3]) if value == "lfs"}


def test_every_tracked_file_fits_the_hub_or_goes_to_lfs():
    names = tracked_files()
    lfs = lfs_files(names)
    too_big = [f"{name} ({(ROOT / name).stat().st_size / 2**20:.1f} MiB)" for name in names
               if (ROOT / name).is_file() and (ROOT / name).stat().st_size > HUB_FILE_LIMIT and name not in lfs]
    assert not too_big, f"over 10 MiB and matched by no filter=lfs pattern in .gitattributes: {too_big}"
    assert any(name.endswith(".safetensors") for name in lfs)  # the patterns are read at all


def test_every_binary_file_goes_to_lfs():
    """The Hub refuses binary files pushed outside LFS, whatever their size."""
    entries = [entry for entry in git("ls-files", "-z", "--eol").decode().split("\0") if entry]
    binary = [entry.split("\t", 1)[1] for entry in entries if entry.startswith("i/-text")]
    assert binary, "git sees no binary file: the weights at least are one"
    assert sorted(set(binary) - lfs_files(binary)) == []


@pytest.mark.parametrize("folder", checkpoint_folders(), ids=lambda path: path.name)
def test_weights_are_real_files_not_lfs_pointers(folder):
    weights = folder / "model.safetensors"
    with weights.open("rb") as file:
        assert not file.read(len(LFS_POINTER)).startswith(LFS_POINTER), \
            f"{weights} is an LFS pointer: the repository keeps the real weights"
    with safe_open(weights, framework="numpy") as tensors:
        assert len(list(tensors.keys())) > 0


@pytest.mark.parametrize("folder", checkpoint_folders(), ids=lambda path: path.name)
def test_model_card_metadata(folder):
    data = ModelCard.load(folder / CARD).data
    assert data.license
    assert {"en", "fr"} <= set(data.language)
    assert data.pipeline_tag == "translation"


def deploy_commands() -> list[list[str]]:
    """The `hf` commands in the code blocks of the README's Deploy section, as argument lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^### Deploy\n(.*?)(?=^##)", text, re.S | re.M)
    assert section, "README.md has no '### Deploy' section"
    blocks = re.findall(r"^```(?:bash|sh)\n(.*?)^```", section.group(1), re.S | re.M)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.startswith("hf ")]


def parse_hf(args: list[str]) -> tuple[str, dict]:
    """`hf ARGS` parsed by the installed CLI without running it: (command path, parameters). An unknown
    command, option or choice raises click's UsageError, as `hf` would."""
    from huggingface_hub.cli.hf import app

    if not isinstance(app, click.Command):
        import typer
        app = typer.main.get_command(app)
    command, context, rest, path = app, click.Context(app, info_name="hf"), list(args[1:]), []
    while isinstance(command, click.Group):
        name, command, rest = command.resolve_command(context, rest)
        path.append(name)
        context = (click.Context(command, info_name=name, parent=context) if isinstance(command, click.Group)
                   else command.make_context(name, rest, parent=context))
    params = {key: getattr(value, "value", value) for key, value in context.params.items()}
    return " ".join(path), params


def test_deploy_commands_parse_with_the_installed_hf():
    commands = deploy_commands()
    assert commands, "the Deploy section has no `hf` command in a ```bash block"
    for args in commands:
        try:
            parse_hf(args)
        except click.UsageError as error:
            pytest.fail(f"`{shlex.join(args)}`: {error.format_message()}")


def test_deploy_uploads_every_checkpoint_as_a_model_repo_of_exactly_its_files():
    uploads = {}
    for args in deploy_commands():
        command, params = parse_hf(args)
        if command == "upload" and params["repo_type"] == "model":
            uploads[Path(params["local_path"])] = params
    assert sorted(uploads) == [folder.relative_to(ROOT) for folder in checkpoint_folders()]
    for local, params in uploads.items():
        assert params["repo_id"].split("/")[-1] == local.name  # the repo is called as the folder
        assert params["path_in_repo"] in (None, "."), "config.json must land at the root of the repo"
        assert not params["include"] and not params["exclude"]  # so the folder is what is sent
        sent = {path.name for path in (ROOT / local).iterdir()}
        assert all((ROOT / local / name).is_file() for name in sent), f"{local} holds a folder: {sorted(sent)}"
        assert UPLOADED <= sent <= UPLOADED | OPTIONAL, f"{local}: {sorted(sent)}"


def space_uploads() -> list[dict]:
    return [params for command, params in map(parse_hf, deploy_commands())
            if command == "upload" and params["repo_type"] == "space"]


def test_deploy_creates_the_gradio_space_and_uploads_the_app_then_its_data():
    parsed = [parse_hf(args) for args in deploy_commands()]
    created = [params for command, params in parsed if command == "repos create" and params["repo_type"] == "space"]
    assert len(created) == 1 and created[0]["sdk"] == "gradio"
    uploaded = space_uploads()
    assert len(uploaded) == 2 and {params["repo_id"] for params in uploaded} == {created[0]["repo_id"]}
    assert uploaded[0]["local_path"] in (None, ".") and uploaded[0]["path_in_repo"] in (None, ".")


def test_the_space_upload_sends_the_app_and_leaves_the_benchmarks_and_the_data_out():
    space = space_uploads()[0]
    sent = set(filter_repo_objects(tracked_files() + ["data/hansards-wpt03/test.e"],
                                   allow_patterns=space["include"] or None, ignore_patterns=space["exclude"] or None))
    assert {"app.py", "requirements.txt", "attn_demo/translator.py", "checkpoints/luong-en-fr/model.safetensors"} <= sent
    assert not [name for name in sent if name.startswith(("benchmarks/", "data/"))]


def test_the_space_gets_the_alignment_checks_data_where_the_app_reads_it():
    """A Space has no data home: the deploy fetches the Hansards into data/ and uploads them to the place app.APP_DATA
    names in the Space, which the alignment check reads when the data home does not have them."""
    import app
    from attn_demo.data.datasets import HANSARDS
    data = app.APP_DATA.relative_to(ROOT)
    fetched = re.search(r"^ATTN_DEMO_DATA=(\S+) python -m attn_demo.data.datasets fetch (.+?)\s", readme_text(), re.M)
    assert fetched and Path(fetched[1]) == data and HANSARDS.name in fetched[2].split()
    upload = space_uploads()[1]
    assert Path(upload["local_path"]) == Path(upload["path_in_repo"]) == data / HANSARDS.name


def readme_text() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_space_front_matter():
    """The Space is configured by the YAML at the top of README.md, and installs Gradio at sdk_version."""
    space = SpaceCard.load(ROOT / "README.md").data
    assert space.sdk == "gradio"
    assert (ROOT / space.app_file).is_file() and space.app_file == "app.py"
    pins = dict(line.split("==", 1) for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line)
    assert space.sdk_version == pins["gradio"], "the Space would run another Gradio than requirements.txt pins"
    requires_python = SpecifierSet(pyproject()["project"]["requires-python"])
    assert requires_python.contains(f"{space.python_version}.0")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_package_requires_what_requirements_in_says():
    def by_name(lines):
        requirements = [Requirement(line) for line in lines]
        return {canonicalize_name(r.name): (r.specifier, r.marker) for r in requirements}

    listed = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements.in").read_text().splitlines()]
    assert by_name(pyproject()["project"]["dependencies"]) == by_name(line for line in listed if line)


@pytest.mark.slow
def test_pip_install_gives_a_package_that_translates_from_anywhere(tmp_path):
    """pip install builds the package from a copy of the checkout with what is already installed (no
    download), into a new environment; attn_demo is then imported from there, not from the checkout."""
    source = tmp_path / "source"
    names = [name for name in git("ls-files", "-z", "--cached", "--others", "--exclude-standard").decode().split("\0")
             if name and not name.startswith("checkpoints/") and (ROOT / name).is_file()]
    for name in names:  # a copy: an in-tree build would leave build/ and *.egg-info/ in the checkout
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(environment)], check=True)
    python = environment / "bin" / "python"
    purelib = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    if sys.prefix != sys.base_prefix:  # in a venv, --system-site-packages reaches the base Python's packages, not ours
        (purelib / "tests-packages.pth").write_text(
            "".join(f"import site; site.addsitedir({path!r})\n" for path in site.getsitepackages()))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    build = pyproject()["build-system"]["requires"]
    probe = ("import sys, importlib.metadata as m, pip; from packaging.requirements import Requirement\n"
             "for line in sys.argv[1:]:\n"
             "    r = Requirement(line); assert r.specifier.contains(m.version(r.name)), line\n")
    if subprocess.run([python, "-c", probe, *build], capture_output=True, env=env, cwd=tmp_path).returncode != 0:
        pytest.skip(f"pip and the build requirements {build} are not all installed here, and nothing is downloaded")

    installed = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                                "--no-cache-dir", "--disable-pip-version-check", "--quiet", str(source)],
                               capture_output=True, text=True, env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = ("import json, sys, importlib.metadata as m, attn_demo\n"
              "t = attn_demo.load_translator(sys.argv[1])\n"
              "files = [str(f) for f in m.distribution('attn-demo').files]\n"
              "print(json.dumps({'file': attn_demo.__file__, 'text': t.translate('The cat sleeps.').text, 'files': files}))\n")
    ran = subprocess.run([python, "-c", script, str(CHECKPOINTS / "luong-en-fr")],
                         capture_output=True, text=True, env=env, cwd=elsewhere)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.splitlines()[-1])
    package = Path(result["file"]).resolve().parent
    assert package == (purelib / "attn_demo").resolve(), f"attn_demo imported from {package}"
    assert "chat" in result["text"].lower(), result["text"]

    # every module and every browser file of the checkout's package was installed
    wanted = {name for name in names if name.startswith("attn_demo/") and name.endswith((".py", ".js", ".css"))}
    got = {f"attn_demo/{path.relative_to(package).as_posix()}" for path in package.rglob("*")
           if path.suffix in (".py", ".js", ".css")}
    assert wanted <= got, f"not installed: {sorted(wanted - got)}"
    assert any(Path(name).name == "LICENSE" for name in result["files"])
    assert not [name for name in result["files"] if name.startswith(("benchmarks/", "tests/"))]  # the package alone

    # the data sets: fetched into a data home of its own from a server of the published files, then read by a card's
    # evaluation command and the page's alignment check, from outside the checkout
    home = tmp_path / "data-home"
    env = {**env, "ATTN_DEMO_DATA": str(home)}
    server = DataServer(published_copies(Path(os.environ["ATTN_DEMO_DATA"]), tmp_path / "published"))
    try:
        fetched = subprocess.run([python, "-m", "attn_demo.data.datasets", "fetch", "--mirror", server.url(), "--quiet"],
                                 capture_output=True, text=True, env=env, cwd=elsewhere)
    finally:
        server.stop()
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(path.name for path in home.iterdir() if not path.name.startswith(".")) == \
        ["flores200-devtest", "hansards-wpt03", "tatoeba-fra-eng"]
    command = "python -m attn_demo.evaluation.evaluate checkpoints/luong-en-fr --dev --beam 5"
    assert command in (CHECKPOINTS / "luong-en-fr" / "README.md").read_text(encoding="utf-8")
    evaluated = subprocess.run([python, *command.split()[1:3], str(CHECKPOINTS / "luong-en-fr"), *command.split()[4:], "--json"],
                               capture_output=True, text=True, env={**env, "OMP_NUM_THREADS": "1"}, cwd=elsewhere)
    assert evaluated.returncode == 0, evaluated.stderr
    result, card = json.loads(evaluated.stdout), ModelCard.load(CHECKPOINTS / "luong-en-fr" / CARD).text
    assert f"validation split's {result['n']} pairs" in card and f"**BLEU {result['bleu']:.2f}**" in card  # the card's, remade
    check = ("import sys\nfrom attn_demo.serving.catalogue import load_models\nfrom attn_demo.ui.alignment_check import AlignmentCheckSection\n"
             "models = load_models(sys.argv[1], device='cpu')[0]\nsection = AlignmentCheckSection(models)\n"
             "print(section.show(22, False, models[0].key, models[0].key)[1])\n")
    shutil.copytree(CHECKPOINTS / "luong-en-fr", tmp_path / "one" / "luong-en-fr")  # a catalogue of one model
    checked = subprocess.run([python, "-c", check, str(tmp_path / "one")], capture_output=True, text=True, env=env, cwd=elsewhere)
    assert checked.returncode == 0, checked.stderr
    assert "AER **" in checked.stdout
