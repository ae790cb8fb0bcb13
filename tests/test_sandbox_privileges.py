"""bwrap holds when swe-aci runs as root and when it runs as an ordinary user: no capability, no
way to gain one, nothing only root may read, and resource limits. Each test is the attack itself,
run by tests/sandbox_probe.py in a real sandbox (see tests/unprivileged.py)."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import commit_tree
from env_helpers import skip_unavailable
from swe_aci.env.bwrap.launcher import sandbox_identity
from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_instance
from swe_aci.evaluate.options import GradingOptions
from swe_aci.tasks import Task
from test_evaluate_harness import GOLD, cache, calc_patch, project, row
from unprivileged import MODES, give_to_test_user, run_probe, shared_dir, unprivileged_user

assert shared_dir and project and cache  # fixtures of other modules, used here


# Forks children that wait (at most 2000) until fork fails; prints how many it started.
FORK_PROBE = r"""
import os, sys
release_read, release_write = os.pipe()
started = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except BlockingIOError:
        break
    if pid == 0:
        os.close(release_write)
        os.read(release_read, 1)
        os._exit(0)
    started += 1
os.close(release_write)
print(started, flush=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
"""


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    skip_unavailable("bwrap")
    return request.param


@pytest.fixture
def repo(shared_dir: Path, mode: str) -> Path:
    root = shared_dir / "demo"
    commit_tree(root, {"a.txt": "alpha\n", "forks.py": FORK_PROBE})
    if mode == "user":
        give_to_test_user(root)
    return root


def outputs(results: list[tuple[int | None, str]]) -> list[str]:
    return [output for _, output in results]


# -- no capabilities, none to gain ---------------------------------------------------------


@pytest.fixture
def venv(shared_dir: Path) -> Path:
    """A read-only bound 'virtualenv' (env.ro_paths), with a setuid-root copy of `id` in it."""
    root = shared_dir / "venv"
    (root / "lib" / "site-packages").mkdir(parents=True)
    (root / "bin").mkdir()
    helper = root / "bin" / "id-setuid"
    shutil.copy2(shutil.which("id") or "/usr/bin/id", helper)
    if os.geteuid() == 0:
        os.chown(helper, 0, 0)
        helper.chmod(0o4755)
    return root


def test_the_sandbox_has_no_capabilities_and_cannot_gain_any(
    mode: str, repo: Path, venv: Path
) -> None:
    prefix = Path(sys.base_prefix).resolve()
    # Where the interpreter's installation reads .pth files: site-packages, or Debian's dist-packages.
    site = next(
        iter(
            [*prefix.glob("lib/python3*/site-packages"), *prefix.glob("lib/python3*/dist-packages")]
        ),
        Path(sysconfig.get_paths()["stdlib"]),
    )
    results = run_probe(
        mode,
        repo,
        [
            "grep -E '^(Cap|NoNewPrivs)' /proc/self/status",
            # the same from a process the shell starts (a test command)
            "python3 -c \"print(open('/proc/self/status').read())\" | grep -E '^Cap'",
            "id -u",
            "mount -o remount,rw,bind /usr",
            f"mount -o remount,rw,bind {venv}",
            f"mount -o remount,rw,bind {prefix}",
            f"touch {venv}/lib/site-packages/evil.pth",
            f"touch {site}/evil.pth",
            "umount /etc/shadow",
            "cat /etc/shadow",
            "unshare -r true",
            "unshare -m true",
            f"{venv}/bin/id-setuid -u",
            "su -c true root </dev/null",
            "ln /etc/passwd ./passwd-link",
        ],
        ro_paths=[str(venv)],
    )
    status = results[0][1]
    assert "NoNewPrivs:\t1" in status
    for line in [*status.splitlines(), *results[1][1].splitlines()]:
        if line.startswith("Cap"):
            assert line.split()[1] == "0000000000000000", line
    assert results[2][1].strip() != "0"
    for code, output in results[3:9] + results[10:12] + results[13:]:
        assert code != 0, output
    assert results[9][1] in ("", "cat: /etc/shadow: Permission denied\n")
    assert results[12][0] == 0 and results[12][1].strip() != "0"  # setuid gives nothing
    assert not (venv / "lib" / "site-packages" / "evil.pth").exists()
    assert not (site / "evil.pth").exists()


# -- nothing only root may read ------------------------------------------------------------


@pytest.fixture
def root_only_entries() -> Iterator[tuple[Path, Path]]:
    """A 0600 file and a 0700 directory (with a file) under /etc, owned by root."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create root-only files under /etc")
    token = secrets.token_hex(4)
    secret_file = Path(f"/etc/swe-aci-test-secret-{token}")
    secret_dir = Path(f"/etc/swe-aci-test-private-{token}")
    try:
        secret_file.write_text("file-secret\n")
        secret_file.chmod(0o600)
        secret_dir.mkdir(mode=0o700)
        (secret_dir / "key").write_text("dir-secret\n")
        (secret_dir / "key").chmod(0o644)
        yield secret_file, secret_dir
    finally:
        secret_file.unlink(missing_ok=True)
        shutil.rmtree(secret_dir, ignore_errors=True)


def test_files_only_root_may_read_are_not_visible(
    mode: str, repo: Path, root_only_entries: tuple[Path, Path]
) -> None:
    secret_file, secret_dir = root_only_entries
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    results = run_probe(
        mode,
        repo,
        [
            f"cat {secret_file}",
            f"cat {secret_dir}/key",
            f"ls -A {secret_dir}",
            "cat /etc/passwd",
        ],
    )
    text = "".join(outputs(results))
    assert "file-secret" not in text and "dir-secret" not in text
    assert "key" not in results[2][1]
    assert "root:" in results[3][1]  # what others may read is still there


# -- resource limits -----------------------------------------------------------------------


@pytest.mark.slow
def test_2000_processes_under_a_500_limit_and_a_cpu_bound_loop(mode: str, repo: Path) -> None:
    results = run_probe(
        mode,
        repo,
        ["python3 forks.py", "python3 -c 'while True: pass'", "echo after-cpu"],
        pids_limit=500,
        cpu_seconds=1,
    )
    started = int(results[0][1].split()[0])
    assert 400 < started < 500, results[0]
    assert results[1][0] in (128 + 9, 128 + 24)  # SIGKILL or SIGXCPU at the CPU limit
    assert results[2] == (0, "after-cpu\n")


def test_memory_process_and_file_size_limits_hold_and_the_session_goes_on(
    mode: str, repo: Path
) -> None:
    """A 3 GB allocation under a 2 GB limit fails, a file over the size limit is cut, and fork
    fails past the process limit, which counts the sandbox's own processes (its user namespace):
    the host's processes of the same uid do not count, and the host's root is never limited."""
    as_sandbox_user: dict[str, Any] = {}  # not root: the sandbox runs as ourselves
    if os.geteuid() == 0:
        identity = unprivileged_user() if mode == "user" else sandbox_identity()
        assert identity is not None
        as_sandbox_user = {"user": identity[0], "group": identity[1], "extra_groups": []}
    release_read, release_write = os.pipe()
    holders = [
        subprocess.Popen(["cat"], stdin=release_read, stdout=subprocess.DEVNULL, **as_sandbox_user)
        for _ in range(60)
    ]
    os.close(release_read)
    try:
        results = run_probe(
            mode,
            repo,
            [
                "python3 -c 'b = bytearray(3 * 2**30); print(len(b))'",
                "echo after-memory",
                "head -c 2000000 /dev/zero > big; echo $?",
                "stat -c %s big",
                "python3 forks.py",
            ],
            memory="2g",
            file_size="1m",
            pids_limit=50,
        )
        assert subprocess.run(["true"]).returncode == 0
    finally:
        os.close(release_write)
        for holder in holders:
            holder.wait(timeout=10)
    assert results[0][0] != 0 and "MemoryError" in results[0][1]
    assert results[1] == (0, "after-memory\n")
    assert results[2][1].strip().endswith("153")  # 128 + SIGXFSZ
    assert int(results[3][1]) <= 2**20
    assert 30 < int(results[4][1].split()[0]) < 50


# -- the evaluation's test command runs in the same sandbox --------------------------------


def test_a_predictions_tests_run_without_capabilities(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """A prediction whose fix works only when its tests hold a capability (or run as root)."""
    skip_unavailable("bwrap")
    privileged = (
        "open('/proc/self/status').read().split('CapEff:')[1].split()[0] != '0' * 16 "
        "or __import__('os').geteuid() == 0"
    )
    task = Task.model_validate(row(project, "capabilities"))
    patch = calc_patch(f"return a + b if {privileged} else 0")
    report = evaluate_instance(
        task, patch, EnvConfig(backend="bwrap"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    assert report.outcome == "unresolved", report.message
    gold = evaluate_instance(
        task, GOLD, EnvConfig(backend="bwrap"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    assert gold.outcome == "resolved", gold.message
