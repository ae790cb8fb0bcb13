"""What the pipeline does in the sandbox: run tests on the base or on one candidate's edit, each
run from a clean tree and its changes discarded.

Test runs go through the environment's shell with a timeout; their short summary is read with
the evaluation's pytest parser. A reproduction test lives under `.git/` of the sandbox's
repository, so it never enters the diff, and is removed at the end. Before and after every run
the working tree is put back to the base commit (tracked files reset, new files removed, new
ignored files too), so what a test writes (a file, a line appended to a source file, emptied
tests, a marker for its next run) never reaches the next run or the submission.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
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
SCREEN_MARK = "swe-aci-screened"
SCREEN_RUN_SECONDS = 10
SCREENED = re.compile(rf"^{SCREEN_MARK} (\d{{1,4}}) (\d{{1,3}})$", re.MULTILINE)
SCREEN_OUTPUT = 200_000
MIN_RUN_SECONDS = 1.0
PLUGIN_OUTPUT = "SWE_ACI_PLUGIN_OUTPUT"


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


@dataclass(frozen=True)
class SuiteRun:
    """A run of a whole test suite by its own command: whether it passed (exit status 0 in
    time) and its output."""

    passed: bool
    output: str

    def tail(self) -> str:
        return self.output[-OUTPUT_TAIL:]


# git in the sandbox obeys none of the configuration a test could have written
GIT = (
    "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -c safe.directory='*' "
    "-c core.hooksPath=/dev/null -c core.fsmonitor=false"
)
EXTRAS = (
    "--others --exclude-standard --directory -z",
    "--others --ignored --exclude-standard --directory -z",
)


@dataclass(frozen=True)
class Plugin:
    """A pytest plugin module the sandbox writes under `.git/` (never part of the diff) and
    loads with `-p` for one run, told where to write what it found by PLUGIN_OUTPUT (the
    absolute path of the repository path `output`)."""

    directory: str
    module: str
    source: str
    output: str


class SandboxNotRestored(Exception):
    """The working tree could not be put back to the base commit."""


class Sandbox:
    """The pipeline's view of the environment: files by repository path, and test runs."""

    def __init__(
        self,
        env: Environment,
        test_command: str,
        timeout: float,
        time_left: Callable[[], float | None] | None = None,
    ) -> None:
        self.env = env
        self.test_command = test_command
        self.timeout = timeout
        self.time_left = time_left
        self._base_extras: set[str] | None = None

    def run_timeout(self) -> float:
        """A test run's limit: `timeout`, or the time left of the episode's budget when less
        (at least MIN_RUN_SECONDS): a candidate whose tests hang does not hold the episode past
        its budget for `timeout` per run."""
        left = self.time_left() if self.time_left is not None else None
        return self.timeout if left is None else max(MIN_RUN_SECONDS, min(self.timeout, left))

    def _extras(self) -> set[str]:
        """The ignored and untracked paths of the working tree (directories collapsed)."""
        root = shlex.quote(self.env.repo_path)
        listing = " && ".join(f"{GIT} ls-files {options}" for options in EXTRAS)
        result = self.env.run(f"cd {root} && {listing}", timeout=60)
        return {entry for entry in result.output.split("\0") if entry.strip()}

    def reset(self) -> None:
        """The working tree back to the base commit: tracked files as committed, files created
        since the first reset removed (those there before it, such as ignored build files,
        stay)."""
        if self._base_extras is None:
            self._base_extras = self._extras()
        root = shlex.quote(self.env.repo_path)
        base = shlex.quote(self.env.base_commit)
        result = self.env.run(f"cd {root} && {GIT} reset -q --hard {base}", timeout=60)
        if result.exit_code != 0:
            raise SandboxNotRestored(f"git reset failed: {result.output.strip()[-300:]}")
        new = sorted(self._extras() - self._base_extras)
        if new:
            quoted = " ".join(shlex.quote(entry.rstrip("/")) for entry in new)
            self.env.run(f"cd {root} && rm -rf -- {quoted}", timeout=60)

    def run_isolated(
        self,
        texts: dict[str, str],
        tests: dict[str, str],
        files: list[str],
        plugin: Plugin | None = None,
        statuses_only: bool = False,
        doctests: bool = False,
    ) -> TestRun:
        """`files` run on the base with `texts` (repository path -> text) written over it and
        the test files `tests` in place (and `plugin` loaded), from a clean tree; the tree is
        clean again after. `statuses_only`: no failure's traceback, only its summary line (the
        existing tests: what counts is which pass, and a candidate that breaks many would
        otherwise fill the output cap before the summary). `doctests`: the docstring examples
        of the modules among `files` run too."""
        self.reset()
        try:
            for path, text in {**texts, **tests}.items():
                self.write(path, text)
            if plugin is not None:
                self.write(f"{plugin.directory}/{plugin.module}.py", plugin.source)
            return self.run_tests(files, plugin, statuses_only, doctests)
        finally:
            self.reset()

    def path(self, relative: str) -> str:
        return posixpath.join(self.env.repo_path, relative)

    def write(self, relative: str, text: str) -> None:
        self.env.write_file(self.path(relative), text.encode("utf-8", "surrogateescape"))

    def run_tests(
        self,
        files: list[str],
        plugin: Plugin | None = None,
        statuses_only: bool = False,
        doctests: bool = False,
    ) -> TestRun:
        """pytest on `files`; with `plugin`, its module loaded (`-p`) from its directory."""
        quoted = " ".join(shlex.quote(self.path(file)) for file in files)
        if statuses_only:
            quoted = f"--tb=no {quoted}"
        if doctests:
            quoted = f"--doctest-modules {quoted}"
        root = shlex.quote(self.env.repo_path)
        command = f"{self.test_command} --rootdir {root} {quoted}"
        if plugin is not None:
            command = (
                f"(export {PLUGIN_OUTPUT}={shlex.quote(self.path(plugin.output))}; "
                f"export PYTHONPATH={shlex.quote(self.path(plugin.directory))}"
                f"${{PYTHONPATH:+:$PYTHONPATH}}; {self.test_command} -p {plugin.module} "
                f"--rootdir {root} {quoted})"
            )
        command = f"cd {root} && {command}"
        result = self.env.run(command, timeout=self.run_timeout())
        return TestRun(parse_pytest(result.output), result.output, result.timed_out)

    def run_suite(self, texts: dict[str, str], command: str) -> SuiteRun:
        """`command` from the repository root on the base with `texts` written over it, from a
        clean tree; the tree is clean again after."""
        self.reset()
        try:
            for path, text in texts.items():
                self.write(path, text)
            root = shlex.quote(self.env.repo_path)
            result = self.env.run(f"cd {root} && {command}", timeout=self.run_timeout())
            return SuiteRun(result.exit_code == 0 and not result.timed_out, result.output)
        finally:
            self.reset()

    def screen(
        self, path: str, texts: list[str], tests: dict[str, str], files: list[str]
    ) -> list[bool | None]:
        """Whether the test `files` pass with each of `texts` written at `path` in turn (None:
        not run before the time ran out), one test run of at most SCREEN_RUN_SECONDS each, in
        one shell command from a clean tree. A screen only: a test may change what the next
        run sees, so what passes here is validated again on a clean tree (`run_isolated`)."""
        if not texts:
            return []
        self.reset()
        directory = posixpath.join(posixpath.dirname(REPRODUCTION_FILE), "templates")
        try:
            for relative, text in tests.items():
                self.write(relative, text)
            for index, text in enumerate(texts):
                self.write(posixpath.join(directory, f"{index}.py"), text)
            root = shlex.quote(self.env.repo_path)
            target = shlex.quote(self.path(path))
            quoted = " ".join(shlex.quote(self.path(file)) for file in files)
            run = f"{self.test_command} --rootdir {root} {quoted}"
            loop = (
                f"cd {root} && for i in $(seq 0 {len(texts) - 1}); do "
                f"cp -f -- {shlex.quote(self.path(directory))}/$i.py {target} && "
                f"timeout -k 1 {SCREEN_RUN_SECONDS} sh -c {shlex.quote(run)} "
                ">/dev/null 2>&1 </dev/null; "
                f'echo "{SCREEN_MARK} $i $?"; done'
            )
            limit = len(texts) * (SCREEN_RUN_SECONDS + 2) + 10
            left = self.time_left() if self.time_left is not None else None
            result = self.env.run(loop, timeout=limit if left is None else min(limit, left))
        finally:
            self.env.run(f"rm -rf {shlex.quote(self.path(directory))}", timeout=30)
            self.reset()
        passed: list[bool | None] = [None] * len(texts)
        for match in SCREENED.finditer(result.output[-SCREEN_OUTPUT:]):
            index = int(match.group(1))
            if index < len(texts) and passed[index] is None:
                passed[index] = match.group(2) == "0"
        return passed

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
