"""The one patch applier (`env/patch.py`) and the logged runner (`env/logged.py`), on local and
bwrap (docker under `-m docker`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from env_helpers import BACKENDS, DOCKER_IMAGE, skip_unavailable
from swe_aci.env import EnvConfig, Environment, Workspace, make_environment
from swe_aci.env.logged import run_logged
from swe_aci.env.patch import apply_patch

LINES = "".join(f"line {n}\n" for n in range(1, 31))
FILES: dict[str, str | bytes] = {"f.txt": LINES, "keep.txt": "keep\n"}
# Two hunks: the first applies as written, the second only with fuzz (its context drifted).
TWO_HUNKS = (
    "--- a/f.txt\n+++ b/f.txt\n"
    "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n"
    "@@ -20,5 +20,5 @@\n line 20\n line 21\n-line 22\n+LINE 22\n line 23\n drifted 24\n"
)


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest, make_repo: Callable[..., Path]) -> Iterator[Environment]:
    skip_unavailable(request.param)
    config = EnvConfig(backend=request.param, image=DOCKER_IMAGE)
    environment = make_environment(Workspace(config, str(make_repo(FILES))))
    try:
        yield environment
    finally:
        environment.close()


def text(env: Environment, path: str) -> bytes:
    return env.read_file(f"{env.repo_path}/{path}")


def leftovers(env: Environment) -> str:
    return env.run("ls -d /tmp/swe-aci-patch-* 2>/dev/null; git status --porcelain").output


def test_a_patch_applies_and_reverse_takes_it_back(env: Environment) -> None:
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n"
    result = apply_patch(env, patch)
    assert (result.applied, result.method) == (True, "git apply")
    assert text(env, "f.txt").startswith(b"LINE 1\nline 2\n")
    assert apply_patch(env, patch, reverse=True).applied
    assert text(env, "f.txt") == LINES.encode()
    assert leftovers(env).strip() == ""


def test_wrong_hunk_counts_are_recounted(env: Environment) -> None:
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,7 +1,9 @@\n-line 1\n+LINE 1\n line 2\n"
    result = apply_patch(env, patch)
    assert (result.applied, result.method) == (True, "git apply --recount")


def test_a_patch_that_does_not_apply_changes_nothing(env: Environment) -> None:
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-no such line\n+x\n line 2\n"
    result = apply_patch(env, patch)
    assert not result.applied and result.method is None
    assert "patch failed" in result.complaint() or "error" in result.complaint()
    assert text(env, "f.txt") == LINES.encode()
    assert leftovers(env).strip() == ""


def test_fuzz_restores_the_tree_the_reject_attempt_left(env: Environment) -> None:
    """git apply fails, `--reject` applies the first hunk and leaves a .rej; patch --fuzz then
    applies both hunks to the tree as it was, not on top of the half-applied one."""
    assert not apply_patch(env, TWO_HUNKS).applied
    result = apply_patch(env, TWO_HUNKS, fuzz=True)
    assert (result.applied, result.method) == (True, "patch --fuzz=5")
    expected = LINES.replace("line 3\n", "LINE 3\n").replace("line 22\n", "LINE 22\n")
    assert text(env, "f.txt") == expected.encode()
    status = env.run("git status --porcelain --untracked-files=all").output
    assert ".rej" not in status
    assert env.run("ls -d /tmp/swe-aci-patch-* 2>/dev/null").output.strip() == ""


def test_the_patch_text_never_reaches_a_shell(env: Environment) -> None:
    """Quotes, command substitutions, a here-document's end and bytes that are not UTF-8 are
    written as they are, and none of them runs."""
    line = "x = '$(touch /tmp/pwned-by-patch)'\"`id`\"\nEOF\n__SWE_ACI_x\n"
    added = "".join(f"+{piece}\n" for piece in line.splitlines())
    raw = b"\xff\xfe latin \xe9"
    patch = f"--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,4 @@\n{added}+".encode() + raw + b"\n"
    result = apply_patch(env, patch.decode("utf-8", "surrogateescape"))
    assert result.applied, result.output
    assert text(env, "new.py") == line.encode() + raw + b"\n"
    assert env.run("ls /tmp/pwned-by-patch 2>&1").exit_code != 0


def test_run_logged_keeps_the_end_of_a_long_output(env: Environment) -> None:
    """The shell's output cap keeps a command's start; a test runner's summary is at its end."""
    run = run_logged(env, "seq 1 200000; echo SUMMARY; exit 3", timeout=60)
    assert (run.exit_code, run.timed_out) == (3, False)
    assert run.log.endswith("200000\nSUMMARY\n") and run.log.startswith("1\n2\n")
    assert env.run("ls /tmp/swe-aci-log-* 2>/dev/null").output.strip() == ""
