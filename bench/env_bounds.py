"""Bounds of host-side environment work against hostile files (issue 7, items 5 and 10).

Each case runs in its own process (so its peak RSS is its own) against a small repository:

- fifo:     `mkfifo p`, then read_file("p")             -> seconds until it returns or fails
- zero:     read_file("/dev/zero")                       -> seconds, peak RSS
- big-diff: the agent writes a 100 MB text file, then the submission is taken
            -> seconds, patch bytes, excluded files, peak RSS
- setup:    creating and closing the environment         -> seconds
- setup-unbounded: the same with `env.disk: null`, the baseline of what the disk bound costs
            (a host tmpfs as root; as an ordinary user, the holder process and git and bwrap
            entering its namespaces: run the script as that user, e.g. `runuser -u nobody --`)
- test-log: the evaluation harness reading back a test log the tests replaced (as
            tests/test_evaluate_harness.py's hostile logs do): a FIFO, a link to /dev/zero, a
            30 MB file (its last 20 MB kept)       -> seconds and bytes read of each, and ratios:
            the FIFO and /dev/zero against reading a 1 KB log (about 1x: no stall), the 30 MB
            file against the floor of the sandbox's shell reading the same 20 MB in one command

    PYTHONPATH=src python3 bench/env_bounds.py [--backends local,bwrap,docker] [--cases ...]

A case that does not finish within --limit seconds is reported as such (the process is killed),
so the script can also measure code without these bounds.
"""

from __future__ import annotations

import argparse
import json
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swe_aci.env.base import Environment

CASES = ["fifo", "zero", "big-diff", "setup", "setup-unbounded", "test-log"]
SETUPS = ("setup", "setup-unbounded")


def make_repo(root: Path) -> Path:
    repo = root / "demo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@l"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    return repo


def run_case(backend: str, case: str) -> dict[str, object]:
    from swe_aci.env import EnvConfig, Workspace, make_environment

    with tempfile.TemporaryDirectory(prefix="bench-env-") as scratch:
        repo = make_repo(Path(scratch))
        config = EnvConfig(backend=backend, image="swe-aci/base:bookworm")
        if case == "test-log":  # the room the harness gives a test log (harness._start_environment)
            from swe_aci.evaluate.harness import EVALUATION_OUTPUT_CAP

            config = config.model_copy(update={"output_cap": EVALUATION_OUTPUT_CAP})
        if case == "setup-unbounded":
            config = config.model_copy(update={"disk": None})
        started = time.monotonic()
        env = make_environment(Workspace(config, str(repo)))
        result: dict[str, object] = {"backend": backend, "case": case}
        try:
            if case in SETUPS:
                pass
            elif case == "fifo":
                env.run("mkfifo p")
                started = time.monotonic()
                result["outcome"] = _outcome(lambda: env.read_file("p"))
            elif case == "zero":
                started = time.monotonic()
                result["outcome"] = _outcome(lambda: env.read_file("/dev/zero"))
            elif case == "big-diff":
                env.run(
                    "yes 'a line of text in a big generated file' | head -c 100000000 > big.txt"
                )
                env.run("echo y = 2 >> pkg/mod.py")
                started = time.monotonic()
                submission = getattr(env, "submission", None)
                if submission is not None:
                    taken = submission()
                    result["patch_bytes"] = len(taken.patch.encode())
                    result["excluded"] = [e.path for e in taken.excluded]
                else:
                    result["patch_bytes"] = len(env.diff().encode())
            elif case == "test-log":
                started = time.monotonic()
                result.update(_test_logs(env))
        finally:
            result["seconds"] = round(time.monotonic() - started, 3)
            env.close()
        if case in SETUPS:
            result["seconds"] = round(time.monotonic() - started, 3)
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return result


def _test_logs(env: Environment) -> dict[str, object]:
    """Each hostile test log read back by the harness's reader, timed, with its baselines."""
    from swe_aci.evaluate.harness import MAX_LOG_BYTES, _read_log

    work = f"/tmp/swe-aci-bench-log-{secrets.token_hex(4)}"
    setups = {
        "small": f"head -c 1000 /dev/urandom | base64 -w0 | head -c 1000 > {work}/small",
        "fifo": f"mkfifo {work}/fifo",
        "zero": f"ln -s /dev/zero {work}/zero",
        "huge": f"head -c 30000000 /dev/zero | tr '\\0' x > {work}/huge",
    }
    seconds: dict[str, float] = {}
    read: dict[str, int] = {}
    env.run(f"mkdir -p {work}", timeout=30)
    try:
        for name, setup in setups.items():
            env.run(setup, timeout=60)
            started = time.monotonic()
            read[name] = len(_read_log(env, f"{work}/{name}").encode())
            seconds[name] = time.monotonic() - started
        started = time.monotonic()
        env.run(f"tail -c {MAX_LOG_BYTES} {work}/huge | md5sum", timeout=60)
        seconds["huge floor"] = time.monotonic() - started
    finally:
        env.run(f"rm -rf {work}", timeout=60)
    return {
        "bytes_read": read,
        "log_seconds": {name: round(value, 4) for name, value in seconds.items()},
        "ratios": {
            "fifo / small": round(seconds["fifo"] / seconds["small"], 2),
            "zero / small": round(seconds["zero"] / seconds["small"], 2),
            "huge / huge floor": round(seconds["huge"] / seconds["huge floor"], 2),
        },
    }


def _outcome(read: object) -> str:
    try:
        data = read()  # type: ignore[operator]
    except OSError as error:
        return f"{type(error).__name__}: {error.strerror}"
    return f"read {len(data)} bytes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="local,bwrap,docker")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a case is killed")
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(*args.one)))
        return
    for backend in args.backends.split(","):
        for case in args.cases.split(","):
            command = [sys.executable, __file__, "--one", backend, case]
            process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            timer = threading.Timer(args.limit, process.kill)
            timer.start()
            out, _ = process.communicate()
            timer.cancel()
            line = out.strip().splitlines()[-1] if out.strip() else ""
            if process.returncode != 0 or not line:
                line = json.dumps(
                    {
                        "backend": backend,
                        "case": case,
                        "outcome": f"killed or failed after {args.limit:g} s",
                    }
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()
