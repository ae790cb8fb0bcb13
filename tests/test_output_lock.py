"""The one directory lock (`records.OutputLock`): a command's output directory and an episode's
instance directory are locked the same way, with no file added, and a second holder is refused
with one line naming the first one's pid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swe_aci.records import OutputLock, OutputLockError


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    directory = tmp_path / "out" / "one"
    with OutputLock.instance(directory):
        with pytest.raises(OutputLockError) as refused:
            OutputLock.acquire(directory, "evaluate")
        assert str(refused.value) == (
            f"another run is writing {directory} (pid {os.getpid()}): wait for it to end, or "
            "give evaluate another --output-dir"
        )
        with pytest.raises(OutputLockError, match="choose another --output-dir or --instance-id"):
            OutputLock.instance(directory)
        assert list(directory.iterdir()) == []  # no lock file
    with OutputLock.acquire(directory, "evaluate"):  # released: taken again
        pass


def test_an_instance_lock_removes_the_directories_it_created_if_left_empty(tmp_path: Path) -> None:
    with OutputLock.instance(tmp_path / "out" / "empty"):
        pass
    assert not (tmp_path / "out").exists()
    with OutputLock.instance(tmp_path / "out" / "written"):
        (tmp_path / "out" / "written" / "x.traj").write_text("{}")
    assert (tmp_path / "out" / "written" / "x.traj").exists()
    with OutputLock.acquire(tmp_path / "run", "batch"):  # a command's directory stays
        pass
    assert (tmp_path / "run").is_dir()
