"""datasets/real_bugs_multilang.jsonl: upstream fixes in JavaScript, Go and Rust on their last
release before the fix (an npm tarball or a Debian package shipping the library's source), built
from datasets/real_bugs_multilang.yaml; gold resolves and an empty prediction does not, on bwrap
and docker; a scripted agent fixes a JavaScript and a Go task through the ACI's editor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from batch_helpers import scripted_overrides
from env_helpers import skip_unavailable
from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_instance
from swe_aci.evaluate.options import GradingOptions
from swe_aci.recipes import toolchains
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.packages import fetch_debian, fetch_npm, unpack_debian
from swe_aci.tasks import Task
from swe_aci.tasks.models import Source

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
MULTILANG = DATASETS / "real_bugs_multilang.jsonl"
JS_TASK = "npm__node-semver-7.5.1-diff-prerelease-major"
GO_TASK = "dustin__go-humanize-1.0.0-ftoa-keeps-integer-zeros"
RUST_TASK = "rapidfuzz__strsim-rs-0.10.0-jaro-transpositions"
SEMVER_SHA256 = "7466d0ee934d67f66045210449c0c38176c237aa6ddef92d72ad8536579e19c7"
BACKENDS = ["bwrap", pytest.param("docker", marks=pytest.mark.docker)]


def rows() -> list[dict]:
    return [json.loads(line) for line in MULTILANG.read_text().splitlines() if line.strip()]


def task(instance_id: str) -> Task:
    return Task.model_validate(next(row for row in rows() if row["instance_id"] == instance_id))


def skip_without_toolchain(backend: str, row: Task) -> None:
    """bwrap runs the host's toolchain (docker installs Debian's into the image)."""
    skip_unavailable(backend)
    assert row.environment is not None
    if backend == "docker":
        return
    for name in row.environment.toolchains:
        for program in toolchains.TOOLCHAINS[name].programs:
            if shutil.which(program, path=toolchains.SYSTEM_PATH) is None:
                pytest.skip(f"no {program} on this host's system path")


def test_rows_are_upstream_fixes_in_three_other_languages() -> None:
    specs = yaml.safe_load((DATASETS / "real_bugs_multilang.yaml").read_text())
    built = rows()
    assert [row["instance_id"] for row in built] == [spec["instance_id"] for spec in specs]
    assert len(built) >= 8
    languages = set()
    for row, spec in zip(built, specs, strict=True):
        environment = Task.model_validate(row).environment
        assert environment is not None
        assert environment.python is None
        languages.update(environment.toolchains)
        assert environment.source.kind in {"npm", "debian"}, row["instance_id"]
        assert environment.source.sha256
        assert row["issue_url"].startswith(f"https://github.com/{row['repo']}/issues/")
        assert all(f"github.com/{row['repo']}/commit/" in url for url in row["fix_commits"])
        assert row["FAIL_TO_PASS"], row["instance_id"]
        assert not set(row["FAIL_TO_PASS"]) & set(row["PASS_TO_PASS"])
        for key in ("patch", "test_patch"):  # the committed patch files, unchanged
            assert row[key] == (DATASETS / spec[key]["file"]).read_text()
        patched = {line[6:] for line in row["patch"].splitlines() if line.startswith("+++ b/")}
        tests = {line[6:] for line in row["test_patch"].splitlines() if line.startswith("+++ b/")}
        assert patched and tests and not patched & tests  # the harness restores test files
    assert languages == {"node", "go", "rust"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"npm": "semver@7.5.1"}, "the npm source needs its sha256"),
        ({"debian": "golang-x-dev", "sha256": SEMVER_SHA256}, "debian must be `name=version`"),
        ({"npm": "semver", "sha256": SEMVER_SHA256}, "npm must be `name@version`"),
        (
            {"npm": "semver@7.5.1", "debian": "a=1", "sha256": SEMVER_SHA256},
            "exactly one of pypi_sdist, npm, debian, git, path",
        ),
        ({"git": "https://example.org/x.git", "sha256": SEMVER_SHA256}, "sha256 belongs to"),
    ],
)
def test_a_bad_package_source_is_refused(source: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Source.model_validate(source)


def test_package_sources_are_of_their_kind() -> None:
    npm = Source.model_validate({"npm": "@scope/name@1.2.3", "sha256": SEMVER_SHA256})
    assert (npm.kind, npm.npm) == ("npm", "@scope/name@1.2.3")
    debian = Source.model_validate({"debian": "librust-x-dev=1.0-1", "sha256": SEMVER_SHA256})
    assert debian.kind == "debian"


def build_deb(root: Path, files: dict[str, str], out: Path) -> Path:
    for name, text in {**files, "DEBIAN/control": DEB_CONTROL}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["dpkg-deb", "--build", str(root), str(out)], check=True, capture_output=True)
    return out


DEB_CONTROL = "Package: x\nVersion: 1\nArchitecture: all\nMaintainer: x <x@x>\nDescription: x\n"


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="not a Debian host")
def test_a_debian_package_gives_its_library_source_directory(tmp_path: Path) -> None:
    go = {"usr/share/gocode/src/example.com/x/y/a.go": "package y\n", "usr/share/doc/x/c": ""}
    deb = build_deb(tmp_path / "go", go, tmp_path / "go.deb")
    unpack_debian(deb, tmp_path / "tree")
    assert [path.name for path in (tmp_path / "tree").iterdir()] == ["a.go"]
    crate = {
        "usr/share/cargo/registry/z-1.0.0/Cargo.toml": "",
        "usr/share/cargo/registry/z-1.0.0/src/lib.rs": "",
    }
    unpack_debian(build_deb(tmp_path / "rs", crate, tmp_path / "rs.deb"), tmp_path / "crate")
    assert sorted(path.name for path in (tmp_path / "crate").iterdir()) == ["Cargo.toml", "src"]
    docs = build_deb(tmp_path / "doc", {"usr/share/doc/x/README": ""}, tmp_path / "doc.deb")
    with pytest.raises(RecipeError) as raised:
        unpack_debian(docs, tmp_path / "none")
    assert str(raised.value) == (
        "doc.deb ships no library source (nothing under /usr/share/gocode/src or "
        "/usr/share/cargo/registry)"
    )
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_a_package_whose_sha256_differs_is_refused_and_not_kept(tmp_path: Path) -> None:
    with pytest.raises(
        RecipeError, match=r"sha256 mismatch for semver@7\.5\.1: the registry served"
    ):
        fetch_npm("semver@7.5.1", "0" * 64, tmp_path)
    assert fetch_npm("semver@7.5.1", SEMVER_SHA256, tmp_path).name == f"{SEMVER_SHA256}.tgz"
    assert [path.name for path in tmp_path.iterdir()] == [f"{SEMVER_SHA256}.tgz"]


@pytest.mark.slow
def test_a_missing_package_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"the npm registry has no semver@0\.0\.0-nope"):
        fetch_npm("semver@0.0.0-nope", SEMVER_SHA256, tmp_path)
    if shutil.which("apt-get") is None:
        pytest.skip("not a Debian host")
    with pytest.raises(RecipeError) as raised:
        fetch_debian("librust-strsim-dev=0.0.0-nope", SEMVER_SHA256, tmp_path)
    assert str(raised.value).startswith("apt-get download librust-strsim-dev=0.0.0-nope failed:")
    assert "\n" not in str(raised.value)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("instance_id", [JS_TASK, GO_TASK, RUST_TASK])
def test_gold_resolves_and_empty_does_not(instance_id: str, backend: str, tmp_path: Path) -> None:
    """On the recipe cache (its sources fetched once)."""
    row = task(instance_id)
    skip_without_toolchain(backend, row)
    config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    gold = evaluate_instance(row, row.patch or "", config, tmp_path / "gold", GradingOptions(600))
    assert gold.outcome == "resolved", gold.message
    empty = evaluate_instance(row, "", config, tmp_path / "empty", GradingOptions(600))
    assert (empty.outcome, empty.base_outcome) == ("empty_patch", "unresolved")
    assert empty.tests_status is not None
    assert empty.tests_status.FAIL_TO_PASS.failure


def act(command: str) -> str:
    return f"DISCUSSION\nNext step.\n```\n{command}\n```\n"


# The fixes a scripted agent makes with the ACI's viewer and editor (not the gold patches' text:
# one edit each, through `open` and `edit`).
EPISODES = {
    JS_TASK: [
        act("open functions/diff.js 15"),
        act(
            "edit 15:15\n"
            "  const highHasPre = !!highVersion.prerelease.length\n"
            "  const lowHasPre = !!lowVersion.prerelease.length\n"
            "  if (lowHasPre && !highHasPre) {\n"
            "    if (!lowVersion.patch && !lowVersion.minor) {\n"
            "      return 'major'\n"
            "    }\n"
            "    if (highVersion.patch) {\n"
            "      return 'patch'\n"
            "    }\n"
            "    if (highVersion.minor) {\n"
            "      return 'minor'\n"
            "    }\n"
            "    return 'major'\n"
            "  }\n"
            "end_of_edit"
        ),
        act("submit"),
    ],
    GO_TASK: [
        act("open ftoa.go 8"),
        act(
            "edit 8:8\n"
            "func stripTrailingZeros(s string) string {\n"
            "\tif !strings.ContainsRune(s, '.') {\n"
            "\t\treturn s\n"
            "\t}\n"
            "end_of_edit"
        ),
        act("submit"),
    ],
}


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("instance_id", list(EPISODES))
def test_a_scripted_agent_fixes_the_task(instance_id: str, backend: str, tmp_path: Path) -> None:
    row = task(instance_id)
    skip_without_toolchain(backend, row)
    settings = [
        arg for override in scripted_overrides(EPISODES[instance_id]) for arg in ("--set", override)
    ]
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    command = [sys.executable, "-m", "swe_aci", "run", "--instance", f"{MULTILANG}:{instance_id}"]
    result = subprocess.run(
        [*command, "--env", backend, "--output-dir", "out", *settings],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr
    directory = tmp_path / "out" / instance_id
    trajectory = json.loads((directory / f"{instance_id}.traj").read_text())
    assert trajectory["info"]["exit_status"] == "submitted"
    assert [step["action"].split()[0] for step in trajectory["trajectory"]] == [
        "open",
        "edit",
        "submit",
    ]
    patch = json.loads((directory / f"{instance_id}.pred").read_text())["model_patch"]
    assert patch.strip()
    config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    report = evaluate_instance(row, patch, config, tmp_path / "eval", GradingOptions(600))
    assert report.outcome == "resolved", report.message
