"""swe-aci's pytest plugin for the evaluation (loaded through PYTEST_PLUGINS): when pytest's
session has ended (its summary printed), print a line holding a secret the harness chose, so the
log parser stops there and lines printed later (an `atexit` handler, `os._exit`) are no results.

The secret is read from a file beside this module, which is then deleted: the tests, which start
after the plugins are loaded, cannot read it there. Any Python 3 (nothing newer than 3.5).
"""

import os
import sys

_MARK_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "session_mark")
try:
    with open(_MARK_FILE) as _stream:
        _MARK = _stream.read().strip()
    os.remove(_MARK_FILE)
except OSError:
    _MARK = ""


def pytest_unconfigure(config):
    if _MARK:
        sys.stdout.write("\n" + _MARK + "\n")
        sys.stdout.flush()
