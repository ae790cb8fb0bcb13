"""The `docker` backend: the container (`environment.py`), the repository put in it
(`repository.py`), every process exec'd in it (`exec.py`: the stream and `run_exec` for helpers;
`shell.py`: the shell; `file_channel.py`: the file channel) and the archive API (`archive.py`)."""
