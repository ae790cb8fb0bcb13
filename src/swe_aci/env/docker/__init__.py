"""The `docker` backend: the container (`environment.py`) and every process exec'd in it
(`exec.py`: the shell, the file channel and one bounded helper for short commands)."""
