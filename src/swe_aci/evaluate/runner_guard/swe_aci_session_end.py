"""swe-aci's pytest plugin for the evaluation (loaded through PYTEST_PLUGINS, from outside the
repository):

- when pytest's session has ended (its summary printed), print a line holding a secret the
  harness chose, so the log parser stops there and lines printed later (an `atexit` handler,
  `os._exit`) are no results;
- record each test's result, as pytest's own reports give it, in a file whose path the harness
  chose at random, opened before any test starts: a second channel the harness compares with the
  log (a patched reporter printing `PASSED <id>` changes the log, not this record). Only the
  outermost session records (pytest's own tests run inner sessions in the same process).

The secret and the path are read from files beside this module, which are then deleted: the
tests, which start after the plugins are loaded, cannot read them there. Any Python 3 (nothing
newer than 3.5).
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _take(name):
    """The content of a file beside this module, which is deleted; '' when there is none."""
    path = os.path.join(_HERE, name)
    try:
        with open(path) as stream:
            content = stream.read().strip()
        os.remove(path)
    except OSError:
        return ""
    return content


_MARK = _take("session_mark")
_RESULTS_PATH = _take("session_results")
try:
    # open for the process's life, before any test starts (the tests cannot find the path)
    _RESULTS = open(_RESULTS_PATH, "a") if _RESULTS_PATH else None  # noqa: SIM115
except OSError:
    _RESULTS = None
_RECORDING = []  # the one config whose reports are recorded: the first session's


class _Recorder:
    def __init__(self, config):
        self.config = config

    def pytest_runtest_logreport(self, report):
        status = _status(report)
        if status is None or _RESULTS is None:
            return
        try:
            test_id = self.config.cwd_relative_nodeid(report.nodeid)
        except Exception:
            test_id = report.nodeid
        _RESULTS.write(json.dumps([test_id, report.when, status]) + "\n")
        _RESULTS.flush()


def _status(report):
    """The status `pytest -rA` prints for this phase's report, None when it prints none."""
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            return "XPASS" if expected_failure else "PASSED"
        if report.failed:
            return "FAILED"
        return "XFAIL" if expected_failure else "SKIPPED"
    if report.failed:
        return "ERROR"
    if report.skipped:
        return "XFAIL" if expected_failure else "SKIPPED"
    return None


def pytest_configure(config):
    if _RESULTS is not None and not _RECORDING:
        _RECORDING.append(config)
        config.pluginmanager.register(_Recorder(config), "swe_aci_results_recorder")


def pytest_unconfigure(config):
    if _MARK:
        sys.stdout.write("\n" + _MARK + "\n")
        sys.stdout.flush()
