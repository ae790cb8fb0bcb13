"""How a batch run is recorded: the config as `run.yaml` stores it and its hash (the guard against
mixing configs in one output directory), the version that ran, and `batch.log`."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swe_aci.episode import EpisodeConfig
    from swe_aci.tasks import TaskSet

BATCH_LOGGER = "swe_aci.batch"


@dataclass(frozen=True)
class RunRecord:
    """What a run says of itself in `run.yaml` (and `comparison.json`): the command line, the task
    file (absolute) and its hash, the selection made from it and how many instances it gave."""

    command: list[str]
    task_file: str
    task_file_sha256: str
    selection: dict[str, Any] = field(default_factory=dict)
    instances: int = 0

    @classmethod
    def of(cls, task_source: str, task_set: TaskSet, **selection: Any) -> RunRecord:
        """The record of this process's run over `task_set`, read from `task_source` with the
        options given in `selection` (filter, slice, ...), in the order given."""
        return cls(
            command=list(sys.argv),
            task_file=str(Path(task_source).expanduser().resolve()),
            task_file_sha256=task_set.source_hash,
            selection=selection,
            instances=len(task_set.tasks),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def config_record(config: EpisodeConfig) -> tuple[dict[str, Any], str]:
    """The config as run.yaml stores it (secrets masked) and its hash."""
    data = config.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    return data, digest


def swe_aci_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swe-aci")
    except PackageNotFoundError:
        return "unknown"


def open_batch_log(path: Path) -> logging.Handler:
    """Send the batch's log records to `path` (close with `close_batch_log`)."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger(BATCH_LOGGER)
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return handler


def close_batch_log(handler: logging.Handler) -> None:
    logging.getLogger(BATCH_LOGGER).removeHandler(handler)
    handler.close()
