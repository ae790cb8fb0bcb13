"""Workspaces for tasks: what each row needs on the configured backend (a prebuilt image, the
official SWE-bench image, or one built from the row's recipe), cached by recipe hash."""

from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.workspace import task_workspace

__all__ = ["RecipeError", "task_workspace"]
