"""Running a sandbox as an ordinary user from a test run as root (or as ourselves otherwise).

`run_probe` runs tests/sandbox_probe.py as root or as the user `swe-aci-test` (created when missing) with
`setpriv`. The checkout, the interpreter swe-aci runs on and its virtualenv may live where that
user may not go (a clone or pyenv under root's 0700 /root): the probe and the package are copied
into the probe's own world-readable directory, and the probe runs in a mount namespace of its own
in which the interpreter's directories alone are reachable (a tmpfs over each closed directory,
those directories bound back in).
Nothing of the host changes but the user's existence.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TEST_USER = "swe-aci-test"
TESTS = Path(__file__).resolve().parent
SOURCE = TESTS.parent / "src"
MODES = ["root", "user"]
PYCACHE = shutil.ignore_patterns("__pycache__")


def unprivileged_user() -> tuple[int, int]:
    """The ordinary user's (uid, gid), creating the user when missing (we are root)."""
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("useradd is missing: cannot create the unprivileged test user")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/false", TEST_USER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(TEST_USER)
    return entry.pw_uid, entry.pw_gid


def require_mode(mode: str) -> None:
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("runs as root only (the tests are not run as root)")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user may read (pytest's own tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="swe-aci-test-shared-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def give_to_test_user(path: Path) -> None:
    """Hand a directory tree (a repository for the probe) to the test user."""
    if os.geteuid() != 0:
        return
    uid, gid = unprivileged_user()
    for parent, dirs, files in os.walk(path):
        os.lchown(parent, uid, gid)
        for name in (*dirs, *files):
            os.lchown(os.path.join(parent, name), uid, gid)


def run_probe(
    mode: str,
    repo: Path,
    commands: list[str],
    *,
    timeout: float = 25.0,
    join_cgroups: tuple[str, ...] = (),
    **config: Any,
) -> list[tuple[int | None, str]]:
    """Run `commands` in a sandbox of `config` over `repo`, from a swe-aci run as root (`mode`
    "root") or as the ordinary user ("user"; ourselves when we are not root). `join_cgroups`:
    `cgroup.procs` files the probe is put in (by its own pid, before it becomes the user)."""
    require_mode(mode)
    request = json.dumps(
        {"repo": str(repo), "config": config, "commands": commands, "timeout": timeout}
    )
    scratch = Path(tempfile.mkdtemp(prefix="swe-aci-test-probe-", dir="/tmp"))
    scratch.chmod(0o755)
    try:
        # The checkout may sit where the user cannot go (root's 0700 home): the probe and the
        # package it imports are copied where every user may read them.
        shutil.copytree(SOURCE / "swe_aci", scratch / "src" / "swe_aci", ignore=PYCACHE)
        shutil.copy(TESTS / "sandbox_probe.py", scratch / "sandbox_probe.py")
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(scratch),
            "TMPDIR": str(scratch),
            "PYTHONPATH": str(scratch / "src"),
        }
        probe = [sys.executable, str(scratch / "sandbox_probe.py"), request]
        if mode == "user" and os.geteuid() == 0:
            give_to_test_user(scratch)
            probe = ["unshare", "--mount", "--", "sh", "-c", _reach_script(scratch), "sh", *probe]
        if join_cgroups:
            joins = "".join(f"echo $$ > '{path}'\n" for path in join_cgroups)
            probe = ["sh", "-c", f'set -e\n{joins}exec "$@"', "sh", *probe]
        result = subprocess.run(
            probe, capture_output=True, text=True, env=env, timeout=120, cwd="/"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return [(code, output) for code, output in json.loads(result.stdout.splitlines()[-1])]


def _reach_script(scratch: Path) -> str:
    """Make the interpreter's installation, its virtualenv and its import path reachable, then
    become the test user: each directory closed to others on the way to one of them is covered
    by a tmpfs holding only those paths, bound back in from a hold of the original."""
    uid, gid = unprivileged_user()
    lines = ["set -e"]
    needed = {Path(p).resolve() for p in (sys.base_prefix, sys.prefix, *sys.path) if p}
    by_closed: dict[Path, list[Path]] = {}
    for path in sorted(p for p in needed if p.is_dir()):
        closed = next(
            (p for p in reversed(path.parents) if p != p.parent and not os.stat(p).st_mode & 0o001),
            None,
        )
        if closed is not None and scratch not in (path, *path.parents):
            by_closed.setdefault(closed, []).append(path)
    for number, (closed, paths) in enumerate(sorted(by_closed.items())):
        hold = scratch / f"hold-{number}"
        hold.mkdir()
        lines += [
            f"mount --bind '{closed}' '{hold}'",
            f"mount -t tmpfs -o mode=0755 swe-aci-test '{closed}'",
        ]
        for path in paths:
            inside = path.relative_to(closed)
            lines += [
                f"mkdir -p '{closed / inside}'",
                f"mount --bind '{hold / inside}' '{closed / inside}'",
            ]
    lines.append(f'exec setpriv --reuid={uid} --regid={gid} --init-groups -- "$@"')
    return "\n".join(lines)
