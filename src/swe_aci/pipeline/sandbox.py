"""What the pipeline does in the sandbox: swap a file's text in and out, and run tests there.

Test runs go through the environment's shell with a timeout; their `-rA` summary is read with
the evaluation's pytest parser. The reproduction test lives under `.git/` of the sandbox's
repository, so it never enters the diff, and is removed at the end.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from swe_aci.env.base import Environment
from swe_aci.evaluate.parsers import StatusMap, TestStatus, parse_pytest

REPRODUCTION_FILE = ".git/swe-aci-pipeline/test_swe_aci_reproduction.py"
PASSING = (TestStatus.PASSED, TestStatus.XFAIL)
# A reproduction failing on these at the base tests nothing of the issue.
BROKEN_TEST = re.compile(
    r"\b(ImportError|ModuleNotFoundError|NameError|SyntaxError|IndentationError|fixture)\b"
)
OUTPUT_TAIL = 1500


@dataclass(frozen=True)
class TestRun:
    statuses: StatusMap
    output: str
    timed_out: bool

    __test__ = False  # not a pytest class

    @property
    def passed(self) -> set[str]:
        return {test for test, status in self.statuses.items() if status in PASSING}

    def of(self, file: str) -> set[str]:
        """The ids of the tests of `file` that ran."""
        name = posixpath.basename(file)
        return {test for test in self.statuses if posixpath.basename(test.split("::")[0]) == name}

    def tail(self) -> str:
        return self.output[-OUTPUT_TAIL:]


class Sandbox:
    """The pipeline's view of the environment: files by repository path, and test runs."""

    def __init__(self, env: Environment, test_command: str, timeout: float) -> None:
        self.env = env
        self.test_command = test_command
        self.timeout = timeout

    def path(self, relative: str) -> str:
        return posixpath.join(self.env.repo_path, relative)

    def write(self, relative: str, text: str) -> None:
        self.env.write_file(self.path(relative), text.encode("utf-8", "surrogateescape"))

    def run_tests(self, files: list[str]) -> TestRun:
        quoted = " ".join(shlex.quote(self.path(file)) for file in files)
        root = shlex.quote(self.env.repo_path)
        command = f"cd {root} && {self.test_command} --rootdir {root} {quoted}"
        result = self.env.run(command, timeout=self.timeout)
        return TestRun(parse_pytest(result.output), result.output, result.timed_out)

    def write_reproduction(self, test: str) -> None:
        self.write(REPRODUCTION_FILE, test)

    def run_reproduction(self) -> TestRun:
        return self.run_tests([REPRODUCTION_FILE])

    def remove_reproduction(self) -> None:
        directory = shlex.quote(posixpath.dirname(self.path(REPRODUCTION_FILE)))
        self.env.run(f"rm -rf {directory}", timeout=30)


def fails_as_reproduction(run: TestRun) -> str | None:
    """None when the run shows the issue (a test failed, none broke); else why it does not."""
    statuses = set(run.statuses.values())
    if run.timed_out:
        return "the test timed out"
    if TestStatus.ERROR in statuses or not statuses:
        return "the test did not run (collection or fixture error)"
    if TestStatus.FAILED not in statuses:
        return "the test passes at the base: it does not show the issue"
    failures = [line for line in run.output.splitlines() if line.startswith(("FAILED ", "E "))]
    if any(BROKEN_TEST.search(line) for line in failures):
        return "the test fails on an import or name error, not on the issue"
    return None
