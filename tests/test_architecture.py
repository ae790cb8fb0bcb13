"""The dependency rule, enforced: every `swe_aci` import (lazy and typing-only ones included) goes
down the layer order of scripts/layers.py, no import cycle exists at run time, and
docs/architecture.md prints the layer block that order gives."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import layers  # noqa: E402


def test_the_layer_order_names_every_layer_once() -> None:
    assert len(set(layers.LAYERS)) == len(layers.LAYERS)
    found = {layers.layer_of(module) for module in layers.modules()}
    assert found == set(layers.LAYERS)


def test_no_import_goes_against_the_layer_order() -> None:
    assert layers.wrong_way_imports() == []


def test_no_import_cycle_at_run_time_or_for_typing() -> None:
    assert layers.cycles(layers.import_graph()) == []


def importers_of(layer: str) -> set[str]:
    """The modules outside `layer` that import a module of it (lazily or for typing too)."""
    return {
        module
        for module, targets in layers.import_graph().items()
        if layers.layer_of(module) != layer
        and any(layers.layer_of(target) == layer for target in targets)
    }


def test_only_the_strategy_registry_and_the_cli_import_the_agent_loop() -> None:
    outside = {module for module in importers_of("agent") if layers.layer_of(module) != "cli"}
    assert outside <= {"swe_aci.episode"}, sorted(outside)


@pytest.mark.parametrize("layer", ["pipeline", "inspector", "github"])
def test_these_layers_import_neither_the_agent_loop_nor_rag(layer: str) -> None:
    graph = layers.import_graph()
    reached = {
        target
        for module, targets in graph.items()
        if layers.layer_of(module) == layer
        for target in targets
        if layers.layer_of(target) in ("agent", "rag")
    }
    assert reached == set(), sorted(reached)


def loaded_after(program: str) -> list[str]:
    """The `swe_aci.*` modules a fresh interpreter holds after running `program`."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys\n{program}"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('swe_aci.'))))\n",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return result.stdout.split("\n")[-2].split()


def test_the_inspector_app_loads_at_most_60_modules() -> None:
    """The read-only inspector needs the records, not batch or a strategy."""
    loaded = ["swe_aci", *loaded_after("import swe_aci.inspector.app\n")]
    assert len(loaded) <= 60, loaded
    assert not [m for m in loaded if layers.layer_of(m) in ("batch", "pipeline", "agent", "rag")]


def test_every_strategy_type_has_a_registered_class_that_runs_on_the_frame() -> None:
    import typing

    from swe_aci.episode import STRATEGIES, StrategyConfig, strategy_for

    union = typing.get_args(typing.get_args(StrategyConfig)[0])
    sections = [typing.get_args(member)[0] for member in union]
    types = {typing.get_args(section.model_fields["type"].annotation)[0] for section in sections}
    assert types == set(STRATEGIES)
    for name in STRATEGIES:
        assert callable(strategy_for(name).run)


def test_the_scan_sees_lazy_and_typing_only_imports(tmp_path: Path) -> None:
    """The check must fail on the imports it is there to catch: a lazy one inside a function and
    one under TYPE_CHECKING, in a ground-floor module, reaching up to the CLI."""
    source = layers.PACKAGE / "records.py"
    known = layers.modules()
    planted = tmp_path / "records.py"
    planted.write_text(
        source.read_text(encoding="utf-8")
        + "\n\nif TYPE_CHECKING:\n    from swe_aci.batch.runner import BatchRunner\n"
        + "\n\ndef late() -> None:\n    from swe_aci.cli import common\n",
        encoding="utf-8",
    )
    found = {
        (target, typing_only)
        for target, typing_only, _ in layers.imported_modules("swe_aci.records", planted, known)
    }
    assert ("swe_aci.batch.runner", True) in found
    assert ("swe_aci.cli.common", False) in found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert layers.cycles(graph) == [{"a", "b", "c"}]


def test_the_architecture_doc_prints_the_generated_block() -> None:
    text = layers.DOC.read_text(encoding="utf-8")
    assert layers.doc_block(text) == layers.layer_block(), (
        "docs/architecture.md is stale: run python3 scripts/layers.py --write"
    )


def test_the_architecture_table_lists_the_layers_in_order() -> None:
    text = layers.DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE)
    assert [row.removesuffix(".py").removesuffix("/") for row in rows] == [
        layer for layer in layers.LAYERS if layer != "__main__"
    ]


@pytest.mark.parametrize("argv", [["--help"], []])
def test_the_help_loads_no_layer_below_the_cli(argv: list[str]) -> None:
    loaded = loaded_after(
        f"sys.argv = ['swe-aci', *{argv!r}]\n"
        "from swe_aci.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    assert loaded and all(module.startswith("swe_aci.cli") for module in loaded), loaded


def test_one_episode_runs_without_the_batch_layer() -> None:
    """`run` and `run --instance` open the task's workspace and run the episode themselves."""
    known = layers.modules()
    imported = {
        target
        for target, _, _ in layers.imported_modules(
            "swe_aci.cli.run", known["swe_aci.cli.run"], known
        )
    }
    assert "swe_aci.recipes" in imported and "swe_aci.episode" in imported
    assert not {module for module in imported if layers.layer_of(module) == "batch"}


def test_every_strategy_records_through_the_one_recorder() -> None:
    """The journal's writer and the predictions' writer are the recorder's business: no strategy
    holds its own copy of the episode frame."""
    writers = {"TrajectoryWriter", "write_predictions"}
    found = []
    for module, path in layers.modules().items():
        if layers.layer_of(module) == "trajectory":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("swe_aci."):
                found += [f"{module}: {a.name}" for a in node.names if a.name in writers]
    assert found == []
