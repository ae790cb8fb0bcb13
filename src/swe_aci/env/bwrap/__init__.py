"""The `bwrap` backend: the sandbox (`environment.py`), how bwrap is started (`launcher.py`),
the rlimits (`limits.py`) and the cgroup of each sandbox (`cgroups.py`, `cgroupfs.py`, v1, v2)."""
