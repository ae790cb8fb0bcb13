"""What `--grading swebench` costs at start: the median wall time of fresh interpreters importing
swebench's log parsers (`swebench.harness.log_parsers.python`, what `parse_swebench` loads),
against a bare `python -c pass` and our lenient grading (`swe_aci.evaluate.grading`), measured
in the same run, and the modules each loads.

    python bench/swebench_import.py [--runs 5]

Each run is a new interpreter with this checkout's src/ first on PYTHONPATH; one unmeasured run
of each first warms the file cache and the bytecode.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "python -c pass": "pass",
    "lenient grading": "import swe_aci.evaluate.grading",
    "swebench parsers": "import swe_aci.evaluate.grading as g; g.swebench_log_parsers()",
}
COUNT = "; import sys; print(len(sys.modules))"


def wall_times(program: str, runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", program], env=env, check=True)
        times.append(time.perf_counter() - started)
    return times


def modules_loaded(program: str, env: dict[str, str]) -> int:
    result = subprocess.run(
        [sys.executable, "-c", program + COUNT], env=env, capture_output=True, text=True, check=True
    )
    return int(result.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    medians = {}
    for name, program in PROGRAMS.items():
        wall_times(program, 1, env)
        medians[name] = statistics.median(wall_times(program, args.runs, env))
    baseline = medians["python -c pass"]
    for name, program in PROGRAMS.items():
        print(
            f"{name:<18} median of {args.runs}: {medians[name] * 1000:8.1f} ms "
            f"({medians[name] / baseline:5.1f}x bare), {modules_loaded(program, env):5d} modules"
        )


if __name__ == "__main__":
    main()
