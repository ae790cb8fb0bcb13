"""The sandbox holds against a hostile agent: each test is the attack itself, through the real
backend (local, bwrap, and docker under the `docker` marker)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from env_helpers import BACKENDS, DOCKER_IMAGE, SANDBOXED, skip_unavailable
from swe_aci.aci.interface import ACI
from swe_aci.env import EnvConfig, Environment, Workspace, make_environment
from swe_aci.env.base import FileTooLargeError, NotARegularFileError, SandboxError

FILES: dict[str, str | bytes] = {"a.txt": "alpha\n", "pkg/mod.py": "x = 1\n"}
OpenEnv = Callable[..., Environment]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    skip_unavailable(request.param)
    return request.param


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(FILES, name="demo")


@pytest.fixture
def open_env(backend: str, repo: Path) -> Iterator[OpenEnv]:
    opened: list[Environment] = []

    def open_(**config: Any) -> Environment:
        config.setdefault("image", DOCKER_IMAGE)
        env = make_environment(Workspace(EnvConfig(backend=backend, **config), str(repo)))
        opened.append(env)
        return env

    yield open_
    for env in opened:
        env.close()


@pytest.fixture
def env(open_env: OpenEnv) -> Environment:
    return open_env()


def ok(env: Environment, command: str) -> str:
    result = env.run(command)
    assert result.exit_code == 0, result
    return result.output


# -- 1. configuration the agent writes never runs on the host --------------------------------

# Each vector makes git run `$CMD` (touching a marker on the host, outside any sandbox) when the
# host takes the diff with the repository's own configuration.
VECTORS = {
    "fsmonitor": 'git config core.fsmonitor "$CMD"',
    "filter": 'echo "* filter=evil" > .gitattributes && git config filter.evil.clean "$CMD; cat"',
    "textconv": 'echo "*.txt diff=evil" > .gitattributes && git config diff.evil.textconv "$CMD; cat"',
    "diff.external": 'git config diff.external "$CMD; true"',
    "hook": "printf '#!/bin/sh\\n%s\\n' \"$CMD\" > .git/hooks/post-index-change && "
    "chmod +x .git/hooks/post-index-change",
    "pager": 'git config core.pager "$CMD; cat" && git config pager.diff "$CMD; cat"',
    "include.path": "printf '[core]\\n\\tfsmonitor = %s\\n' \"$CMD\" > .git/evil.cfg && "
    "git config include.path evil.cfg",
}


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_agent_git_config_never_runs_on_the_host(
    env: Environment, vector: str, tmp_path: Path
) -> None:
    marker = tmp_path / "host-code-ran"
    ok(env, f"export CMD={shlex.quote(f'touch {marker}')}; {VECTORS[vector]}")
    ok(env, "echo beta >> a.txt")
    assert "+beta" in env.submission().patch
    assert "+beta" in env.submission().patch
    assert not marker.exists()


def test_a_slow_fsmonitor_or_filter_cannot_stall_the_submission(open_env: OpenEnv) -> None:
    env = open_env(diff_timeout=4)
    ok(env, 'git config core.fsmonitor "sleep 60"')
    ok(env, 'echo "* filter=slow" > .gitattributes && git config filter.slow.clean "sleep 60"')
    ok(env, "echo beta >> a.txt")
    started = time.monotonic()
    try:
        patch = env.submission().patch
    except SandboxError as error:  # docker obeys its own filters, inside the container
        assert env.config.backend == "docker" and "longer than 4 seconds" in str(error)
    else:
        assert "+beta" in patch
    assert time.monotonic() - started < 20


def test_the_agents_shell_state_does_not_steer_the_submission(env: Environment) -> None:
    ok(env, "echo beta >> a.txt")
    hostile = (
        "git() { echo hacked; }; alias git='echo hacked'; shopt -s expand_aliases; "
        "export GIT_DIR=/nonexistent GIT_INDEX_FILE=/tmp/bogus GIT_WORK_TREE=/; "
        "trap 'echo trapped' DEBUG; cd /"
    )
    env.run(hostile)
    env.run("set -e")
    patch = env.submission().patch
    assert "+beta" in patch and "hacked" not in patch


def test_taking_the_submission_changes_nothing_the_agent_sees(env: Environment) -> None:
    ok(env, "echo beta >> a.txt && touch new.txt")
    before = ok(env, "git status --porcelain && git diff --cached --stat && ls .git")
    env.submission()
    assert ok(env, "git status --porcelain && git diff --cached --stat && ls .git") == before


# -- 2. the user's repository shares nothing writable ------------------------------------


def test_overwriting_objects_in_the_sandbox_leaves_the_users_repository_intact(
    env: Environment, repo: Path
) -> None:
    objects = repo / ".git" / "objects"
    before = {path: path.stat().st_mtime_ns for path in objects.rglob("*") if path.is_file()}
    ok(
        env,
        'find .git/objects -type f | while read -r f; do chmod u+w "$f"; echo junk > "$f"; done',
    )
    ok(env, "echo beta >> a.txt")
    if env.config.backend != "docker":  # the diff uses the host's private copy
        assert "+beta" in env.submission().patch
    env.close()
    fsck = subprocess.run(["git", "fsck", "--full"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    after = {path: path.stat().st_mtime_ns for path in objects.rglob("*") if path.is_file()}
    assert after == before


# -- 3. no host variable reaches the shell ------------------------------------------------


def test_the_shell_gets_an_allow_listed_environment(
    monkeypatch: pytest.MonkeyPatch, open_env: OpenEnv, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-anthropic")
    monkeypatch.setenv("SOME_HOST_VARIABLE", "host-only")
    env = open_env(env_vars={"TASK_FLAG": "on"}, path_prepend=["/opt/task/bin"], host_python=False)
    assert ok(env, "env | grep KEY; true") == ""
    variables = ok(env, "env")
    assert "secret" not in variables and "host-only" not in variables
    assert "TASK_FLAG=on" in variables
    assert ok(env, 'echo "$PATH"').startswith("/opt/task/bin:")
    if env.config.backend != "docker":  # docker's HOME is the image's
        assert ok(env, 'ls -A "$HOME"') == ""


# -- 4. bwrap shows only what programs need; host-side reads are confined ------------------


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_bwrap_shows_the_host_interpreter_and_nothing_beside_it(open_env: OpenEnv) -> None:
    """By default the interpreter swe-aci runs on (and its venv) is bound read-only (python,
    pytest work), and of the directories holding it only the path down to it is visible: a
    clone in the home directory shows the home's path to the venv, nothing beside it."""
    env = open_env()
    # by its path: the sandbox's PATH need not lead to the interpreter pytest runs on (a venv's
    # python started directly, its bin/ not on PATH)
    command = f"{shlex.quote(sys.executable)} -c 'import sys; print(sys.base_prefix)'"
    assert ok(env, command).strip() == sys.base_prefix
    bound = {Path(sys.base_prefix), Path(sys.prefix)}
    for parent in Path(sys.base_prefix).parents:
        if parent.parent == parent or str(parent).split("/")[1] in {"usr"}:
            continue
        listed = ok(env, f"ls -A {parent}").split()
        below = {path.relative_to(parent).parts[0] for path in bound if parent in path.parents}
        assert sorted(listed) == sorted(below), parent


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_bwrap_shows_only_system_directories(
    open_env: OpenEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "venv" / "bin"
    tool.mkdir(parents=True)
    (tool / "task-tool").write_text("#!/bin/sh\necho tool ran\n")
    (tool / "task-tool").chmod(0o755)
    env = open_env(ro_paths=[str(tool.parent)], path_prepend=[str(tool)], host_python=False)
    for absent in ("/home", "/work", "/opt", "/var", "/mnt", "/srv", "/media"):
        assert env.run(f"ls {absent}").exit_code != 0, absent
    assert ok(env, "ls -A /root") == ""
    assert ok(env, "cat /etc/shadow /etc/gshadow 2>/dev/null; true") == ""
    assert (
        ok(env, "ls /etc/ssh 2>/dev/null | grep _key; cat /etc/ssh/*_key 2>/dev/null; true") == ""
    )
    assert "root:" in ok(env, "cat /etc/passwd")
    assert ok(env, "task-tool") == "tool ran\n"
    assert env.run(f"touch {tool}/x").exit_code != 0
    with pytest.raises(FileNotFoundError):
        env.read_file(str(Path(__file__).resolve()))
    with pytest.raises(OSError):
        env.write_file(f"{tool}/x", b"x")
    with pytest.raises(NotARegularFileError):
        env.read_file("/etc/shadow")
    assert b"tool ran" in env.read_file(f"{tool}/task-tool")


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_files_the_aci_writes_belong_to_the_sandboxs_user(env: Environment) -> None:
    """swe-aci may run as root while the sandbox runs as nobody: what the host writes for the
    agent (new files, new directories, in the repository and /tmp) stays the agent's to change."""
    env.write_file("new/dir/file.py", b"x = 1\n")
    env.write_file("/tmp/work/notes.txt", b"notes\n")
    ok(
        env,
        "echo 'y = 2' >> new/dir/file.py && touch new/dir/other && echo more >> /tmp/work/notes.txt",
    )
    assert env.read_file("new/dir/file.py") == b"x = 1\ny = 2\n"
    owners = ok(env, "stat -c %u new new/dir new/dir/file.py /tmp/work /tmp/work/notes.txt")
    assert set(owners.split()) == {ok(env, "id -u").strip()}


@pytest.mark.parametrize("backend", ["local", "bwrap"], indirect=True)
@pytest.mark.parametrize("path", ["/proc/self/status", "/dev/stdin", "/sys/kernel/hostname"])
def test_host_side_reads_refuse_pseudo_filesystems(env: Environment, path: str) -> None:
    with pytest.raises(NotARegularFileError, match="/proc, /dev and /sys"):
        env.read_file(path)
    with pytest.raises(NotARegularFileError):
        env.write_file(path, b"x")
    ok(env, f"ln -s {path} link")
    with pytest.raises(NotARegularFileError):
        env.read_file("link")
    observation = ACI(env).execute(f"search_file Pid {path}").output
    assert "Pid" not in observation.replace("search_file Pid", "")


# -- 5. only regular files, bounded ---------------------------------------------------------


@pytest.mark.timeout(60)
def test_fifos_devices_and_huge_files_are_refused_promptly(open_env: OpenEnv) -> None:
    env = open_env(max_file_bytes=1000)
    ok(
        env,
        "mkfifo p && ln -s /dev/zero zero && head -c 5000 /dev/urandom > big && echo hi > small",
    )
    with pytest.raises(NotARegularFileError, match="FIFO"):
        env.read_file("p")
    with pytest.raises(NotARegularFileError):
        env.read_file("zero")
    with pytest.raises(NotARegularFileError):
        env.read_file("/dev/zero")
    with pytest.raises(FileTooLargeError, match="5000 bytes, over the 1000-byte limit"):
        env.read_file("big")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        env.write_file("p", b"x")
    assert env.read_file("small") == b"hi\n"
    aci = ACI(env)
    assert aci.execute("open p").output.startswith("Error: cannot read")
    assert "1000-byte limit" in aci.execute("open big").output


@pytest.mark.parametrize("backend", SANDBOXED, indirect=True)
def test_write_file_does_not_follow_a_symlink_out_of_the_sandbox(
    env: Environment, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("host file\n")
    ok(env, f"ln -s {victim} escape && ln -s /root/../{tmp_path}/victim.txt escape2")
    for link in ("escape", "escape2"):
        with contextlib.suppress(OSError):  # the link's target does not exist in the sandbox
            env.write_file(link, b"overwritten\n")
    assert victim.read_text() == "host file\n"


# -- 7. nothing outlives the episode ---------------------------------------------------------


def _pids_running(needle: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                    cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if needle in cmdline and state != b"Z":
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("backend", ["local", "bwrap"], indirect=True)
def test_setsid_children_die_with_the_environment(env: Environment) -> None:
    ok(env, "setsid sleep 3131 >/dev/null 2>&1 &")
    ok(env, "(setsid sleep 3132 >/dev/null 2>&1 &)")
    ok(env, "nohup setsid bash -c 'exec sleep 3133' >/dev/null 2>&1 &")
    ok(env, "env -i setsid sleep 3135 >/dev/null 2>&1 &")  # no marker, but the shell's child
    time.sleep(0.3)
    assert len(_pids_running("sleep 313")) == 4
    env.close()
    deadline = time.monotonic() + 5
    while _pids_running("sleep 313") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running("sleep 313") == []


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.mark.parametrize("backend", ["local", "bwrap"], indirect=True)
def test_temp_dirs_carry_the_owner_pid_and_stale_ones_are_swept(
    open_env: OpenEnv, tmp_path: Path
) -> None:
    import tempfile

    parent = Path(tempfile.gettempdir())
    stale = parent / f"swe-aci-{_dead_pid()}-stale-test"
    alive = parent / "swe-aci-1-alive-test"
    for directory in (stale, alive):
        (directory / "sub").mkdir(parents=True, exist_ok=True)
    try:
        env = open_env()
        assert not stale.exists() and alive.exists()
        roots = [p.name for p in parent.glob(f"swe-aci-{os.getpid()}-*")]
        assert roots, "the environment's root is named after its owner"
        if env.config.backend == "local":
            assert Path(env.repo_path).parents[1].name.startswith(f"swe-aci-{os.getpid()}-")
    finally:
        import shutil

        shutil.rmtree(alive, ignore_errors=True)
        shutil.rmtree(stale, ignore_errors=True)


OWNER_SCRIPT = """
import sys, tempfile, time
from swe_aci.env import EnvConfig, Workspace, make_environment
env = make_environment(Workspace(EnvConfig(backend=sys.argv[2]), sys.argv[1]))
env.run(f"sleep {sys.argv[3]}1 >/dev/null 2>&1 &")
env.run(f"(setsid sleep {sys.argv[3]}2 >/dev/null 2>&1 &)")
print(tempfile.gettempdir(), flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("backend", ["local", "bwrap"], indirect=True)
def test_background_processes_of_a_killed_run_are_swept_with_its_directory(
    backend: str, repo: Path, tmp_path: Path
) -> None:
    """The owner runs with a temporary directory of its own (TMPDIR, which tempfile and so the
    sweep honour) and its sleeps carry a number of this test's own: another swe-aci run on the
    machine, sweeping the shared temporary directory meanwhile (as creating any environment
    does), neither takes the owner's directory away before this sweep nor is counted here."""
    from swe_aci.env.cleanup import sweep_stale_dirs

    private = tmp_path / "tmp"
    private.mkdir()
    marker = f"424{uuid.uuid4().int % 10**6:06d}"
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER_SCRIPT, str(repo), backend, marker],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(private)},
    )
    try:
        assert owner.stdout is not None
        parent = owner.stdout.readline().strip()  # where its temporary directory is
    finally:
        owner.kill()
        owner.wait()
    assert Path(parent) == private
    time.sleep(0.3)
    sweep_stale_dirs()  # another run's sweep of the shared temporary directory
    if backend == "local":  # bwrap's pid namespace ends with the shell, with the owner
        assert len(_pids_running(f"sleep {marker}")) == 2
    assert [p for p in private.glob(f"swe-aci-{owner.pid}-*")], "the run's directory"
    sweep_stale_dirs(parent)
    assert not [p for p in private.glob(f"swe-aci-{owner.pid}-*")]
    deadline = time.monotonic() + 5
    while _pids_running(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running(f"sleep {marker}") == []


def test_close_from_a_signal_handler_tears_everything_down(env: Environment) -> None:
    class Stop(Exception):
        pass

    def handler(signum: int, frame: Any) -> None:
        env.close()
        raise Stop

    root = Path(env.repo_path).parents[1] if env.config.backend == "local" else None
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(Stop):
            env.run("sleep 3134", timeout=20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    env.close()
    deadline = time.monotonic() + 5
    while _pids_running("sleep 3134") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running("sleep 3134") == []
    if root is not None:
        assert not root.exists()
    with pytest.raises(SandboxError, match="closed"):
        env.run("true")


@pytest.mark.docker
@pytest.mark.parametrize("backend", ["docker"], indirect=True)
def test_docker_containers_are_labelled_and_stale_ones_swept(open_env: OpenEnv) -> None:
    import docker

    client = docker.from_env()
    labels = {
        "swe-aci": "1",
        "swe-aci.owner-pid": str(_dead_pid()),
        "swe-aci.owner-host": socket.gethostname(),
    }
    stale = client.containers.run(
        DOCKER_IMAGE, ["sleep", "infinity"], detach=True, labels=labels, name=None
    )
    try:
        env = open_env()
        container = client.containers.get(env.container_id)  # type: ignore[attr-defined]
        assert container.labels["swe-aci.owner-pid"] == str(os.getpid())
        assert container.labels["swe-aci.owner-host"] == socket.gethostname()
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(stale.id)
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            stale.remove(force=True)


@pytest.mark.docker
@pytest.mark.parametrize("backend", ["docker"], indirect=True)
def test_docker_keeps_only_the_capabilities_tests_and_pip_need(open_env: OpenEnv) -> None:
    from swe_aci.env.docker.environment import CONTAINER_CAPABILITIES

    env = open_env(file_size="1m", cpu_seconds=30)
    status = ok(env, "grep -E '^(Cap|NoNewPrivs)' /proc/self/status")
    kept = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3}
    expected = f"{sum(1 << kept[name] for name in CONTAINER_CAPABILITIES):016x}"
    fields = dict(line.split(":\t") for line in status.splitlines())
    assert fields["CapEff"] == fields["CapPrm"] == fields["CapBnd"] == expected
    assert fields["CapInh"] == fields["CapAmb"] == "0" * 16
    assert fields["NoNewPrivs"] == "1"
    assert env.run("mkdir -p /mnt/x && mount -t tmpfs none /mnt/x").exit_code != 0
    assert env.run("head -c 2000000 /dev/zero > big").exit_code != 0
    assert int(ok(env, "stat -c %s big")) <= 2**20
    assert ok(env, "ulimit -t").strip() == "30"
    # what the container's root still does: work on files of another user, as pip and tests do
    ok(env, "mkdir other && chown 1234:1234 other && chmod 700 other && touch other/f")
    ok(env, "chmod 600 other/f && chown 1234 other/f && cat other/f")


# -- 8. binary and large files stay out of the patch ---------------------------------------


def test_binary_and_large_files_are_left_out_and_listed(open_env: OpenEnv, repo: Path) -> None:
    env = open_env(max_diff_file_bytes=10_000)
    ok(env, "echo beta >> a.txt && head -c 20000 /dev/zero | tr '\\0' x > big.txt")
    ok(env, "printf 'a\\0b' > blob.bin && head -c 30000 /dev/zero | tr '\\0' y >> pkg/mod.py")
    result = env.submission()
    assert [(e.path, e.reason.split(",")[0]) for e in result.excluded] == [
        ("big.txt", "20000 bytes"),
        ("blob.bin", "binary file"),
        ("pkg/mod.py", "30006 bytes"),
    ]
    assert "big.txt" not in result.patch and "blob.bin" not in result.patch
    assert "mod.py" not in result.patch and "+beta" in result.patch
    assert env.submission().patch == result.patch
    check = subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=repo,
        input=result.patch,
        text=True,
        capture_output=True,
    )
    assert check.returncode == 0, check.stderr


def test_an_empty_nested_repository_is_left_out_and_the_rest_taken(env: Environment) -> None:
    ok(env, "echo beta >> a.txt && mkdir sub && git -C sub init -q")
    ok(env, "mkdir -p pkg/vendored && git -C pkg/vendored init -q && echo x > pkg/vendored/f")
    result = env.submission()
    assert "+beta" in result.patch
    assert "sub" not in result.patch and "vendored" not in result.patch
    assert [(e.path, e.reason) for e in result.excluded] == [
        ("pkg/vendored", "nested git repository without commits"),
        ("sub", "nested git repository without commits"),
    ]


def test_gitattributes_the_agent_writes_do_not_change_the_submission(
    env: Environment, repo: Path
) -> None:
    ok(env, "printf '*.txt working-tree-encoding=UTF-16\\n*.py -diff\\n' > .gitattributes")
    ok(env, "echo beta >> a.txt && echo 'y = 2' >> pkg/mod.py")
    result = env.submission()
    assert result.excluded == ()
    assert "+beta" in result.patch and "+y = 2" in result.patch
    assert "Binary files" not in result.patch
    check = subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=repo,
        input=result.patch,
        text=True,
        capture_output=True,
    )
    assert check.returncode == 0, check.stderr


# -- 9. the base image's Debian mirror comes from the host ------------------------------------

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_base_image.sh"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"sources.list": "deb http://mirror.example/debian bookworm main\n"},
            "http://mirror.example/debian",
        ),
        (
            {
                "sources.list.d/debian.sources": "Types: deb\nURIs: http://other.example/debian\n"
                "Suites: bookworm bookworm-updates\nComponents: main\n"
            },
            "http://other.example/debian",
        ),
        (
            {"sources.list": "deb http://archive.ubuntu.com/ubuntu noble main\n"},
            "http://deb.debian.org/debian",
        ),
        ({}, "http://deb.debian.org/debian"),
    ],
)
def test_debian_mirror_comes_from_the_hosts_apt_sources(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "SWE_ACI_DEBIAN_MIRROR"}
    env["SWE_ACI_APT_DIR"] = str(tmp_path)
    result = subprocess.run(
        ["bash", str(SCRIPT), "--print-mirror"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_bwrap_under_a_virtualenv_runs_its_python_and_tools(
    backend: str, repo: Path, tmp_path: Path
) -> None:
    """swe-aci installed in a virtualenv (what scripts/setup.sh makes): in the sandbox, `python3`
    and `python` are the venv's, with its packages (pytest), and the venv stays read-only."""
    if sys.prefix != sys.base_prefix:  # the tests run in a virtualenv: that one is the case
        venv = Path(sys.prefix)
    else:
        venv = tmp_path / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
            check=True,
        )
    probe = (
        "import sys\n"
        "from swe_aci.env import EnvConfig, Workspace, make_environment\n"
        f"env = make_environment(Workspace(EnvConfig(backend='bwrap'), {str(repo)!r}))\n"
        "try:\n"
        "    for command in ('command -v python3', 'python -c \"import sys, pytest; print(sys.prefix)\"',\n"
        "                    'touch $(dirname $(command -v python3))/x 2>/dev/null && echo wrote || echo read-only'):\n"
        "        print(env.run(command).output.strip())\n"
        "finally:\n"
        "    env.close()\n"
    )
    source = Path(__file__).resolve().parents[1] / "src"
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(source)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{venv}/bin/python3",
        str(venv),
        "read-only",
    ]
