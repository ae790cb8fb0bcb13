"""Running many items at once: one `Executor` protocol (`base.py`) with threads (`threads.py`)
and Ray (`ray.py`) beside each other, and the processes that must die with their owner
(`owned.py`). Knows nothing of what the items are: batch episodes, gradings and builds all run on
it."""
