"""How long `swe-aci --help` takes: the median wall time of fresh processes, against a bare
`python -c pass` measured in the same run (target: the help under 0.2 s).

    python bench/cli_help.py [--runs 10] [--compare-src OTHER/src]

Each run is a new interpreter with this checkout's src/ first on PYTHONPATH, as the installed
`swe-aci` entry point (`swe_aci.cli:main`) starts. It also lists the swe_aci modules the help
loaded: only `swe_aci.cli.*` may be there. `--compare-src` also times another checkout's src/
(e.g. main's) in the same run.
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
HELP = "import sys; sys.argv = ['swe-aci', '--help']; from swe_aci.cli import main; main()"
LOADED = (
    "import sys; sys.argv = ['swe-aci', '--help']\n"
    "from swe_aci.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print(' '.join(sorted(m for m in sys.modules if m.startswith('swe_aci.'))), file=sys.stderr)"
)
TARGET = 0.2


def wall_times(program: str, runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", program], env=env, stdout=subprocess.DEVNULL, check=False
        )
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--compare-src", type=Path, default=None)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    wall_times(HELP, 1, env)  # warm the file cache and the bytecode
    baseline = statistics.median(wall_times("pass", args.runs, env))
    help_time = statistics.median(wall_times(HELP, args.runs, env))
    loaded = subprocess.run(
        [sys.executable, "-c", LOADED], env=env, capture_output=True, text=True, check=False
    ).stderr.split()
    below = [module for module in loaded if not module.startswith("swe_aci.cli")]
    print(f"python -c pass   median of {args.runs}: {baseline * 1000:7.1f} ms")
    print(
        f"swe-aci --help   median of {args.runs}: {help_time * 1000:7.1f} ms "
        f"({help_time / baseline:.1f}x the bare interpreter; target < {TARGET * 1000:.0f} ms: "
        f"{'met' if help_time < TARGET else 'MISSED'})"
    )
    print(f"swe_aci modules loaded: {len(loaded)}, below the CLI: {below or 'none'}")
    if args.compare_src is not None:
        other_env = {**os.environ, "PYTHONPATH": str(args.compare_src)}
        wall_times(HELP, 1, other_env)
        other = statistics.median(wall_times(HELP, args.runs, other_env))
        print(
            f"{args.compare_src}: --help median {other * 1000:7.1f} ms "
            f"({other / baseline:.1f}x the bare interpreter, {other / help_time:.1f}x this one)"
        )


if __name__ == "__main__":
    main()
