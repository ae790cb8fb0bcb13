"""Running the task's test command so that a prediction cannot change which runner runs, and
reading back only what that runner reported.

The guard (`runner_guard/`, written into the evaluation's private directory in the sandbox, first
on PYTHONPATH) makes every Python the tests start take `sitecustomize`/`usercustomize` and the
test runner's modules from the interpreter's installation only, never from the repository (see
its docstring). For pytest rows a plugin of the guard prints a secret mark once pytest's session
has ended; the log is read up to the last mark, so what is printed after pytest's summary (an
`atexit` handler that prints `PASSED ...` lines and calls `os._exit(0)`) is not a result, and a
log without the mark (the session never ended) cannot be graded resolved. The same plugin records
each test's result as pytest reported it in a file at a random path in the evaluation's directory,
which the tests cannot list (`results_record.py` compares it with the log).
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from swe_aci.env.base import Environment
from swe_aci.evaluate.integrity import RUNNER_MODULES

GUARD_SOURCE = Path(__file__).parent / "runner_guard"
GUARD_FILES = ("sitecustomize.py", "swe_aci_session_end.py")
SESSION_END_PLUGIN = "swe_aci_session_end"
MARK_FILE = "session_mark"
RESULTS_FILE = "session_results"
PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class GuardedRun:
    """The shell prefix that activates the guard, the mark the log is cut at and the path of
    pytest's own record of the results (pytest rows)."""

    prefix: str
    mark: str | None
    results: str | None = None


def install_guard(env: Environment, work: str, log_parser: str) -> GuardedRun:
    """Write the guard into `work/guard` in the sandbox; call before the prediction is applied
    (the runner modules the repository itself provides at its base are not guarded: the tests of
    pytest's own repository run its own pytest)."""
    directory = f"{work}/guard"
    for name in GUARD_FILES:
        env.write_file(f"{directory}/{name}", (GUARD_SOURCE / name).read_bytes())
    variables = {"PYTHONPATH": _prepended(directory, "PYTHONPATH", ":")}
    mark = results = None
    if log_parser == "pytest":
        mark = f"=== swe-aci: end of the pytest session {secrets.token_hex(16)} ==="
        env.write_file(f"{directory}/{MARK_FILE}", mark.encode("ascii"))
        results = f"{work}/results-{secrets.token_hex(16)}.jsonl"
        env.write_file(f"{directory}/{RESULTS_FILE}", results.encode("ascii"))
        guarded = sorted(RUNNER_MODULES - _base_modules(env))
        variables["SWE_ACI_RUNNER_MODULES"] = shlex.quote(",".join(guarded))
        variables["PYTEST_PLUGINS"] = _prepended(SESSION_END_PLUGIN, "PYTEST_PLUGINS", ",")
    exports = " ".join(f"{name}={value}" for name, value in variables.items())
    return GuardedRun(prefix=f"export {exports}", mark=mark, results=results)


def session_log(log: str, mark: str | None) -> str | None:
    """The part of the log the test runner reported: up to its last end-of-session mark. None
    when a mark was expected and is not there (pytest's session did not end)."""
    if mark is None:
        return log
    end = log.rfind(mark)
    return None if end < 0 else log[:end]


def _prepended(value: str, variable: str, separator: str) -> str:
    """Shell text for `value` before the variable's current value, if it has one."""
    return f'{shlex.quote(value)}"${{{variable}:+{separator}${variable}}}"'


def _base_modules(env: Environment) -> set[str]:
    """Top-level module names at the repository's root and under src/, as it is now."""
    listing = env.run(
        f"cd {shlex.quote(env.repo_path)} && ls -A . src 2>/dev/null", timeout=PROBE_TIMEOUT
    )
    names = {line.strip().removesuffix(".py") for line in listing.output.splitlines()}
    return names & RUNNER_MODULES
