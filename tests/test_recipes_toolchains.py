"""Recipes that name a toolchain beside Python: a Go repository evaluated with `go test -v`, and
the one-line error when a toolchain is missing on the host."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from env_helpers import skip_unavailable
from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_instance
from swe_aci.evaluate.options import GradingOptions
from swe_aci.recipes import toolchains
from swe_aci.recipes.cache import recipe_hash
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.interpreter import find_interpreter
from swe_aci.recipes.toolchains import TOOLCHAINS, Toolchain, debian_packages
from swe_aci.recipes.workspace import task_workspace
from swe_aci.tasks import Task
from swe_aci.tasks.models import ToolchainName

CALC = "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Mul(a, b int) int { return a * b }\n"
MUL_TEST = (
    'package calc\n\nimport "testing"\n\n'
    "func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(Mul(2, 3))\n\t}\n}\n"
)
GOLD = (
    "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -1,5 +1,5 @@\n"
    " package calc\n \n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\n"
    " \n func Mul(a, b int) int { return a * b }\n"
)
TEST_PATCH = (
    "diff --git a/add_test.go b/add_test.go\nnew file mode 100644\n--- /dev/null\n"
    '+++ b/add_test.go\n@@ -0,0 +1,9 @@\n+package calc\n+\n+import "testing"\n+\n'
    "+func TestAdd(t *testing.T) {\n+\tif Add(1, 2) != 3 {\n+\t\tt.Fatal(Add(1, 2))\n+\t}\n+}\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("go-calc")
    (root / "go.mod").write_text("module example.com/calc\n\ngo 1.19\n")
    (root / "calc.go").write_text(CALC)
    (root / "mul_test.go").write_text(MUL_TEST)
    return root


def go_task(project: Path, **recipe: Any) -> Task:
    return Task.model_validate(
        {
            "instance_id": "calc-go-1",
            "repo": "example/calc-go",
            "problem_statement": "Add subtracts",
            "patch": GOLD,
            "test_patch": TEST_PATCH,
            "FAIL_TO_PASS": ["TestAdd"],
            "PASS_TO_PASS": ["TestMul"],
            "environment": {
                "source": {"path": str(project)},
                "toolchains": ["go"],
                "test_cmd": 'GOCACHE="$(mktemp -d)" go test -v ./...',
                "log_parser": "go_test",
                **recipe,
            },
        }
    )


def test_the_toolchain_names_are_the_recipes_toolchains() -> None:
    assert set(get_args(ToolchainName)) == set(TOOLCHAINS)
    assert debian_packages(["go", "c", "go"]) == ["golang-go", "gcc", "g++", "make", "cmake"]


def test_an_unknown_toolchain_is_refused(project: Path) -> None:
    with pytest.raises(ValidationError, match="toolchains"):
        go_task(project, toolchains=["cobol"])


def test_naming_a_toolchain_changes_the_hash(project: Path) -> None:
    interpreter = find_interpreter(None)
    with_go = recipe_hash(go_task(project), interpreter)
    assert recipe_hash(go_task(project, toolchains=[]), interpreter) != with_go
    assert recipe_hash(go_task(project, toolchains=["go", "node"]), interpreter) != with_go


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_a_missing_toolchain_is_one_line(
    backend: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skip_unavailable(backend)
    monkeypatch.setitem(TOOLCHAINS, "go", Toolchain(("golang-go",), ("swe-aci-no-such-go",)))
    with pytest.raises(RecipeError) as raised:
        task_workspace(go_task(project), EnvConfig(backend=backend), cache_dir=tmp_path)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "calc-go-1: the recipe needs the go toolchain: `swe-aci-no-such-go` is not in "
        f"{toolchains.SYSTEM_PATH} on this host (Debian: apt-get install golang-go; or use "
        "--env docker)"
    )
    assert not list(tmp_path.iterdir())  # nothing was built


@pytest.mark.parametrize(
    "backend",
    [
        "local",
        "bwrap",
        pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.timeout(900)]),
    ],
)
def test_a_go_task_gold_resolves_and_empty_does_not(
    backend: str, project: Path, tmp_path: Path
) -> None:
    """On docker, golang-go is installed into the task's image; elsewhere the host's is used."""
    skip_unavailable(backend)
    if backend != "docker" and shutil.which("go", path=toolchains.SYSTEM_PATH) is None:
        pytest.skip("no Go toolchain on this host (apt-get install golang-go)")
    task = go_task(project)
    config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    cache = tmp_path / "cache"
    gold = evaluate_instance(
        task, GOLD, config, tmp_path / "gold", GradingOptions(120, cache_dir=cache)
    )
    assert gold.outcome == "resolved", gold.message
    assert gold.tests_status is not None
    assert gold.tests_status.PASS_TO_PASS.success == ["TestMul"]
    empty = evaluate_instance(
        task, "", config, tmp_path / "empty", GradingOptions(120, cache_dir=cache)
    )
    assert (empty.outcome, empty.base_outcome) == ("empty_patch", "unresolved")
    assert empty.tests_status is not None
    assert empty.tests_status.FAIL_TO_PASS.failure == ["TestAdd"]
