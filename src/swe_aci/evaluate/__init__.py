"""Evaluation: run each task's tests with a predicted patch applied and grade it as SWE-bench does."""

from swe_aci.evaluate.harness import evaluate_all, evaluate_instance
from swe_aci.evaluate.report import InstanceReport

__all__ = ["InstanceReport", "evaluate_all", "evaluate_instance"]
