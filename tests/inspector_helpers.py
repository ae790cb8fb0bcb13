"""Run directories for the inspector tests, written through the real trajectory writer (so the
files have the stored layout: history references, long observations by reference), and a way to
serve them on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swe_aci.inspector.runs import discover
from swe_aci.inspector.server import make_server
from swe_aci.inspector.site import Site
from swe_aci.trajectory.store import TrajectoryWriter

PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
SENTINEL = "__inspector_pwned"
HOSTILE = (
    f"<script>window.{SENTINEL} = 1; alert('script')</script>"
    f"<img src=x onerror=\"window.{SENTINEL} = 2; alert('img')\">"
    "\x1b[31mred\x1b[0m NUL:\x00 end"
)


def episode_steps(actions: list[tuple[str, str]]) -> list[tuple[dict[str, Any], list[dict]]]:
    """(step, messages) pairs as the agent records them, with timing and tokens."""
    pairs = []
    for number, (action, observation) in enumerate(actions):
        messages = [
            {
                "role": "assistant",
                "content": f"thought {number}\n```\n{action}\n```",
                "thought": f"thought {number}",
                "action": action,
                "message_type": "action",
            },
            {"role": "user", "content": observation, "message_type": "observation"},
        ]
        step = {
            "thought": f"thought {number}",
            "action": action,
            "observation": observation,
            "response": messages[0]["content"],
            "state": {"open_file": "/repo/a.py", "working_dir": "/repo"},
            "execution_time": 0.01,
            "model_latency": 0.5,
            "input_tokens": 100,
            "output_tokens": 10,
            "cached_tokens": 0,
            "cost": 0.001,
        }
        pairs.append((step, messages))
    return pairs


def write_episode(
    run: Path,
    instance_id: str,
    actions: list[tuple[str, str]],
    *,
    exit_status: str | None = "submitted",
    submission: str = PATCH,
    finish: bool = True,
    problem: str = "x should be 2",
) -> Path:
    """An episode's trajectory through TrajectoryWriter; a journal only when not `finish`."""
    writer = TrajectoryWriter(run / instance_id / f"{instance_id}.traj")
    history = [
        {"role": "system", "content": "You are an agent.", "message_type": "system_prompt"},
        {"role": "user", "content": f"ISSUE:\n{problem}\n", "message_type": "instance"},
    ]
    header = {"environment": "local", "instance_id": instance_id, "problem_statement": problem}
    writer.start(header, history, {"exit_status": None})
    sent = [{k: v for k, v in m.items() if k in ("role", "content")} for m in history]
    for step, messages in episode_steps(actions):
        writer.append(messages, {**step, "query": list(sent)}, {"exit_status": None})
        sent += [{k: v for k, v in m.items() if k in ("role", "content")} for m in messages]
    if finish:
        info = {
            "exit_status": exit_status,
            "submission": submission,
            "model_stats": {
                "instance_cost": 0.01,
                "tokens_sent": 1000,
                "tokens_received": 50,
                "api_calls": len(actions),
            },
            "model_name": "scripted",
            "elapsed_time": 1.5,
        }
        writer.finish(info)
    return writer.path  # unfinished: only the journal, as a running episode leaves it


def write_batch_files(run: Path, results: dict[str, dict[str, Any]]) -> None:
    """results.json and preds.json as a batch writes them."""
    full = {
        key: {
            "instance_id": key,
            "exit_status": "submitted",
            "model_patch": PATCH,
            "model_name": "scripted",
            "cost": 0.01,
            "api_calls": 3,
            "steps": 3,
            "elapsed": 1.5,
            "error": None,
            "evaluation": None,
            **value,
        }
        for key, value in results.items()
    }
    (run / "results.json").write_text(json.dumps(full))
    preds = {
        key: {
            "instance_id": key,
            "model_name_or_path": "scripted",
            "model_patch": value["model_patch"],
        }
        for key, value in full.items()
    }
    (run / "preds.json").write_text(json.dumps(preds))


def write_evaluation(run: Path, outcomes: dict[str, str]) -> None:
    evaluation = run / "evaluation"
    for instance_id, outcome in outcomes.items():
        directory = evaluation / instance_id
        directory.mkdir(parents=True)
        status = {
            "FAIL_TO_PASS": {
                "success": ["tests/test_a.py::test_x"] if outcome == "resolved" else [],
                "failure": [] if outcome == "resolved" else ["tests/test_a.py::test_x"],
            },
            "PASS_TO_PASS": {"success": ["tests/test_a.py::test_keep"], "failure": []},
        }
        report = {
            instance_id: {
                "resolved": outcome == "resolved",
                "tests_status": status,
                "outcome": outcome,
                "message": "",
            }
        }
        (directory / "report.json").write_text(json.dumps(report))
        (directory / "test_output.txt").write_text(f"log of {instance_id} <b>bold?</b>\n")
    resolved = sorted(k for k, v in outcomes.items() if v == "resolved")
    report = {
        "resolved_ids": resolved,
        "unresolved_ids": sorted(k for k, v in outcomes.items() if v != "resolved"),
        "instances": {k: {"outcome": v, "message": ""} for k, v in outcomes.items()},
    }
    (evaluation / "report.json").write_text(json.dumps(report))


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every path under `root` with its mode, mtime and content digest."""
    state = {}
    for path in sorted(root.rglob("*")):
        status = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        state[str(path.relative_to(root))] = (status.st_mode, status.st_mtime_ns, digest)
    return state


@contextmanager
def serving(paths: list[Path], **site: Any) -> Iterator[tuple[str, int]]:
    """The inspector over `paths` on 127.0.0.1 in a thread: (host, port)."""
    server = make_server(Site(discover(paths), **site), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "127.0.0.1", server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def request(
    address: tuple[str, int], path: str, method: str = "GET", host: str | None = None
) -> tuple[int, dict, bytes]:
    """One request with the path sent exactly as given (no client-side normalisation)."""
    connection = http.client.HTTPConnection(*address, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", f"{address[0]}:{address[1]}" if host is None else host)
        connection.putheader("Content-Length", "0")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@contextmanager
def inspect_command(*paths: Path) -> Iterator[str]:
    """`swe-aci inspect PATHS` as a subprocess (this checkout's code): the line it prints first,
    the URL; the process is stopped at the end."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "swe_aci", "inspect", *map(str, paths)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert re.search(r"http://", line), line + (process.stderr.read() if process.stderr else "")
        yield line
    finally:
        process.terminate()
        process.wait(10)
