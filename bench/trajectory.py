"""Trajectory writing cost: a 150-step episode whose every observation is ~100 KB.

The scripted model runs `cat big.txt` (a 99 KB file) 150 times, then submits, through the real
agent loop, ACI and local sandbox on the default config. Reported: the harness overhead per step
(time between two consecutive steps minus the command's own execution time: history processing,
templates, trajectory writing, its fdatasync) as the median and the maximum of steps 141-150, the trajectory's size on disk, the
bytes this process wrote (`wchar` of /proc/self/io) and its peak RSS. Targets: overhead under
10 ms at step 150 and a file under 35 MB (each observation twice, in its step and in its history
message, as SWE-agent's format has it: 2 x 150 x 99 KB; 16.6 MB when steps referred to the
history, 31.5 MB since).

    PYTHONPATH=src python3 bench/trajectory.py                 # this checkout
    PYTHONPATH=/work/main/src python3 bench/trajectory.py      # another checkout, for comparison
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from swe_aci.aci.interface import ACI
from swe_aci.agent.loop import Agent
from swe_aci.env.config import EnvConfig
from swe_aci.env.local import LocalEnvironment
from swe_aci.models.scripted import ScriptedModel
from swe_aci.trajectory.result import StepRecord

try:
    from swe_aci.episode import load_config
except ImportError:  # checkouts from before EpisodeConfig moved beside the episode
    from swe_aci.agent.config import load_config  # type: ignore[attr-defined,no-redef]

OBSERVATION_BYTES = 99_000  # under the sandbox's 100 000-byte output cap
LINE = "0123456789 " * 7 + "\n"


def act(command: str) -> str:
    return f"DISCUSSION\nLook again.\n```\n{command}\n```\n"


def written_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def make_repo(directory: Path) -> Path:
    repo = directory / "repo"
    repo.mkdir()
    (repo / "big.txt").write_text(LINE * (OBSERVATION_BYTES // len(LINE)))
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "big"],
    ):
        subprocess.run(command, cwd=repo, check=True)
    return repo


def run(steps: int) -> dict[str, float]:
    # the same command on purpose: no repeat limit
    limits = ["max_steps=0", "wall_time=0", "repeats.limit=0"]
    config = load_config(None, [f"agent.limits.{limit}" for limit in limits])
    marks: list[tuple[float, float]] = []

    def mark(step: StepRecord) -> None:
        marks.append((time.perf_counter(), step.execution_time))

    with tempfile.TemporaryDirectory(prefix="bench-trajectory-") as scratch:
        environment = LocalEnvironment(str(make_repo(Path(scratch))), config=EnvConfig())
        try:
            aci = ACI(environment, config.aci)
            model = ScriptedModel([act("cat big.txt")] * steps + [act("submit")])
            extra = {"environment": "local"}
            if "environment" not in inspect.signature(Agent).parameters:
                extra = {}
            agent = Agent(
                config.agent,
                model,
                aci,
                output_dir=Path(scratch) / "out",
                instance_id="bench",
                on_step=mark,
                **extra,
            )
            before = written_bytes()
            started = time.perf_counter()
            result = agent.run("Read big.txt again and again.")
            elapsed = time.perf_counter() - started
            written = written_bytes() - before
            size = sum(path.stat().st_size for path in agent.files.directory.iterdir())
        finally:
            environment.close()
    assert result.exit_status == "submitted", result.exit_status
    overheads = [
        (later - earlier) - executing
        for (earlier, _), (later, executing) in itertools.pairwise(marks)
    ]
    return {
        "overhead_ms": statistics.median(overheads[steps - 10 : steps]) * 1000,
        "max_overhead_ms": max(overheads[steps - 10 : steps]) * 1000,
        "first_overhead_ms": statistics.median(overheads[:10]) * 1000,
        "file_mb": size / 1e6,
        "written_mb": written / 1e6,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
        "elapsed_s": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    figures = run(args.steps)
    print(
        f"steps {args.steps}: harness overhead (median) {figures['first_overhead_ms']:.1f} ms/step "
        f"at steps 1-10, {figures['overhead_ms']:.1f} ms/step at steps {args.steps - 9}-"
        f"{args.steps} (max {figures['max_overhead_ms']:.1f}); outputs {figures['file_mb']:.1f} MB on disk; "
        f"{figures['written_mb']:.0f} MB written; peak RSS {figures['peak_rss_mb']:.0f} MB; "
        f"episode {figures['elapsed_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
