"""Running a test made from an issue against versions of the module it tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def exit_codes(directory: Path, test: str, module: str, versions: list[str]) -> list[int]:
    """pytest's exit code on the test module `test` with each version of `module`; no bytecode
    is written, since two versions of the same size written within one second would otherwise
    share a cached `.pyc` (its key is the source's size and mtime in seconds)."""
    codes = []
    for version in versions:
        (directory / f"{module}.py").write_text(version)
        (directory / "test_issue.py").write_text(test)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_issue.py"],
            cwd=directory,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(directory), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        codes.append(run.returncode)
    return codes
