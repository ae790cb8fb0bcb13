"""swe-aci's guard for the evaluation's test command (first on PYTHONPATH, so `site` loads it
instead of any `sitecustomize` the repository holds).

- `sitecustomize` and `usercustomize` only come from the interpreter's own paths (not from
  PYTHONPATH or the current directory): the environment's own one still runs, the repository's
  never does.
- The test runner's modules named in SWE_ACI_RUNNER_MODULES (pytest, _pytest, pluggy...) only come
  from the interpreter's own paths or the finders its installation registered (an editable
  install), never from a `pytest.py` in the repository, however the import path is set up
  (`python -m pytest` puts the current directory first, PYTHONPATH holds the repository).

It runs in every Python the tests start, on any Python 3, so it uses nothing newer than 3.5.
"""

import os
import sys
from importlib.machinery import PathFinder
from importlib.util import module_from_spec

_HERE = os.path.dirname(os.path.abspath(__file__))
_FROM_ENVIRONMENT = {
    os.path.abspath(entry) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
}
_TRUSTED = [
    entry
    for entry in sys.path
    if entry and os.path.abspath(entry) not in _FROM_ENVIRONMENT and os.path.abspath(entry) != _HERE
]
_STARTUP = {"sitecustomize", "usercustomize"}
_RUNNER = {name for name in os.environ.get("SWE_ACI_RUNNER_MODULES", "").split(",") if name}


class _TrustedFinder:
    """Finds the guarded top-level modules on the trusted paths only."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if path is not None or (name not in _STARTUP and name not in _RUNNER):
            return None
        spec = PathFinder.find_spec(name, _TRUSTED)
        if spec is not None:
            return spec
        if name in _RUNNER:
            for finder in sys.meta_path:
                if finder is cls or finder is PathFinder or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, None, target)
                if spec is not None:
                    return spec
        raise ImportError("No module named " + repr(name) + " (swe-aci's guard)", name=name)


def _run_own_sitecustomize():
    spec = PathFinder.find_spec("sitecustomize", _TRUSTED)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    spec.loader.exec_module(module)


sys.meta_path.insert(0, _TrustedFinder)
_run_own_sitecustomize()
