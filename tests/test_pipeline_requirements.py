"""What the `local` config needs is checked once, before any model loads; the local server stays
loaded between the episodes of a process."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import ClassVar

import pytest

from swe_aci.episode import load_config
from swe_aci.pipeline import requirements

ROOT = Path(__file__).resolve().parents[1]


def test_the_local_extra_brings_what_the_local_config_needs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    names = {requirement.split(">")[0].split("=")[0] for requirement in extras["local"]}
    assert {module for module, *_ in (requirements.LOCAL_RUNTIME, requirements.BM25)} <= names


def test_a_missing_package_is_one_line_before_any_instance_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from batch_helpers import generated_task_file
    from swe_aci.cli import app

    real = requirements.find_spec
    monkeypatch.setattr(
        requirements, "find_spec", lambda name: None if name == "bm25s" else real(name)
    )
    assert "bm25s (the pipeline's BM25 localization)" in (
        requirements.missing_packages(load_config("local").model, load_config("local").strategy)
        or ""
    )
    task_file = generated_task_file(tmp_path, 2)
    out = tmp_path / "out"
    script = json.dumps(["x"])
    batch = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app,
        ["batch", "--instances", str(task_file), "--env", "local", "--output-dir", str(out),
         "--config", "pipeline", "--set", "model.name=scripted", "--set", f"model.script={script}"],
    )  # fmt: skip
    assert batch.exit_code != 0
    assert (
        "missing packages: bm25s" in batch.output and "pip install 'swe-aci[local]'" in batch.output
    )
    assert "Traceback" not in batch.output and not (out / "preds.json").exists()


class FakeServer:
    """Stands in for the llama.cpp child (loading real weights takes seconds)."""

    started: ClassVar[list[str]] = []

    def __init__(self, options: dict, _timeout: float) -> None:
        self.options = options
        self.running = False

    def start(self) -> None:
        self.running = True
        FakeServer.started.append(self.options["model"])

    def alive(self) -> bool:
        return self.running

    def stop(self) -> None:
        self.running = False


def test_a_released_server_stays_loaded_for_the_next_episode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from swe_aci.models import local

    monkeypatch.setattr(local, "LocalServer", FakeServer)
    monkeypatch.setattr(local, "file_size", lambda _path: "1 B")
    FakeServer.started = []
    shared = local._SharedServers()
    first = shared.acquire({"model": "a.gguf"}, 1, say=lambda _: None)
    shared.release(first)
    again = shared.acquire({"model": "a.gguf"}, 1, say=lambda _: None)
    assert again is first and first.alive() and FakeServer.started == ["a.gguf"]
    shared.release(again)
    other = shared.acquire({"model": "b.gguf"}, 1, say=lambda _: None)
    assert not first.alive() and other.alive()  # one set of weights in memory at a time
