"""How the grading's work grows with the length of one line of a test log: a log is written by
the tests of the patch being graded (untrusted), so a parser or an id normaliser whose work
grows faster than the line (a backtracking regex) lets a prediction hold the harness for hours
with one long line (a 10 MB parametrized id held it for over ten minutes before 2026-12-07).

    python bench/parser_growth.py [--length 20000]

Per parser, and for grading's id normalising and matching: the seconds for lines of `length`
and of 4 x `length` characters, and their ratio (about 4: linear; about 16: quadratic).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from swe_aci.evaluate.grading import normalise_statuses, resolve_id
from swe_aci.evaluate.parsers import PARSERS, TestStatus

GROWTH = 4


def adversarial_log(length: int) -> str:
    """Lines each parser's patterns look for, each one long and left unterminated where a
    pattern would backtrack: an id with `[` and no `]`, a ` ... ` result with no status, a
    `.py:` header with no end, an `_` run, status words and separators repeated."""
    run = "a" * length
    lines = [
        f"PASSED tests/test_a.py::test_x[{run}",
        f"FAILED tests/test_a.py::test_y[{'[' * length} - message",
        f"test_z (module.Class) {' .' * (length // 2)}",
        f"{'_' * length} {run}.py:{run} ",
        f"--- FAIL: {run}",
        f"ok {' ' * length}x",
        f"test {run} ... {'.' * length}",
        "[" * length,
        ":" * length,
        " - " * (length // 3),
    ]
    return "\n".join(lines) + "\n"


def seconds(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=20000)
    args = parser.parse_args()
    lengths = (args.length, args.length * GROWTH)
    logs = [adversarial_log(length) for length in lengths]
    ids = [
        {f"tests/test_a.py::test_x[{'a' * length}": TestStatus.PASSED for _ in range(1)}
        for length in lengths
    ]
    checks: dict[str, list[Callable[[], object]]] = {
        f"parse {name}": [lambda parse=parse, log=log: parse(log) for log in logs]
        for name, parse in sorted(PARSERS.items())
    }
    checks["normalise ids (pytest)"] = [
        lambda statuses=statuses: normalise_statuses("pytest", statuses) for statuses in ids
    ]
    checks["resolve id"] = [
        lambda statuses=statuses: resolve_id(next(iter(statuses)) + "[", statuses)
        for statuses in ids
    ]
    print(f"| check | {lengths[0]} chars | {lengths[1]} chars | ratio |")
    print("|---|---|---|---|")
    for name, (short, long) in checks.items():
        first, second = seconds(short), seconds(long)
        print(f"| {name} | {first:.4f} s | {second:.4f} s | {second / max(first, 1e-6):.1f} |")


if __name__ == "__main__":
    main()
