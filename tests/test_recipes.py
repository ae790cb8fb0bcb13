"""Environments from recipes on the host backends (bwrap, local): virtualenv, base tree, cache."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import http.server
import io
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from batch_helpers import GOLD_PATCH, SECRET, TEST_PATCH, make_project, recipe_row, write_rows
from env_helpers import skip_unavailable
from swe_aci.env import EnvConfig, make_environment
from swe_aci.recipes import RecipeError, task_workspace
from swe_aci.recipes.cache import recipe_hash
from swe_aci.recipes.interpreter import running_interpreter
from swe_aci.recipes.sdist import unpack_sdist
from swe_aci.recipes.workspace import official_image
from swe_aci.tasks import Task, load_tasks

INSTALL = ["pip install --no-build-isolation --no-deps -e ."]


def one_task(tmp_path: Path, source: dict[str, str], **recipe: object) -> Task:
    path = write_rows(tmp_path / "tasks.jsonl", [recipe_row("demo__calc-1", source, **recipe)])
    task_set = load_tasks(path)
    assert task_set.problems == []
    return task_set.tasks[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Task, Path]:
    """A recipe with a real (editable) install, built once for the module's tests."""
    root = tmp_path_factory.mktemp("installed")
    project = make_project(root / "calc", git=False)
    return one_task(root, {"path": str(project)}, python="3.9", install=INSTALL), root / "cache"


@pytest.mark.parametrize("backend", ["bwrap", "local"])
def test_recipe_environment_has_its_python_and_imports_the_working_copy(
    installed: tuple[Task, Path], backend: str
) -> None:
    skip_unavailable(backend)
    task, cache = installed
    project = Path(task.environment.source.path)  # type: ignore[union-attr, arg-type]
    prepared = task_workspace(task, EnvConfig(backend=backend), cache_dir=cache)
    with make_environment(prepared) as env:
        output = env.run("python --version; python -c 'import calc; print(calc.add(2, 3))'").output
        assert "Python 3.9" in output and output.strip().endswith("-1")
        env.run("sed -i 's/a - b/a + b/' calc/__init__.py")
        assert env.run("python -c 'import calc; print(calc.add(2, 3))'").output.strip() == "5"
        assert (
            env.run("(cd /tmp && python -c 'import calc; print(calc.add(2, 3))')").output.strip()
            == "5"
        )
        # The install's products (calc.egg-info) are ignored: only the edit is in the diff.
        assert env.run("git status --porcelain").output.split() == ["M", "calc/__init__.py"]
        assert "egg-info" not in env.submission().patch
    assert (project / "calc" / "__init__.py").read_text().count("a - b") == 1  # never modified


def test_cached_recipe_is_reused_without_rebuilding(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)})
    cache = tmp_path / "cache"
    first = task_workspace(task, EnvConfig(backend="local"), cache_dir=cache)
    (log,) = cache.glob("*/build.log")
    stamp = log.stat().st_mtime_ns
    second = task_workspace(task, EnvConfig(backend="local"), cache_dir=cache)
    assert (second.source, second.commit) == (first.source, first.commit)
    assert log.stat().st_mtime_ns == stamp
    changed = task.model_copy(
        update={"environment": task.environment.model_copy(update={"prepare": ["true"]})}
    )  # type: ignore[union-attr]
    third = task_workspace(changed, EnvConfig(backend="local"), cache_dir=cache)
    assert third.source != first.source


def test_same_recipe_gives_the_same_base_commit(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)})
    first = task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "c1")
    second = task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "c2")
    assert first.commit == second.commit


def test_revert_and_prepare_make_the_pseudo_base(tmp_path: Path) -> None:
    """A release that already holds the fix and its test: revert both, then prepare."""
    project = make_project(tmp_path / "calc")
    subprocess.run(
        ["git", "apply"], input=GOLD_PATCH + TEST_PATCH, text=True, cwd=project, check=True
    )
    task = one_task(
        tmp_path,
        {"path": str(project)},
        revert=["test_patch", "patch"],
        prepare=["echo 'changelog: nothing' > CHANGES"],
        exclude=["*.log"],
    )
    prepared = task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")
    tree = Path(prepared.source)  # type: ignore[arg-type]
    assert "a - b" in (tree / "calc" / "__init__.py").read_text()
    assert not (tree / "tests" / "test_add.py").exists()
    assert (tree / "CHANGES").read_text() == "changelog: nothing\n"
    assert "*.log" in (tree / ".git" / "info" / "exclude").read_text()
    log = subprocess.run(
        ["git", "log", "--format=%an %s"], cwd=tree, capture_output=True, text=True
    )
    assert log.stdout.splitlines() == ["swe-aci base"]


def test_revert_that_does_not_apply_is_a_recipe_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)}, revert=["patch"])
    with pytest.raises(RecipeError, match="revert of patch failed") as error:
        task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")
    assert "build log:" in str(error.value) and "\n" not in str(error.value)


def test_failing_install_is_one_line_with_its_log_and_is_retried_next_time(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)}, install=["echo building; exit 3"])
    with pytest.raises(RecipeError) as error:
        task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")
    message = str(error.value)
    assert "install command failed" in message and "\n" not in message
    log_path = Path(message.rsplit("build log: ", 1)[1].rstrip(")"))
    assert "building" in log_path.read_text()
    assert not list((tmp_path / "cache").glob("*/ready.json"))  # not cached: rebuilt next time


def test_unavailable_python_is_one_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)}, python="2.5")
    with pytest.raises(RecipeError, match=r"python 2\.5 is not available"):
        task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")


def test_nothing_the_agent_can_see_holds_the_patch_hints_or_recipe(tmp_path: Path) -> None:
    skip_unavailable("bwrap")
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)}, prepare=["echo prepared-marker > /dev/null"])
    prepared = task_workspace(task, EnvConfig(backend="bwrap"), cache_dir=tmp_path / "cache")
    exposed = [prepared.config.env_vars["VIRTUAL_ENV"], prepared.source]
    for path in exposed:
        found = subprocess.run(
            ["grep", "-rl", "-e", SECRET, "-e", "prepared-marker", "-e", "test_add", str(path)],
            capture_output=True,
            text=True,
        )
        assert found.stdout == "", found.stdout
    with make_environment(prepared) as env:
        assert env.run(f"git log --all -p | grep -c {SECRET}").output.strip() == "0"
        assert "prepared-marker" not in env.run("env").output


def test_image_rows_need_docker_and_official_rows_name_the_swe_bench_image(tmp_path: Path) -> None:
    row = {"instance_id": "django__django-11099", "repo": "django/django", "problem_statement": "p"}
    task = Task.model_validate(row)
    assert official_image(task.instance_id) == (
        "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    )
    with pytest.raises(RecipeError, match=r"official SWE-bench image.*--env docker"):
        task_workspace(task, EnvConfig(backend="bwrap"))
    with pytest.raises(RecipeError, match="image my/img"):
        task_workspace(Task.model_validate({**row, "image": "my/img"}), EnvConfig(backend="local"))


# -- pypi_sdist: fetched through the configured index, checked, unpacked safely -------------------


def sdist_bytes(members: dict[str, bytes], *, evil: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        if evil is not None:
            info = tarfile.TarInfo(evil)
            info.size = 4
            tar.addfile(info, io.BytesIO(b"evil"))
    return buffer.getvalue()


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A PEP 503 simple index served over HTTP from a directory; pip's index points at it."""
    root = tmp_path / "index"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple")
    yield root
    server.shutdown()


def publish(index: Path, filename: str, data: bytes) -> str:
    project = index / "simple" / "calc-lib"
    project.mkdir(parents=True, exist_ok=True)
    (index / "files").mkdir(exist_ok=True)
    (index / "files" / filename).write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    (project / "index.html").write_text(
        f'<html><body><a href="../../files/{filename}#sha256={digest}">{filename}</a></body></html>'
    )
    return digest


def test_pypi_sdist_is_fetched_through_the_index_and_checked(tmp_path: Path, index: Path) -> None:
    data = sdist_bytes({"calc_lib-1.0/calc/__init__.py": b"def add(a, b):\n    return a - b\n"})
    digest = publish(index, "calc_lib-1.0.tar.gz", data)
    task = one_task(tmp_path, {"pypi_sdist": "Calc.Lib==1.0", "sha256": digest})
    prepared = task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")
    assert "a - b" in (Path(prepared.source) / "calc" / "__init__.py").read_text()  # type: ignore[arg-type]

    wrong = one_task(tmp_path, {"pypi_sdist": "calc-lib==1.0", "sha256": "0" * 64})
    with pytest.raises(RecipeError, match="sha256 mismatch"):
        task_workspace(wrong, EnvConfig(backend="local"), cache_dir=tmp_path / "cache2")
    missing = one_task(tmp_path, {"pypi_sdist": "calc-lib==2.0", "sha256": digest})
    with pytest.raises(RecipeError, match=r"no sdist calc-lib-2\.0"):
        task_workspace(missing, EnvConfig(backend="local"), cache_dir=tmp_path / "cache3")


@pytest.mark.parametrize("evil", ["../escaped.txt", "/tmp/absolute-escape.txt"])
def test_sdist_members_leaving_the_tree_are_refused(tmp_path: Path, evil: str) -> None:
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(sdist_bytes({"pkg-1.0/setup.py": b""}, evil=evil))
    dest = tmp_path / "work" / "tree"
    dest.parent.mkdir()
    with contextlib.suppress(RecipeError):  # refused, or stripped to a path inside the tree
        unpack_sdist(archive, dest)
    assert not (tmp_path / "work" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/absolute-escape.txt").exists()


def test_sdist_symlink_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("pkg-1.0/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tar.addfile(link)
    archive = tmp_path / "link.tar.gz"
    archive.write_bytes(buffer.getvalue())
    with pytest.raises(RecipeError, match="cannot unpack"):
        unpack_sdist(archive, tmp_path / "tree")


def test_the_recipe_hash_follows_what_the_environment_depends_on(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc")
    task = one_task(tmp_path, {"git": str(project)})
    interpreter = running_interpreter()
    digest = recipe_hash(task, interpreter)
    assert recipe_hash(task, interpreter) == digest
    same = {"problem_statement": "another issue", "FAIL_TO_PASS": ["t"]}
    assert recipe_hash(task.model_copy(update=same), interpreter) == digest
    assert task.environment is not None
    changed = [
        task.model_copy(update={"base_commit": "0" * 40}),
        task.model_copy(update={"repo": "other/calc"}),
        task.model_copy(
            update={"environment": task.environment.model_copy(update={"install": ["true"]})}
        ),
    ]
    assert all(recipe_hash(other, interpreter) != digest for other in changed)
    other_python = dataclasses.replace(interpreter, version="3.0.0")
    assert recipe_hash(task, other_python) != digest


def test_editing_a_path_source_changes_the_recipe_hash(tmp_path: Path) -> None:
    project = make_project(tmp_path / "calc", git=False)
    task = one_task(tmp_path, {"path": str(project)})
    interpreter = running_interpreter()
    before = recipe_hash(task, interpreter)
    (project / "calc" / "added.py").write_text("x = 1\n")
    assert recipe_hash(task, interpreter) != before
