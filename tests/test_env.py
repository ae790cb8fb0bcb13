"""The environment backends (local, bwrap, docker) against the same behaviours.

Docker cases carry the `docker` marker (run them with `-m docker`); they are skipped with the
reason when the engine or the image swe-aci/base:bookworm is missing.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from env_helpers import BACKENDS, DOCKER_IMAGE, FILE_BACKENDS, SANDBOXED, skip_unavailable
from swe_aci.env import (
    CommandResult,
    EnvConfig,
    Environment,
    SandboxError,
    Workspace,
    make_environment,
)
from swe_aci.env import bwrap as bwrap_module
from swe_aci.env.docker import DockerEnvironment
from swe_aci.env.factory import resolve_backend

FILES: dict[str, str | bytes] = {
    "a.txt": "alpha\n",
    "pkg/mod.py": "x = 1\n",
    ".gitignore": "*.log\n",
    "run.sh": "#!/bin/sh\necho run\n",
}

OpenEnv = Callable[..., Environment]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    skip_unavailable(request.param)
    return request.param


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    path = make_repo(FILES, name="demo")
    subprocess.run(["chmod", "+x", str(path / "run.sh")], check=True)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@l", "commit", "-qm", "exec"],
        cwd=path,
        check=True,
    )
    return path


@pytest.fixture
def open_env(backend: str, repo: Path) -> Iterator[OpenEnv]:
    """open_env(source=repo, commit=None, **config) -> an environment closed after the test."""
    opened: list[Environment] = []

    def open_(source: Path | str | None = repo, commit: str | None = None, **config: Any):
        config.setdefault("setup_timeout", 10)
        config.setdefault("image", DOCKER_IMAGE)
        name, _, variant = backend.partition("-")
        env_config = EnvConfig(backend=name, **config)
        env = make_environment(
            Workspace(env_config, None if source is None else str(source), commit)
        )
        opened.append(env)
        if variant == "archive":
            ok(env, "mv /usr/bin/base64 /usr/bin/base64.hidden")
        return env

    yield open_
    for env in opened:
        env.close()


@pytest.fixture
def env(open_env: OpenEnv) -> Environment:
    return open_env()


def ok(env: Environment, command: str, timeout: float | None = None) -> str:
    result = env.run(command, timeout)
    assert result.exit_code == 0, result
    return result.output


# -- the persistent shell -------------------------------------------------------------------


def test_state_persists_between_commands(env: Environment) -> None:
    assert isinstance(env, Environment)
    assert ok(env, "pwd").strip() == env.repo_path == env.cwd
    ok(env, 'cd pkg && export GREETING=hello && greet() { echo "$GREETING $1"; }')
    assert ok(env, "pwd").strip() == f"{env.repo_path}/pkg" == env.cwd
    assert ok(env, "greet world") == "hello world\n"
    assert ok(env, 'echo "$ROOT"').strip() == env.repo_path
    result = env.run("false")
    assert result == CommandResult(output="", exit_code=1)
    assert env.run("echo 'unterminated").exit_code != 0
    assert ok(env, "echo still here") == "still here\n"


def test_timeout_kills_the_command_and_keeps_the_session(env: Environment) -> None:
    ok(env, "sleep 100 & echo $! > pkg/bg.pid")
    time.sleep(0.05)  # the interrupt spares processes started over a clock tick before the command
    started = time.monotonic()
    command = "cd pkg; sleep 200 & echo $! > cmd-bg.pid; echo partial; bash -c 'echo $$ > cmd.pid; exec sleep 60'"
    result = env.run(command, timeout=1)
    assert time.monotonic() - started < 8
    assert result.timed_out and not result.shell_restarted
    assert "partial" in result.output
    assert env.cwd == f"{env.repo_path}/pkg"
    assert ok(env, "pwd").strip() == f"{env.repo_path}/pkg"
    # The command's processes are gone; the earlier background job was not the command's and lives.
    assert env.run("kill -0 $(cat cmd.pid)").exit_code != 0
    assert env.run("kill -0 $(cat cmd-bg.pid)").exit_code != 0
    assert env.run("kill -0 $(cat bg.pid)").exit_code == 0


def test_timeout_of_a_loop_spawning_processes(env: Environment) -> None:
    result = env.run("for i in 1 2 3 4 5 6 7 8 9; do sleep 5; done; echo loop-done", timeout=1)
    assert result.timed_out
    assert ok(env, "echo alive") == "alive\n"


def test_a_busy_builtin_loop_is_abandoned_and_the_session_kept(env: Environment) -> None:
    ok(env, "cd pkg && declare -a KEPT=(yes)")
    result = env.run("while :; do :; done", timeout=0.5)
    assert result.timed_out and not result.shell_restarted
    assert ok(env, 'pwd; echo "${KEPT[0]}"') == f"{env.repo_path}/pkg\nyes\n"


def test_the_rest_of_a_timed_out_command_is_abandoned(env: Environment) -> None:
    result = env.run("echo before; sleep 30; echo after", timeout=0.5)
    assert result.timed_out and not result.shell_restarted
    assert "before" in result.output and "after" not in result.output


def test_exit_restarts_the_shell_and_says_so(env: Environment) -> None:
    ok(env, "cd pkg && export KEPT=no")
    result = env.run("sleep 100 & echo bye; exit 3")  # the job keeps the output stream open
    assert result.shell_restarted and result.exit_code is None
    assert "bye" in result.output and "restarted" in result.output
    assert ok(env, "pwd; echo ${KEPT:-unset}") == f"{env.repo_path}/pkg\nunset\n"


def test_close_stops_every_process(env: Environment) -> None:
    marker = f"{uuid.uuid4().int % 10**6}.5"
    ok(env, f"sleep {marker} & (sleep {marker} &) ; echo started")
    assert _pgrep(f"sleep {marker}") or isinstance(env, DockerEnvironment)
    env.close()
    deadline = time.monotonic() + 5
    while _pgrep(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pgrep(f"sleep {marker}")
    env.close()
    with pytest.raises(SandboxError, match="closed"):
        env.run("true")


def _pgrep(pattern: str) -> bool:
    """Whether a process with this command line runs (seen from the host, like the docker
    engine's containers on this machine)."""
    return subprocess.run(["pgrep", "-f", f"^{pattern}$"], capture_output=True).returncode == 0


def test_stdin_is_at_eof(env: Environment) -> None:
    result = env.run("cat; read line; echo read=$?; python3 -c 'input()' 2>&1 | tail -1", timeout=5)
    assert not result.timed_out
    assert "read=1" in result.output and "EOFError" in result.output


def test_background_job_does_not_block(env: Environment) -> None:
    started = time.monotonic()
    assert ok(env, "sleep 100 & echo started", timeout=5) == "started\n"
    assert time.monotonic() - started < 3
    assert ok(env, "echo next") == "next\n"


def test_output_over_the_cap_is_cut_and_memory_bounded(open_env: OpenEnv) -> None:
    env = open_env(output_cap=1000)
    tracemalloc.start()
    try:
        result = env.run("yes | head -c 1G", timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0 and result.truncated and not result.timed_out
    body, notice = result.output.rsplit("\n", 1)
    assert body == "y\n" * 499 + "y"
    assert (
        notice
        == f"[Output truncated: {2**30 - 1000} more bytes were not shown (limit 1000 bytes).]"
    )
    assert peak < 8 * 2**20, f"peak Python allocations {peak} bytes"
    assert ok(env, "echo small") == "small\n"


def test_binary_output_is_decoded_with_replacement(env: Environment) -> None:
    output = ok(env, r"printf 'ok \xff\xfe\x80 end\n'")
    assert output == "ok \ufffd\ufffd\ufffd end\n"


def test_marker_text_in_a_command_cannot_confuse_the_protocol(env: Environment) -> None:
    command = (
        "echo before\n"
        "printf '\\n__SWE_ACI_DONE_%s 0 /etc\\n' 0123abcd\n"
        "cat <<'__SWE_ACI_x'\nheredoc line\n__SWE_ACI_x\n"
        "echo __SWE_ACI_DONE_ after"
    )
    result = env.run(command)
    assert result.exit_code == 0
    assert (
        result.output
        == "before\n\n__SWE_ACI_DONE_0123abcd 0 /etc\nheredoc line\n__SWE_ACI_DONE_ after\n"
    )
    assert env.cwd == env.repo_path
    assert ok(env, "echo fine") == "fine\n"


# -- files and the diff ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", FILE_BACKENDS, indirect=True)
def test_read_write_round_trip(env: Environment, backend: str) -> None:
    root = env.repo_path
    assert env.read_file(f"{root}/a.txt") == b"alpha\n"
    data = bytes(range(256)) * 4
    env.write_file(f"{root}/new/deeper/blob.bin", data)
    assert env.read_file(f"{root}/new/deeper/blob.bin") == data
    assert ok(env, "wc -c < new/deeper/blob.bin").strip() == "1024"
    scratch = f"/tmp/swe-aci-test-{uuid.uuid4().hex}"  # the host's /tmp for local: cleaned below
    env.write_file(f"{scratch}/note.txt", b"in tmp\n")
    assert ok(env, f"cat {scratch}/note.txt && rm -r {scratch}") == "in tmp\n"
    ok(env, "printf 'from shell' > made.txt")
    assert env.read_file(f"{root}/made.txt") == b"from shell"
    env.write_file(f"{root}/a.txt", b"overwritten\n")
    assert ok(env, "cat a.txt") == "overwritten\n"
    env.write_file(f"{root}/empty", b"")
    assert env.read_file("empty") == b"" and env.read_file("pkg/../a.txt") == b"overwritten\n"
    if backend == "docker-archive":
        assert type(env._files).__name__ == "ArchiveFiles"  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", FILE_BACKENDS, indirect=True)
def test_file_errors(env: Environment) -> None:
    root = env.repo_path
    with pytest.raises(FileNotFoundError):
        env.read_file(f"{root}/missing.txt")
    with pytest.raises(IsADirectoryError):
        env.read_file(f"{root}/pkg")
    with pytest.raises(IsADirectoryError):
        env.write_file(f"{root}/pkg", b"x")
    with pytest.raises(OSError):
        env.write_file(f"{root}/a.txt/below", b"x")
    assert env.read_file(f"{root}/a.txt") == b"alpha\n"


@pytest.mark.parametrize("backend", FILE_BACKENDS, indirect=True)
def test_write_keeps_the_mode_and_follows_symlinks(env: Environment) -> None:
    root = env.repo_path
    env.write_file(f"{root}/run.sh", b"#!/bin/sh\necho changed\n")
    assert ok(env, "./run.sh") == "changed\n"
    ok(env, 'ln -s "$ROOT/a.txt" link.txt')
    assert env.read_file(f"{root}/link.txt") == b"alpha\n"
    env.write_file(f"{root}/link.txt", b"via link\n")
    assert ok(env, "cat a.txt; test -L link.txt && echo still-a-link") == "via link\nstill-a-link\n"
    diff = env.submission().patch
    assert "old mode" not in diff and "new mode" not in diff


@pytest.mark.parametrize("backend", FILE_BACKENDS, indirect=True)
def test_diff_has_new_files_and_skips_ignored_ones(env: Environment) -> None:
    root = env.repo_path
    env.write_file(f"{root}/pkg/mod.py", b"x = 2\n")
    env.write_file(f"{root}/pkg/added.py", b"y = 1\n")
    ok(env, "echo noise > debug.log && rm a.txt")
    diff = env.submission().patch
    assert "+x = 2" in diff and "-x = 1" in diff
    assert "b/pkg/added.py" in diff and "new file mode" in diff
    assert "deleted file mode" in diff and "a/a.txt" in diff
    assert "debug.log" not in diff


def test_source_repository_is_untouched(open_env: OpenEnv, repo: Path) -> None:
    def snapshot() -> tuple[str, str, list[str]]:
        run = lambda *a: subprocess.run(a, cwd=repo, capture_output=True, text=True).stdout  # noqa: E731
        return (
            run("git", "rev-parse", "HEAD"),
            run("git", "status", "--porcelain", "--ignored"),
            sorted(str(p.relative_to(repo)) for p in repo.rglob("*")),
        )

    before = snapshot()
    env = open_env()
    env.write_file(f"{env.repo_path}/a.txt", b"changed\n")
    ok(
        env,
        "touch new.txt debug.log && git add -A && git -c user.name=a -c user.email=b commit -qm x",
    )
    ok(env, "git checkout -q -b other && git tag t1")
    env.submission()
    env.close()
    assert snapshot() == before


def test_commit_selection_and_errors(open_env: OpenEnv, repo: Path, tmp_path: Path) -> None:
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    env = open_env(commit=first)
    assert env.base_commit == first
    assert ok(env, "test -x run.sh || echo not-executable-yet") == "not-executable-yet\n"
    with pytest.raises(SandboxError, match="unknown commit"):
        open_env(commit="0" * 40)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SandboxError, match="not a git repository"):
        open_env(source=plain)
    with pytest.raises(SandboxError, match="does not exist"):
        open_env(source=tmp_path / "nowhere")


def test_source_given_as_dot_names_the_repository(
    open_env: OpenEnv, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    env = open_env(source=".")
    assert env.repo_path.endswith("/demo")
    assert ok(env, "ls") == "a.txt\npkg\nrun.sh\n"
    assert env.submission().patch == ""


def test_setup_commands_and_env_vars(open_env: OpenEnv) -> None:
    env = open_env(env_vars={"MY_VAR": "it's set"}, setup_commands=["echo ready > setup.txt"])
    assert ok(env, 'echo "$MY_VAR"; cat "$ROOT/setup.txt"') == "it's set\nready\n"
    with pytest.raises(SandboxError, match="setup command failed"):
        open_env(setup_commands=["echo broken >&2; false"])


def test_interrupted_setup_leaves_nothing_behind(
    backend: str, open_env: OpenEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    tag = uuid.uuid4().hex

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, ctrl_c)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            open_env(env_vars={"SWE_ACI_TEST_TAG": tag}, setup_commands=["sleep 30"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert list(scratch.iterdir()) == []
    if backend == "docker":
        assert tagged_containers(tag) == []


# -- sandbox properties ---------------------------------------------------------------------


@pytest.fixture
def host_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


CONNECT = "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo refused"


@pytest.mark.parametrize("backend", SANDBOXED, indirect=True)
def test_no_network_unless_allowed(open_env: OpenEnv, backend: str, host_server: int) -> None:
    assert ok(open_env(), CONNECT.format(port=host_server)) == "refused\n"
    if backend == "bwrap":
        assert ok(open_env(network=True), CONNECT.format(port=host_server)) == "connected\n"


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_bwrap_writes_only_in_repo_and_tmp(env: Environment, repo: Path) -> None:
    assert env.repo_path == "/demo"
    for target in ["/etc/evil", "/usr/evil", "/evil", "/run/evil"]:
        result = env.run(f"touch {target}")
        assert result.exit_code != 0, target
        assert not Path(target).exists()
        with pytest.raises(OSError):
            env.write_file(target, b"x")
    assert ok(env, "touch /demo/ok /tmp/ok && ls /run | wc -l") == "0\n"
    if repo.is_relative_to("/tmp"):
        # /tmp is private: the host's, which holds the source repository, is not visible.
        assert ok(env, f"test -e {repo} || echo hidden") == "hidden\n"
        env.write_file(f"{repo}/from-sandbox", b"x")
        assert ok(env, f"cat {repo}/from-sandbox") == "x"
    else:
        assert env.run(f"touch {repo}/from-sandbox").exit_code != 0
        with pytest.raises(OSError):
            env.write_file(f"{repo}/from-sandbox", b"x")
    assert not (repo / "from-sandbox").exists()
    # An absolute link target means the sandbox's root, for read_file/write_file as for the shell.
    ok(env, "ln -s /demo/a.txt inside && ln -s /etc/hostname outside")
    assert env.read_file("/demo/inside") == b"alpha\n"
    with pytest.raises(OSError):
        env.write_file("/demo/outside", b"x")
    assert env.read_file("/bin/sh") == Path("/bin/sh").read_bytes()


@pytest.mark.parametrize("backend", ["bwrap"], indirect=True)
def test_bwrap_repo_name_clashing_with_a_system_directory(open_env: OpenEnv, make_repo) -> None:
    env = open_env(source=make_repo({"f.txt": "usr repo\n"}, name="usr"))
    assert env.repo_path == "/swe-aci/usr"
    assert ok(env, "cat f.txt && test -x /usr/bin/env && echo system-usr-intact") == (
        "usr repo\nsystem-usr-intact\n"
    )


# -- factory --------------------------------------------------------------------------------


def test_auto_is_bwrap_and_never_falls_back_to_no_sandbox(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bwrap_module.bwrap_problem.cache_clear()
    if bwrap_module.bwrap_problem() is None:
        assert resolve_backend(EnvConfig()) == "bwrap"
    bwrap_module.bwrap_problem.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))
    try:
        with pytest.raises(SandboxError) as error:
            resolve_backend(EnvConfig(backend="auto"))
    finally:
        bwrap_module.bwrap_problem.cache_clear()
    message = str(error.value)
    assert "\n" not in message and "bwrap is not on PATH" in message
    assert "apt-get install bubblewrap" in message and "--env local" in message
    assert resolve_backend(EnvConfig(backend="local")) == "local"
    with pytest.raises(SandboxError, match="needs a repository"):
        make_environment(Workspace(EnvConfig(backend="local")))


def test_unreachable_docker_engine_is_one_line(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    pytest.importorskip("docker")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxError, match="Docker engine is not reachable") as error:
        make_environment(Workspace(EnvConfig(backend="docker", image=DOCKER_IMAGE), str(repo)))
    assert "\n" not in str(error.value)


# -- docker specifics -----------------------------------------------------------------------


def tagged_containers(tag: str) -> list[str]:
    import docker

    client = docker.from_env()
    containers = client.containers.list(all=True, filters={"label": "swe-aci"})
    return [
        c.id for c in containers if f"SWE_ACI_TEST_TAG={tag}" in (c.attrs["Config"]["Env"] or [])
    ]


@pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker)], indirect=True
)
def test_docker_container_is_removed_on_close(open_env: OpenEnv) -> None:
    import docker

    env = open_env()
    container_id = env.container_id  # type: ignore[attr-defined]
    assert ok(env, "ls /sys/class/net") == "lo\n"
    env.close()
    env.close()
    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(container_id)
    with pytest.raises(SandboxError, match="closed"):
        env.run("true")


@pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker)], indirect=True
)
def test_docker_file_channel_is_replaced_when_it_dies(env: Environment) -> None:
    assert env.read_file(f"{env.repo_path}/a.txt") == b"alpha\n"
    ok(env, "pkill -f UNSUPPORTED && sleep 0.2")  # the file channel's loop (see FILE_LOOP)
    assert env.read_file(f"{env.repo_path}/a.txt") == b"alpha\n"
    env.write_file(f"{env.repo_path}/b.txt", b"beta\n")
    assert ok(env, "cat b.txt; pgrep -fc UNSUPPORTED") == "beta\n1\n"


@pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker)], indirect=True
)
def test_docker_missing_image_is_one_line(backend: str, repo: Path) -> None:
    config = EnvConfig(backend="docker", image="swe-aci/no-such-image:none")
    with pytest.raises(SandboxError, match="does not exist") as error:
        make_environment(Workspace(config, str(repo)))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker)], indirect=True
)
def test_docker_image_without_bash_is_one_line(backend: str, repo: Path) -> None:
    import docker

    client = docker.from_env()
    name = f"swe-aci/test-no-bash:{uuid.uuid4().hex[:12]}"
    container = client.containers.run(DOCKER_IMAGE, ["rm", "/usr/bin/bash"], detach=True)
    try:
        container.wait()
        container.commit(*name.split(":"))
    finally:
        container.remove(force=True)
    tag = uuid.uuid4().hex
    try:
        config = EnvConfig(backend="docker", image=name, env_vars={"SWE_ACI_TEST_TAG": tag})
        with pytest.raises(SandboxError, match="bash did not start") as error:
            make_environment(Workspace(config, str(repo)))
        assert "\n" not in str(error.value) and "not found" in str(error.value)
        assert tagged_containers(tag) == []
    finally:
        client.images.remove(name, force=True)


@pytest.fixture
def image_with_repo(backend: str, repo: Path) -> Iterator[str]:
    """An image holding the demo repository at /testbed: dirty, and owned by another user."""
    import docker

    client = docker.from_env()
    name = f"swe-aci/test-repo-in-image:{uuid.uuid4().hex[:12]}"
    container = client.containers.run(DOCKER_IMAGE, ["sleep", "infinity"], detach=True)
    try:
        subprocess.run(["docker", "cp", f"{repo}/.", f"{container.id}:/testbed"], check=True)
        dirty = "cd /testbed && echo dirty >> a.txt && touch new.txt && chown -R 1000:1000 ."
        assert container.exec_run(["bash", "-c", dirty]).exit_code == 0
        container.commit(*name.split(":"))
    finally:
        container.remove(force=True)
    yield name
    client.images.remove(name, force=True)


@pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker)], indirect=True
)
def test_docker_repo_already_in_the_image_is_reset(
    image_with_repo: str, repo: Path, open_env: OpenEnv
) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=repo, capture_output=True, text=True)
    env = open_env(
        source=None, commit=head.stdout.strip(), repo_in_image="/testbed", image=image_with_repo
    )
    assert env.repo_path == "/testbed" and env.base_commit == head.stdout.strip()
    assert ok(env, "git status --porcelain && test ! -x run.sh && cat a.txt") == "alpha\n"
    env.write_file("/testbed/a.txt", b"edited\n")
    assert "+edited" in env.submission().patch
    with pytest.raises(SandboxError, match="unknown commit"):
        open_env(source=None, commit="f" * 40, repo_in_image="/testbed", image=image_with_repo)
