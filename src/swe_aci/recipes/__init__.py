"""Environments for tasks: what each row needs on the configured backend (a prebuilt image, the
official SWE-bench image, or one built from the row's recipe), cached by recipe hash."""

from swe_aci.recipes.environment import TaskEnvironment, task_environment
from swe_aci.recipes.errors import RecipeError

__all__ = ["RecipeError", "TaskEnvironment", "task_environment"]
