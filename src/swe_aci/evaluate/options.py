"""How a set of predictions is graded: the one value `evaluate`, `batch --evaluate` and `compare`
pass down to each instance's grading."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_aci.evaluate.grading import GradingMode


@dataclass(frozen=True)
class GradingOptions:
    """`timeout`: seconds the tests of one instance may run; `workers`: instances graded at
    once; `redo`: instances with a saved report graded again; `cache_dir`: the recipe cache
    (None: the default); `mode`: the id rules (`grading.py`); `strict`: a prediction with
    integrity flags graded unresolved; `runs`: each instance graded that many times, its flaky
    tests marked."""

    timeout: float
    workers: int = 1
    redo: bool = False
    cache_dir: Path | None = None
    mode: GradingMode = "lenient"
    strict: bool = False
    runs: int = 1
