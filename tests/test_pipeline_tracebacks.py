"""Where the repair looks: the functions a failing reproduction's traceback passes through come
first among the targets, and a long target is shown around its failing line (read from real pytest output, and followed by a pipeline run with a
scripted model); the documentation's example code is never a target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import commit_tree
from swe_aci.pipeline.candidates import Target
from swe_aci.pipeline.choose import documents_of
from swe_aci.pipeline.prompts import blocks_variables, shown_regions
from swe_aci.pipeline.skeleton import locations
from swe_aci.pipeline.tracebacks import first_targets, traceback_locations, traced_lines
from test_pipeline_search import fenced, run

VERSION = (
    "def _check(part):\n"
    "    if not part.isdigit() or part.startswith('0'):\n"
    "        raise ValueError(f'invalid part: {part!r}')\n"
    "    return int(part)\n"
    "\n\n"
    "def parse(text):\n"
    "    return tuple(_check(part) for part in text.split('.'))\n"
)
ISSUE = (
    "parse rejects versions with a zero in them\n\n"
    ">>> from pkg.version import parse\n>>> parse('1.0.2')\nTraceback (most recent call last):\n"
    "  ...\nValueError: invalid part: '0'\n\nIt should return (1, 0, 2).\n"
)
FIX = fenced(  # a short function: rewritten whole
    "def _check(part):\n"
    "    if not part.isdigit() or (len(part) > 1 and part.startswith('0')):\n"
    "        raise ValueError(f'invalid part: {part!r}')\n"
    "    return int(part)\n"
)
TREE = {"pkg/__init__.py": "", "pkg/version.py": VERSION}


def pytest_output(root: Path, test: str) -> str:
    """What pytest prints for `test` run in `root` (the repository)."""
    commit_tree(root, {**TREE, "tests/test_version.py": test})
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return finished.stdout


def test_the_frames_of_a_real_pytest_traceback_name_the_raising_function_first(
    tmp_path: Path,
) -> None:
    test = (
        "from pkg.version import parse\n\n\ndef test_zero():\n    assert parse('1.0') == (1, 0)\n"
    )
    output = pytest_output(tmp_path, test)
    traced = traceback_locations(output, {**TREE, "tests/test_version.py": test})
    assert [location.qualname for location in traced] == ["_check", "parse"]  # not the test


def test_a_failed_assertion_in_the_test_alone_names_no_function(tmp_path: Path) -> None:
    test = "from pkg.version import parse\n\n\ndef test_one():\n    assert parse('1.2') == (1,)\n"
    output = pytest_output(tmp_path, test)
    assert "1 failed" in output and "AssertionError" in output
    assert traceback_locations(output, {**TREE, "tests/test_version.py": test}) == []


def test_pythons_absolute_frames_are_matched_to_the_repositorys_paths() -> None:
    output = (
        "Traceback (most recent call last):\n"
        '  File "/sandbox/repo/pkg/version.py", line 8, in parse\n'
        '  File "/usr/lib/python3.11/version.py", line 2, in other\n'
        '  File "/sandbox/repo/pkg/version.py", line 3, in _check\n'
        "ValueError: invalid part: '0'\n"
    )
    assert [location.qualname for location in traceback_locations(output, TREE)] == [
        "_check",
        "parse",
    ]


def test_the_traced_functions_lead_and_the_localizers_order_follows() -> None:
    found = locations("pkg/version.py", VERSION)
    parse, check = found[1], found[0]
    assert [each.qualname for each in first_targets([parse, check], [check])] == ["_check", "parse"]


def test_the_pipeline_repairs_the_function_the_issues_example_raises_in(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    result, steps = run(tmp_path, [FIX], ISSUE, repo=repo)
    assert steps["localize"]["observation"] == "chosen: pkg/version.py::parse"  # the issue's word
    followed = steps["follow the traceback"]
    assert followed["observation"].startswith("first targets: pkg/version.py::_check")
    repairs = [action for action in steps if action.startswith("repair ")]
    assert repairs == ["repair 1/1 (T=0) pkg/version.py::_check"]
    assert result.exit_status == "submitted"
    assert "len(part) > 1" in result.submission


def test_the_suspects_of_a_traceback_are_sampled_round_by_round(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    script = ["I do not know.", "I do not know.", "I do not know.", FIX]
    result, steps = run(
        tmp_path, script, ISSUE, "strategy.repair.temperatures=[0.0,0.8]", repo=repo
    )
    repairs = [action for action in steps if action.startswith("repair ")]
    assert repairs == [
        "repair 1/2 (T=0) pkg/version.py::_check",
        "repair 1/2 (T=0) pkg/version.py::parse",
        "repair 1/2 (T=0) pkg/version.py::_check + pkg/version.py::parse",
        "repair 2/2 (T=0.8) pkg/version.py::_check",
    ]
    assert result.exit_status == "submitted" and "len(part) > 1" in result.submission


def test_the_documentations_examples_and_the_build_script_are_not_localized() -> None:
    tree = {
        "docs/advanced/vprefix.py": "class VPrefix:\n    def parse(self):\n        pass\n",
        "src/semver/version.py": "class Version:\n    def parse(self):\n        pass\n",
        "tests/test_version.py": "def test_parse():\n    pass\n",
        "setup.py": "setup_kwargs = {}\n\n\ndef build(setup_kwargs):\n    pass\n",
    }
    assert [document.path for document in documents_of(tree)] == ["src/semver/version.py"]


def test_the_region_shown_holds_the_line_where_the_test_of_the_issue_fails(
    tmp_path: Path,
) -> None:
    """A long target is shown around the line of its frame in the failing test's traceback, and
    the region's header names that line."""
    padding = "".join(f"    step_{k} = {k}\n" for k in range(60))
    module = f"def measure(text, n):\n{padding}    return [text[k] for k in range(n)]\n"
    tree = {"pkg/__init__.py": "", "pkg/width.py": module}
    test = "from pkg.width import measure\n\n\ndef test_long_n():\n    measure('ab', 5)\n"
    commit_tree(tmp_path, {**tree, "tests/test_width.py": test})
    output = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    failing = traced_lines(output, {**tree, "tests/test_width.py": test})
    assert failing[0] == ("pkg/width.py", 62)  # the list comprehension's frame
    target = Target((locations("pkg/width.py", module)[0],))
    issue = "measure(text, n) raises IndexError when n is larger than text"
    regions = shown_regions(issue, tree, target, 10, failing)
    assert regions[0].start <= 62 <= regions[0].end and regions[0].failing == 62
    regions_text = blocks_variables(issue, tree, regions)["regions"]
    assert "the test of the issue fails at line 62" in regions_text
    assert shown_regions(issue, tree, target, 10, [])[0].start < 20  # the words alone: the top
