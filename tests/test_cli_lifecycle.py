"""`swe-aci run` as a process: signals end it like Ctrl-C (exit recorded, sandbox torn down,
exit 128+n), a kill leaves a readable trajectory, concurrent runs of one instance are refused,
unexpected errors fail the command, and what the sandbox prints cannot drive the terminal."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from env_helpers import DOCKER_IMAGE, skip_unavailable
from swe_aci.trajectory.store import load_trajectory

PLAIN = {"NO_COLOR": "1", "COLUMNS": "200"}


def act(command: str) -> str:
    return f"DISCUSSION\nNext.\n```\n{command}\n```\n"


class Run:
    """One `python -m swe_aci run` process on a scripted model, with its own TMPDIR."""

    def __init__(
        self,
        repo: Path,
        work: Path,
        instance_id: str,
        script: list[str],
        backend: str,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.tmpdir = work / f"tmp-{instance_id}"
        self.tmpdir.mkdir(exist_ok=True)
        self.directory = work / "out" / instance_id
        self.trajectory = self.directory / f"{instance_id}.traj"
        environment = {key: value for key, value in os.environ.items() if "COLOR" not in key}
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "swe_aci", "run", "--repo", str(repo), "--issue", "fix it",
                "--env", backend, "--model", "scripted", "--set",
                f"model.script={json.dumps(script)}", "--instance-id", instance_id,
                "--output-dir", str(work / "out"), *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment | PLAIN | {"TMPDIR": str(self.tmpdir)},
        )  # fmt: skip
        self.seen: set[int] = set()

    def descendants(self) -> set[int]:
        found, queue = set(), [self.process.pid]
        while queue:
            pid = queue.pop()
            try:  # the process may end while its threads are listed
                tasks = list(Path(f"/proc/{pid}/task").glob("*"))
            except FileNotFoundError:
                continue
            for task in tasks:
                try:
                    children = (task / "children").read_text().split()
                except OSError:
                    continue
                for child in map(int, children):
                    if child not in found:
                        found.add(child)
                        queue.append(child)
        self.seen |= found
        return found

    def wait_for(self, program: str, timeout: float = 60.0) -> None:
        """Until a descendant process runs `program`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid in self.descendants():
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if argv[0].decode(errors="replace") == program:
                        return
                except OSError:
                    continue
            assert self.process.poll() is None, self.process.communicate()
            time.sleep(0.05)
        raise AssertionError(f"no process ran {program!r}")

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        stdout, stderr = self.process.communicate(timeout=timeout)
        return self.process.returncode, stdout, stderr

    def alive(self) -> list[int]:
        """Processes of this run still alive (zombies of an exited parent are reaped by init)."""
        living = []
        for pid in self.seen:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                living.append(pid)
        return living

    def kill_leftovers(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        for pid in self.alive():
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def start(make_repo: Callable[..., Path], tmp_path: Path) -> Iterator[Callable[..., Run]]:
    repo = make_repo({"calc.py": "def add(a, b):\n    return a - b\n"})
    runs: list[Run] = []

    def begin(instance_id: str, script: list[str], backend: str = "local", *extra: str) -> Run:
        runs.append(Run(repo, tmp_path, instance_id, script, backend, extra))
        return runs[-1]

    yield begin
    for run in runs:
        run.kill_leftovers()


def sandboxes(run: Run) -> list[str]:
    return [path.name for path in run.tmpdir.iterdir() if path.name.startswith("swe-aci-")]


@pytest.mark.parametrize(
    ("backend", "signum"),
    [
        ("local", signal.SIGTERM),
        ("local", signal.SIGHUP),
        ("local", signal.SIGINT),
        pytest.param(
            "bwrap",
            signal.SIGTERM,
            marks=pytest.mark.skipif(
                shutil.which("bwrap") is None, reason="bubblewrap is not installed"
            ),
        ),
    ],
)
def test_a_signal_records_the_exit_tears_the_sandbox_down_and_exits_128_plus_n(
    start: Callable[..., Run], backend: str, signum: signal.Signals
) -> None:
    run = start("sig", [act("echo first"), act("sleep 30"), act("submit")], backend)
    run.wait_for("sleep")
    assert sandboxes(run)  # the sandbox exists while the episode runs
    run.process.send_signal(signum)
    code, _, stderr = run.finish()
    assert code == 128 + signum, stderr
    assert stderr.endswith(
        f"\nerror: interrupted by {signum.name}; the trajectory so far was saved\n"
    )
    assert stderr.startswith("turn 1: waiting for the model")  # before it: the progress lines
    assert stderr.count("error") == 1
    trajectory = load_trajectory(run.trajectory)
    assert trajectory["info"]["exit_status"] == "exit_interrupted"
    assert trajectory["info"]["exit_signal"] == signum.name
    assert [step["action"] for step in trajectory["trajectory"]] == [
        "echo first\n",
        "exit_interrupted",
    ]
    assert sorted(path.name for path in run.directory.iterdir()) == ["sig.traj"]
    assert sandboxes(run) == []
    time.sleep(0.2)  # for init to reap what the run's exit orphaned
    assert run.alive() == []  # the shell and its `sleep` are gone


@pytest.mark.docker
def test_sigterm_removes_the_episode_container(start: Callable[..., Run]) -> None:
    skip_unavailable("docker")
    import docker

    client = docker.from_env()
    tag = f"SWE_ACI_TEST_RUN={uuid.uuid4().hex}"
    key, value = tag.split("=")
    extra = ("--image", DOCKER_IMAGE, "--set", f"env.env_vars={{{key}: {value}}}")
    run = start("sig", [act("echo first"), act("sleep 30"), act("submit")], "docker", *extra)

    def ours() -> list[str]:
        containers = client.containers.list(all=True, filters={"label": "swe-aci"})
        return [c.name for c in containers if tag in (c.attrs["Config"]["Env"] or [])]

    deadline = time.monotonic() + 120
    journal = run.trajectory.with_name("sig.traj.jsonl")
    while not (journal.exists() and len(journal.read_text().splitlines()) >= 2):
        assert time.monotonic() < deadline and run.process.poll() is None
        time.sleep(0.1)
    time.sleep(0.5)  # into `sleep 30`
    assert ours()
    run.process.send_signal(signal.SIGTERM)
    code, _, stderr = run.finish()
    assert code == 128 + signal.SIGTERM, stderr
    assert load_trajectory(run.trajectory)["info"]["exit_status"] == "exit_interrupted"
    assert ours() == []


def test_after_a_kill_the_finished_steps_are_readable(
    start: Callable[..., Run],
) -> None:
    run = start("killed", [act("echo first"), act("sleep 30"), act("submit")])
    run.wait_for("sleep")
    run.process.kill()
    run.finish()
    trajectory = load_trajectory(run.trajectory)  # read from the journal the run left
    assert [step["action"] for step in trajectory["trajectory"]] == ["echo first\n"]
    assert "first" in trajectory["trajectory"][0]["observation"]
    assert trajectory["info"]["exit_status"] is None


def test_a_second_run_of_the_same_instance_is_refused_while_the_first_runs(
    start: Callable[..., Run],
) -> None:
    first = start("same", [act("sleep 30"), act("submit")])
    first.wait_for("sleep")
    second = start("same", [act("submit")])
    code, _, stderr = second.finish()
    assert code == 2
    assert stderr.startswith("error: another run is writing ")
    assert len(stderr.splitlines()) == 1
    assert first.process.poll() is None  # untouched
    first.process.send_signal(signal.SIGTERM)
    assert first.finish()[0] == 128 + signal.SIGTERM


def test_an_unexpected_error_fails_the_command_with_its_traceback_kept(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"calc.py": "x = 1\n"})
    process = subprocess.run(
        [
            sys.executable, "-m", "swe_aci", "run", "--repo", str(repo), "--issue", "fix it",
            "--env", "local", "--model", "scripted", "--set",
            f"model.script={json.dumps([act('echo hi'), act('submit')])}",
            "--set", "agent.templates.next_step='{{ observation }}{{ 1 // 0 }}'",
            "--instance-id", "broken", "--output-dir", str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=os.environ | PLAIN,
    )  # fmt: skip
    assert process.returncode == 1
    trajectory = load_trajectory(tmp_path / "out" / "broken" / "broken.traj")
    info = trajectory["info"]
    assert info["exit_status"] == "exit_error"
    assert info["error"] == "ZeroDivisionError: integer division or modulo by zero"
    assert info["traceback"].startswith("Traceback (most recent call last):")
    assert "ZeroDivisionError" in process.stderr and "Traceback" in process.stderr  # the log
    assert process.stderr.splitlines()[-1].startswith(
        "error: the episode ended on an unexpected error (ZeroDivisionError"
    )


def test_terminal_escape_sequences_from_the_sandbox_are_shown_escaped(
    start: Callable[..., Run],
) -> None:
    printing = act(r"printf '\033[2J\033]0;pwned\007red\n'")
    code, stdout, stderr = start("escapes", [printing, act("submit")]).finish()
    assert code == 3, stderr  # no patch
    assert "\x1b" not in stdout + stderr and "\x07" not in stdout + stderr
    assert r"\x1b[2J\x1b]0;pwned\x07red" in stdout
