"""Task sets: SWE-bench rows (plus optional environment recipes) loaded from task files."""

from swe_aci.tasks.loading import RowProblem, TaskFileError, TaskSet, load_task, load_tasks
from swe_aci.tasks.models import Recipe, Source, Task

__all__ = [
    "Recipe",
    "RowProblem",
    "Source",
    "Task",
    "TaskFileError",
    "TaskSet",
    "load_task",
    "load_tasks",
]
