"""Dynamic localization (pipeline/execution.py): the functions the failing reproduction executes,
recorded by a pytest plugin in the sandbox, read host-side as data, lead the repair targets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.pipeline.execution import PLUGIN, Executed, execution_order, read_executed
from swe_aci.pipeline.skeleton import locations
from test_pipeline_search import fenced, run

API = (
    "from pkg.parser import read_pairs\n\n\n"
    "def load(text):\n"
    '    """The settings of `text`, one `key=value` a line."""\n'
    "    return dict(read_pairs(text))\n\n\n"
    "def dump(settings):\n"
    '    return "\\n".join(f"{key}={value}" for key, value in settings.items())\n'
)
PARSER = (
    "def read_pairs(text):\n"
    "    for line in text.splitlines():\n"
    '        key, _, value = line.partition("=")\n'
    "        yield key, value\n\n\n"
    "def quoted(value):\n"
    "    return value[1:-1]\n\n\n"
    "DEFAULTS = dict(read_pairs('mode=fast'))\n"
)
TREE = {"pkg/__init__.py": "", "pkg/api.py": API, "pkg/parser.py": PARSER}
ISSUE = (
    "load keeps the spaces around keys and values\n\n"
    "`load('a = 1')` returns `{'a ': ' 1'}`, expected `{'a': '1'}`.\n"
)
FIX = fenced(
    "def read_pairs(text):\n"
    "    for line in text.splitlines():\n"
    '        key, _, value = line.partition("=")\n'
    "        yield key.strip(), value.strip()\n"
)
TEST = "from pkg.api import load\n\n\ndef test_spaces():\n    assert load('a = 1') == {'a': '1'}\n"


def executed_by_a_real_run(root: Path, tree: dict[str, str] = TREE, test: str = TEST) -> str:
    """What the plugin writes for a real pytest run of `test` in `root`."""
    commit_tree(root, {**tree, "tests/test_load.py": test})
    plugin = root / PLUGIN.directory
    plugin.mkdir(parents=True)
    (plugin / f"{PLUGIN.module}.py").write_text(PLUGIN.source)
    output = root / PLUGIN.output
    environment = {**os.environ, "PYTHONPATH": str(plugin), "SWE_ACI_PLUGIN_OUTPUT": str(output)}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PLUGIN.module, "-p", "no:cacheprovider",
         "tests/test_load.py"],
        cwd=root, env=environment, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    return output.read_text()


def test_the_plugin_records_what_a_failing_test_executes_at_import_and_in_the_test(
    tmp_path: Path,
) -> None:
    executed = read_executed(executed_by_a_real_run(tmp_path), TREE)
    # read_pairs runs at import (DEFAULTS) and in the test; quoted and dump never run
    assert executed.functions == {"pkg/api.py::load", "pkg/parser.py::read_pairs"}
    assert {"pkg/api.py", "pkg/parser.py"} <= executed.files
    assert not any(path.startswith("tests/") for path in executed.files)
    assert executed.in_tests == executed.functions  # the test calls both


# a module the package imports, whose function runs at import only: the issue's words are its
SPACES = (
    "def spaces_table():\n    return {'space': ' ', 'spaces around keys': '  '}\n\n\n"
    "SPACES = spaces_table()\n"
)
WITH_SPACES = {**TREE, "pkg/__init__.py": "from pkg import spaces\n", "pkg/spaces.py": SPACES}


# the package imported within the test, as a test made of the issue's example imports it
IMPORTING_TEST = (
    "def test_spaces():\n    from pkg.api import load\n\n    assert load('a = 1') == {'a': '1'}\n"
)


def test_what_runs_only_at_import_comes_after_what_the_test_calls(tmp_path: Path) -> None:
    """`spaces_table` runs when the package is imported (within the test), and the issue's
    words ("spaces around keys") rank it and its file's constant first; the test calls `load`
    and `read_pairs`, which come first."""
    record = executed_by_a_real_run(tmp_path, WITH_SPACES, IMPORTING_TEST)
    executed = read_executed(record, WITH_SPACES)
    assert "pkg/spaces.py::spaces_table" in executed.functions
    assert executed.in_tests == {"pkg/api.py::load", "pkg/parser.py::read_pairs"}
    dump = locations("pkg/api.py", API)[1]
    order = execution_order(ISSUE, [dump], executed, WITH_SPACES, limit=12)
    labels = [location.label for location in order]
    assert labels.index("pkg/parser.py::read_pairs") < labels.index("pkg/spaces.py::spaces_table")
    assert labels.index("pkg/api.py::load") < labels.index("pkg/spaces.py::SPACES")
    assert labels.index("pkg/parser.py::DEFAULTS") < labels.index("pkg/spaces.py::SPACES")
    # ranked by the issue's words alone, as before the test's calls were recorded
    alone = Executed(executed.files, executed.functions)
    labels = [location.label for location in execution_order(ISSUE, [dump], alone, WITH_SPACES, 12)]
    assert labels.index("pkg/spaces.py::spaces_table") < labels.index("pkg/parser.py::read_pairs")


def test_the_record_is_data_bounded_and_only_of_the_trees_source_files() -> None:
    tree = {**TREE, "tests/test_load.py": TEST}
    lines = [
        "/elsewhere/pkg/parser.py\t1\t0",  # an installed copy: its repository path
        "/elsewhere/pkg/parser.py\t1\t1",  # the same, called in a test too
        "/usr/lib/python3/json/__init__.py\t1\t1",  # not the tree's
        "tests/test_load.py\t4\t1",  # a test, not a target
        "pkg/api.py\tnot a number\t1",
        "pkg/api.py\t4\tyes",
        "pkg/api.py\t4",
        "pkg/api.py",
        "\t".join(["pkg/api.py"] * 3) + "\t4\t1",  # a name holding tabs: not the tree's
        "x" * 100_000 + "\t1\t1",
    ]
    executed = read_executed("\n".join(lines), tree)
    assert executed == Executed(
        frozenset({"pkg/parser.py"}),
        frozenset({"pkg/parser.py::read_pairs"}),
        frozenset({"pkg/parser.py::read_pairs"}),
    )


def test_the_localizers_choice_stays_first_then_what_runs_then_what_never_runs() -> None:
    load, dump = locations("pkg/api.py", API)
    read_pairs, quoted = locations("pkg/parser.py", PARSER)
    executed = Executed(
        frozenset({"pkg/api.py", "pkg/parser.py"}),
        frozenset({load.label, read_pairs.label}),
    )
    order = execution_order(ISSUE, [load, dump], executed, TREE, limit=12)
    labels = [location.label for location in order]
    assert labels[:2] == [load.label, read_pairs.label]
    assert "pkg/parser.py::DEFAULTS" in labels  # an assignment of a file the run goes through
    assert quoted.label not in labels  # a helper that never runs is no target
    assert labels[-1] == dump.label  # the localizer's candidate the run never reached: last
    # the localizer's choice leads only when the run reaches it
    order = execution_order(ISSUE, [dump, load], executed, TREE, limit=12)
    assert [location.label for location in order][-1] == dump.label


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_the_pipeline_repairs_a_helper_in_a_file_the_localizer_never_listed(
    tmp_path: Path, backend: str
) -> None:
    """The localizer lists one file (api.py: `load`, `dump`); the issue's test runs through
    parser.read_pairs, which becomes the second target and takes the fix."""
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    script = ["I do not know.", FIX]
    result, steps = run(
        tmp_path, script, ISSUE, "strategy.localize.files=1", f"env.backend={backend}",
        repo=repo,
    )  # fmt: skip
    assert steps["localize"]["pipeline"]["candidates"] == ["pkg/api.py::load", "pkg/api.py::dump"]
    followed = steps["follow the execution"]
    assert followed["pipeline"]["functions"] == ["pkg/api.py::load", "pkg/parser.py::read_pairs"]
    repairs = [action for action in steps if action.startswith("repair ")]
    assert repairs[:2] == [
        "repair 1/1 (T=0) pkg/api.py::load",
        "repair 1/1 (T=0) pkg/parser.py::read_pairs",
    ]
    assert result.exit_status == "submitted"
    assert "key.strip(), value.strip()" in result.submission
    assert "swe_aci_executed" not in result.submission


def test_a_run_that_leaves_no_record_keeps_the_localizers_targets(tmp_path: Path) -> None:
    """A test command that cannot load the plugin (it drops the PYTHONPATH that holds it):
    the targets stay."""
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    result, steps = run(
        tmp_path, ["I do not know."], ISSUE, "strategy.localize.files=1",
        "strategy.validation.test_command='env -u PYTHONPATH python -m pytest -q -p no:cacheprovider -rA'",
        repo=repo,
    )  # fmt: skip
    assert "no record" in steps["follow the execution"]["thought"]
    repairs = [action for action in steps if action.startswith("repair ")]
    assert repairs[0] == "repair 1/1 (T=0) pkg/api.py::load"
    assert result.exit_status != "submitted"


FIFO_ATTACK = fenced(
    "import os\n\nfrom pkg.api import load\n\n\ndef test_spaces():\n"
    "    record = os.environ.get('SWE_ACI_PLUGIN_OUTPUT')\n"
    "    if record:\n        os.mkfifo(record)\n"
    "    assert load('a = 1') == {'a': '1'}\n"
)


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_a_reproduction_that_turns_the_record_into_a_fifo_costs_one_bounded_run(
    tmp_path: Path, backend: str
) -> None:
    """The model's test makes the record a FIFO: the plugin's write blocks until the run's
    timeout, the host never opens it, and the targets stay the localizer's."""
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    plain = "load keeps the spaces around keys and values.\n"
    result, steps = run(
        tmp_path, [FIFO_ATTACK, "I do not know."], plain, "strategy.localize.files=1",
        "strategy.reproduce.temperatures=[0.0]", "strategy.validation.timeout=5",
        f"env.backend={backend}", repo=repo,
    )  # fmt: skip
    assert steps["reproduce 1/1 (T=0)"]["pipeline"]["accepted"] is True
    followed = steps["follow the execution"]
    assert "no record" in followed["thought"] and "regular file" in followed["thought"]
    assert not any("read_pairs" in action for action in steps)
    assert result.exit_status != "submitted"


def test_overload_stubs_are_no_targets() -> None:
    """natsort's `os_sorted` has two `@overload` signatures before its body: one target."""
    source = (
        "import typing\nfrom typing import overload\n\n\n"
        "@overload\ndef sort(items: list) -> list: ...\n\n\n"
        "@typing.overload\ndef sort(items: tuple) -> list: ...\n\n\n"
        "def sort(items):\n    return sorted(items)\n"
    )
    found = locations("m.py", source)
    assert [(each.qualname, each.start) for each in found] == [("sort", 13)]
