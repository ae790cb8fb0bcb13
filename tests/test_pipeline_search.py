"""The pipeline's search beyond whole-function rewrites, with scripted models through the real
sandbox: search/replace blocks, targets that are not functions, the repository's pytest options,
candidates that only break tests, and reproduction tests that attack the tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.aci.config import DEFAULT_LINT_SELECT
from swe_aci.aci.lint import Linter
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.blocks import (
    apply_blocks,
    block_edit,
    comment_lines,
    docstring_lines,
    numbered,
    parse_blocks,
    region,
)
from swe_aci.pipeline.candidates import search_order, targets
from swe_aci.pipeline.localize import candidate_locations, issue_choice
from swe_aci.pipeline.regressions import overridden_options, related_tests
from swe_aci.pipeline.repair import Dropped
from swe_aci.retrieval.documents import Document
from swe_aci.trajectory.store import load_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PLAIN_ISSUE = "top_words returns one word too few: it always returns n - 1 of them.\n"
LINT = Linter(DEFAULT_LINT_SELECT)


def fenced(code: str) -> str:
    return f"```python\n{code}```\n"


def block(old: str, new: str, path: str = "wordcount/counter.py") -> str:
    return f"{path}\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


# every sample of the function a search/replace block: no whole rewrite (windows are off)
BLOCKS_ONLY = ("strategy.repair.rewrite_max_lines=0",)
RIGHT_BLOCK = block("    return ranked[: n - 1]\n", "    return ranked[:n]\n")
NO_TEST = "I cannot write a test."


def wordcount(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {
        str(path.relative_to(EXAMPLES / "wordcount")): path.read_text()
        for path in (EXAMPLES / "wordcount").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    commit_tree(root, {**files, **(extra or {})})
    return root


def run(tmp_path: Path, script: list[str], issue: str = PLAIN_ISSUE, *extra: str, repo=None):
    """The pipeline with the scripted model's replies; the template repairs off unless `extra`
    turns them on (they fix the wordcount bug before any model sample)."""
    config = load_config(
        "pipeline",
        ["model.name=scripted", f"model.script={json.dumps(script)}", "env.backend=local",
         "strategy.repair.temperatures=[0.0]", "strategy.repair.more_temperatures=[]",
         "strategy.repair.templates=0", *extra],
    )  # fmt: skip
    source = repo or wordcount(tmp_path / "repo")
    result = run_episode(
        config, Workspace(config.env, str(source)), issue, instance_id="w",
        output_dir=tmp_path / "out",
    )  # fmt: skip
    steps = load_trajectory(tmp_path / "out/w/w.traj")["trajectory"]
    return result, {step["action"]: step for step in steps}


# -- attacks of the model's reproduction test (issue 25) -------------------------------------

ATTACK = fenced(
    "import pathlib\n\nfrom wordcount import top_words\n\n\ndef test_issue():\n"
    "    root = pathlib.Path(__file__).resolve().parents[2]\n"
    "    (root / 'pwned.txt').write_text('x')\n"
    "    with open(root / 'wordcount' / 'counter.py', 'a') as source:\n"
    "        source.write('\\nPWNED = 1\\n')\n"
    "    for test in (root / 'tests').glob('*.py'):\n"
    "        test.write_text('')\n"
    "    assert top_words('a b c a b a', 3) == [('a', 3), ('b', 2), ('c', 1)]\n"
)


@pytest.mark.parametrize(
    ("templates", "fixed"), [(0, "+    return ranked[:n]"), (60, "+    return ranked[: n]")]
)
def test_what_the_reproduction_test_writes_never_reaches_the_tests_or_the_patch(
    tmp_path: Path, templates: int, fixed: str
) -> None:
    """The model's test writes a file, appends to a source file and empties the test files
    before asserting: every run starts from a clean tree, the baseline still counts the
    repository's tests, and the submission is exactly the chosen edit; with the template
    repairs, whose screen runs the test once per edit without a reset between them, too."""
    result, steps = run(tmp_path, [ATTACK, RIGHT_BLOCK], PLAIN_ISSUE, *BLOCKS_ONLY,
                        f"strategy.repair.templates={templates}")  # fmt: skip
    assert result.exit_status == "submitted"
    assert "pwned" not in result.submission.lower() and "tests/" not in result.submission
    changed = [line for line in result.submission.splitlines() if line[:1] in "+-"]
    assert changed == [
        "--- a/wordcount/counter.py", "+++ b/wordcount/counter.py",
        "-    return ranked[: n - 1]", fixed,
    ]  # fmt: skip
    assert steps["tests at the base"]["observation"].startswith("1 pass of 3")
    assert "reproduction test passes, regressions 0" in steps["validate 1"]["observation"]


MARKER = fenced(
    "import pathlib\n\n\ndef test_issue():\n"
    "    marker = pathlib.Path(__file__).with_suffix('.marker')\n"
    "    if marker.exists():\n        return\n"
    "    marker.write_text('seen')\n    assert False\n"
)


def test_a_reproduction_that_fails_only_on_its_first_run_is_rejected(tmp_path: Path) -> None:
    result, steps = run(tmp_path, [MARKER, MARKER, RIGHT_BLOCK], PLAIN_ISSUE,
                        *BLOCKS_ONLY)  # fmt: skip
    assert "fails only on its first run" in steps["reproduce 1/2 (T=0)"]["observation"]
    assert "passes at the base" in steps["reproduce 2/2 (T=0.7)"]["observation"]  # its marker
    for action in ("reproduce 1/2 (T=0)", "reproduce 2/2 (T=0.7)"):
        assert steps[action]["pipeline"]["accepted"] is False
    assert result.exit_status == "submitted"  # chosen without a reproduction
    assert "reproduction test not run" in steps["choose"]["observation"]


def test_a_candidate_that_only_breaks_existing_tests_is_not_submitted(tmp_path: Path) -> None:
    breaking = block('WORD = re.compile(r"[A-Za-z\']+")\n', 'WORD = re.compile(r"[a-z\']+")\n')
    result, steps = run(tmp_path, [NO_TEST, NO_TEST, breaking], PLAIN_ISSUE,
                        *BLOCKS_ONLY)  # fmt: skip
    assert result.exit_status == "exit_format" and result.submission == ""
    assert "regressions 1" in steps["validate 1"]["observation"]
    assert "no fix found" in steps["choose"]["observation"]
    assert "breaks 1 existing tests" in steps["choose"]["observation"]


REPRODUCTION = fenced(
    "from wordcount import top_words\n\n\ndef test_issue():\n"
    "    assert top_words('a b c a b a', 3) == [('a', 3), ('b', 2), ('c', 1)]\n"
)


def test_every_next_target_gets_a_first_sample_before_the_first_gets_more(
    tmp_path: Path,
) -> None:
    """While nothing passes, the first target's first samples, then the next target's and the
    pair's first sample, then the first target's more samples; the right block, for the first
    target, is found among its more samples."""
    script = [REPRODUCTION, "I do not know.", "I do not know.", "I do not know.", RIGHT_BLOCK]
    result, steps = run(tmp_path, script, PLAIN_ISSUE, *BLOCKS_ONLY,
                        "strategy.repair.more_temperatures=[0.9]",
                        "strategy.repair.locations=2")  # fmt: skip
    repairs = [action for action in steps if action.startswith("repair ")]
    first, second = "wordcount/counter.py::top_words", "wordcount/counter.py::words"
    assert repairs == [
        f"repair 1/2 (T=0) {first}",
        f"repair 1/2 (T=0) {second}",
        f"repair 1/2 (T=0) {first} + {second}",
        f"repair 2/2 (T=0.9) {first}",
    ]
    assert steps[repairs[1]]["pipeline"]["phase"] == "next target"
    assert steps[repairs[3]]["pipeline"]["phase"] == "more samples"
    assert result.exit_status == "submitted" and "+    return ranked[:n]" in result.submission


def test_with_the_plan_spent_and_nothing_passing_rounds_of_more_samples_use_the_budget(
    tmp_path: Path,
) -> None:
    """The planned sample of each target passes nothing; the rounds after it draw one more of
    each target per round, at the next of `more_temperatures`, until one passes."""
    script = [REPRODUCTION, "I do not know.", "I do not know.", "I do not know.", RIGHT_BLOCK]
    result, steps = run(tmp_path, script, PLAIN_ISSUE, *BLOCKS_ONLY,
                        "strategy.repair.more_temperatures=[0.9, 1.0]",
                        "strategy.repair.locations=1", "strategy.repair.rounds_after=3")  # fmt: skip
    repairs = [action for action in steps if action.startswith("repair ")]
    target = "wordcount/counter.py::top_words"
    assert repairs == [
        f"repair 1/3 (T=0) {target}",
        f"repair 2/3 (T=0.9) {target}",
        f"repair 3/3 (T=1) {target}",
        f"repair 4/6 (T=0.9) {target}",
    ]
    assert steps[repairs[3]]["pipeline"]["phase"] == "budget left"
    assert result.exit_status == "submitted" and "+    return ranked[:n]" in result.submission


NO_COVER_CONFTEST = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.no_cover)\n"
)


@pytest.mark.parametrize(
    "files",
    [
        # `addopts = --cov`: a plugin-free pytest refuses it on usage, so the baseline was
        # "0 pass of 0"; with `-o addopts=''` the repository's tests run
        {"setup.cfg": "[tool:pytest]\naddopts = --cov=wordcount --strict\n"},
        # pycountry requires pytest-cov (`required_plugins`): every run stopped with "Missing
        # required plugins", so no reproduction ever ran
        {"setup.cfg": "[tool:pytest]\nrequired_plugins = pytest-cov\n"},
        # dateutil's conftest marks tests `no_cover` (pytest-cov registers it) and its setup.cfg
        # turns warnings into errors: PytestUnknownMarkWarning stopped the collection, and the
        # baseline was "no regression signal (0 tests ran, none passed)"
        {"tests/conftest.py": NO_COVER_CONFTEST,
         "setup.cfg": "[tool:pytest]\nfilterwarnings =\n    error\n"},
    ],
    ids=["addopts", "required_plugins", "plugin_mark"],
)  # fmt: skip
def test_a_plugins_configuration_does_not_break_the_pipelines_test_runs(
    tmp_path: Path, files: dict[str, str]
) -> None:
    repo = wordcount(tmp_path / "repo", files)
    result, steps = run(tmp_path, [NO_TEST, NO_TEST, RIGHT_BLOCK], PLAIN_ISSUE,
                        *BLOCKS_ONLY, repo=repo)  # fmt: skip
    assert steps["tests at the base"]["observation"].startswith("1 pass of 3")
    assert "regressions 0" in steps["validate 1"]["observation"]
    assert result.exit_status == "submitted"


def test_an_option_of_a_plugin_not_loaded_does_not_break_the_pipelines_test_runs(
    tmp_path: Path,
) -> None:
    """blinker's pyproject sets pytest-asyncio's `asyncio_mode` and turns warnings into errors:
    the plugin-free pytest warned "Unknown config option: asyncio_mode", which stopped every run
    (INTERNALERROR), so neither the issue's test nor the model's ever ran."""
    config = "[tool:pytest]\nasyncio_mode = auto\nfilterwarnings =\n    error\n"
    repo = wordcount(tmp_path / "repo", {"setup.cfg": config})
    result, steps = run(tmp_path, [REPRODUCTION, RIGHT_BLOCK], PLAIN_ISSUE,
                        *BLOCKS_ONLY, repo=repo)  # fmt: skip
    assert steps["reproduce 1/2 (T=0)"]["pipeline"]["accepted"] is True
    assert steps["tests at the base"]["observation"].startswith("1 pass of 3")
    assert "reproduction test passes, regressions 0" in steps["validate 1"]["observation"]
    assert result.exit_status == "submitted"


def test_a_test_file_that_fails_to_import_leaves_the_others_regression_signal(
    tmp_path: Path,
) -> None:
    """One related test file needs a package the sandbox lacks: before, its collection error
    stopped the whole run ("no regression signal (1 tests ran, none passed)")."""
    broken = "import not_installed_anywhere\nfrom wordcount import top_words\n\n\ndef test_x():\n    pass\n"
    repo = wordcount(tmp_path / "repo", {"tests/test_broken.py": broken})
    result, steps = run(tmp_path, [NO_TEST, NO_TEST, RIGHT_BLOCK], PLAIN_ISSUE,
                        *BLOCKS_ONLY, repo=repo)  # fmt: skip
    assert steps["tests at the base"]["observation"].startswith("1 pass of 4")
    assert "regressions 0" in steps["validate 1"]["observation"]
    assert result.exit_status == "submitted"


DOCUMENTED_WORDS = '''def words(text):
    """Split text into lowercase words.

    >>> words("It's a Dog")
    ["it's", 'a', 'dog']
    """
'''


def documented_wordcount(root: Path) -> Path:
    """The example without its tests, `words` documented by an example instead."""
    source = (EXAMPLES / "wordcount/wordcount/counter.py").read_text()
    counter = source.replace(
        'def words(text):\n    """Split text into lowercase words."""\n', DOCUMENTED_WORDS
    )
    assert counter != source
    init = (EXAMPLES / "wordcount/wordcount/__init__.py").read_text()
    commit_tree(root, {"wordcount/__init__.py": init, "wordcount/counter.py": counter})
    return root


def test_a_repository_without_tests_is_checked_by_its_docstring_examples(
    tmp_path: Path,
) -> None:
    """No test file: the changed module's docstring examples run as doctests. A block that
    breaks the documented behaviour (and passes nothing) is not submitted, as one breaking a
    test is not; the right block, which keeps it, is."""
    breaking = block('WORD = re.compile(r"[A-Za-z\']+")\n', 'WORD = re.compile(r"[a-z\']+")\n')
    repo = documented_wordcount(tmp_path / "repo")
    result, steps = run(tmp_path / "one", [NO_TEST, NO_TEST, breaking], PLAIN_ISSUE,
                        *BLOCKS_ONLY, repo=repo)  # fmt: skip
    base = steps["tests at the base"]
    assert base["observation"].startswith("1 pass of 1 (wordcount/counter.py)")
    assert base["pipeline"]["doctests"] == ["wordcount/counter.py"]
    assert "regressions 1" in steps["validate 1"]["observation"]
    assert result.exit_status == "exit_format" and result.submission == ""
    result, steps = run(tmp_path / "two", [NO_TEST, NO_TEST, RIGHT_BLOCK], PLAIN_ISSUE,
                        *BLOCKS_ONLY, repo=repo)  # fmt: skip
    assert "regressions 0" in steps["validate 1"]["observation"]
    assert result.exit_status == "submitted" and "ranked[:n]" in result.submission


# -- targets beyond functions ----------------------------------------------------------------

SLUG = '''"""Slugs."""

import re

SEPARATOR = re.compile(r"[^a-z0-9]")


class Style:
    dash = "-"
    width = 10

    def join(self, parts):
        return self.dash.join(parts)


def slugify(text):
    return SEPARATOR.sub("-", text.lower()).strip("-")
'''


def test_module_assignments_and_class_attributes_are_targets() -> None:
    found = {location.qualname: location for location in targets("slug.py", SLUG)}
    assert found["SEPARATOR"].kind == "assignment" and found["SEPARATOR"].start == 5
    assert found["Style"].kind == "class" and (found["Style"].start, found["Style"].end) == (8, 10)
    assert found["Style.join"].kind == "function" and found["slugify"].kind == "function"
    ranked, _ = candidate_locations(
        "slugify leaves double dashes: the SEPARATOR pattern matches one character",
        [Document("slug.py", SLUG)], 1, 10,
    )  # fmt: skip
    assert {ranked[0].qualname, ranked[1].qualname} == {"slugify", "SEPARATOR"}
    order = search_order(ranked, 2)
    assert [target.label for target in order][-1] == f"{ranked[0].label} + {ranked[1].label}"
    assert order[0].rewrites(30) != (ranked[0].kind != "function")


def test_a_constant_is_fixed_by_a_block() -> None:
    reply = "Fix:\n" + block('SEPARATOR = re.compile(r"[^a-z0-9]")\n',
                             'SEPARATOR = re.compile(r"[^a-z0-9]+")\n', "slug.py")  # fmt: skip
    edit = block_edit({"slug.py": SLUG}, reply, "slug.py", LINT)
    assert 'SEPARATOR = re.compile(r"[^a-z0-9]+")' in edit.texts["slug.py"]
    assert edit.source == "block" and edit.notes == ("block 1: applied at lines 5-5",)


def test_blocks_match_exactly_or_ignoring_indentation_and_are_dropped_otherwise() -> None:
    indented = block("return self.dash.join(parts)\n", "return self.dash.join(reversed(parts))\n",
                     "slug.py")  # fmt: skip
    edit = block_edit({"slug.py": SLUG}, indented, "slug.py", LINT)
    assert "        return self.dash.join(reversed(parts))\n" in edit.texts["slug.py"]
    assert "(ignoring indentation)" in edit.notes[0]
    numbered_old = block("  13 |         return self.dash.join(parts)\n",
                         "  13 |         return self.dash.join(sorted(parts))\n", "slug.py")  # fmt: skip
    assert (
        "sorted(parts)"
        in block_edit({"slug.py": SLUG}, numbered_old, "slug.py", LINT).texts["slug.py"]
    )
    line_prefixed = block("line 9:     width = 10\n", "line 9:     width = 13\n", "slug.py")
    assert (
        "width = 13"
        in block_edit({"slug.py": SLUG}, line_prefixed, "slug.py", LINT).texts["slug.py"]
    )
    conflict_style = (
        "slug.py\n<<<<<<< HEAD\n 9 |     width = 10\n=======\n 9 |     width = 11\n>>>>>>> fix\n"
    )
    assert (
        "width = 11"
        in block_edit({"slug.py": SLUG}, conflict_style, "slug.py", LINT).texts["slug.py"]
    )
    with pytest.raises(Dropped, match="old lines do not match"):
        block_edit(
            {"slug.py": SLUG},
            block("    return 42\n", "    return 43\n", "slug.py"),
            "slug.py",
            LINT,
        )
    with pytest.raises(Dropped, match="lint: F821"):
        block_edit(
            {"slug.py": SLUG},
            block('    dash = "-"\n', "    dash = missing\n", "slug.py"),
            "slug.py",
            LINT,
        )
    comment = block(
        "        return self.dash.join(parts)\n",
        "        return self.dash.join(parts)  # ok\n",
        "slug.py",
    )
    with pytest.raises(Dropped, match="change no code"):
        block_edit({"slug.py": SLUG}, comment, "slug.py", LINT)
    with pytest.raises(Dropped, match="no search/replace block"):
        block_edit({"slug.py": SLUG}, "no blocks here", "slug.py", LINT)
    # new lines a space off the old lines' level: shifted to it, kept when the file then parses
    off_level = block("        return self.dash.join(parts)\n",
                      "       return self.dash.join(sorted(parts))\n", "slug.py")  # fmt: skip
    edit = block_edit({"slug.py": SLUG}, off_level, "slug.py", LINT)
    assert "        return self.dash.join(sorted(parts))\n" in edit.texts["slug.py"]
    assert "new lines shifted to the old lines' level" in edit.notes[0]
    ragged = block("        return self.dash.join(parts)\n",
                   "       parts = sorted(parts)\n        return self.dash.join(parts)\n",
                   "slug.py")  # fmt: skip
    with pytest.raises(Dropped, match="no longer parses"):
        block_edit({"slug.py": SLUG}, ragged, "slug.py", LINT)
    # of two blocks, the one that does not apply is dropped and the other kept
    two = block("    width = 10\n", "    width = 12\n", "slug.py") + block(
        "nope\n", "x\n", "slug.py"
    )
    texts, notes = apply_blocks({"slug.py": SLUG}, parse_blocks(two, "slug.py"), LINT)
    assert "width = 12" in texts["slug.py"] and "dropped" in notes[1]


TWINS = (
    "def width(text, n=None):\n"
    '    """How wide `text` is, in cells."""\n'
    "    end = len(text) if n is None else n\n"
    "    return sum(1 for _ in text[:end])\n"
    "\n\n"
    "def cells(text, n=None):\n"
    "    end = len(text) if n is None else n\n"
    "    return sum(2 for _ in text[:end])\n"
)


def test_old_lines_found_in_two_places_apply_within_the_lines_shown() -> None:
    """`wcswidth` and `wcstwidth` share lines: the block applies to the function shown."""
    twice = block("        end = len(text) if n is None else n\n",
                  "        end = len(text) if n is None else min(n, len(text))\n", "w.py")  # fmt: skip
    with pytest.raises(Dropped, match="old lines do not match"):
        block_edit({"w.py": TWINS}, twice, "w.py", LINT)
    edit = block_edit({"w.py": TWINS}, twice, "w.py", LINT, {"w.py": ((7, 9),)})
    assert edit.texts["w.py"].count("min(n, len(text))") == 1
    assert "min(n, len(text))\n    return sum(2" in edit.texts["w.py"]
    assert edit.notes == (
        "block 1: applied at lines 8-8 (ignoring indentation, the one of 2 places within the "
        "lines shown)",
    )


def test_the_region_shown_follows_the_issues_words_in_code_not_in_the_docstring() -> None:
    docstring = "".join(f"    The n of the string is larger, line {k}.\n" for k in range(30))
    code = "".join(f"    x{k} = {k}\n" for k in range(30))
    text = f'def width(text, n):\n    """\n{docstring}    """\n{code}    end = len(text) if n is None else n\n    return end\n'
    start, end = region(
        text,
        1,
        65,
        "raises when n is larger than the text",
        10,
        docstring_lines(text) | comment_lines(text),
    )
    assert start <= 64 <= end  # `end = n`, not the docstring that says "width" and "n"
    assert region(text, 1, 65, "raises when n is larger than the text", 10)[0] < 33


def test_a_block_naming_the_prompts_placeholder_path_applies_to_the_one_file_shown() -> None:
    placeholder = block("    width = 10\n", "    width = 12\n", "path/to/file.py")
    edit = block_edit({"slug.py": SLUG}, placeholder, "slug.py", LINT)
    assert "width = 12" in edit.texts["slug.py"]
    assert edit.notes[0] == "block 1: its path line read as slug.py, the file shown"
    two_shown = {"slug.py": SLUG, "other.py": "x = 1\n"}
    with pytest.raises(Dropped, match=r"path/to/file\.py is not a file shown"):
        block_edit(two_shown, placeholder, "slug.py", LINT)


def test_the_region_shown_is_numbered_around_the_issues_words() -> None:
    text = "".join(f"x{n} = {n}\n" for n in range(1, 101)) + "needle = 0\n"
    start, end = region(text, 1, 101, "the needle is wrong", 10)
    assert start <= 101 <= end and end - start == 9
    assert numbered(text, 100, 101) == "100 | x100 = 100\n101 | needle = 0"


# -- regressions -----------------------------------------------------------------------------


def test_the_tests_importing_the_changed_module_come_first() -> None:
    tree = {
        "pkg/core.py": "",
        "tests/test_a.py": "def test_x():\n    assert 'core' in 'words about core'\n",
        "tests/test_b.py": "from pkg.core import thing\n",
        "tests/test_c.py": "from pkg import core\n",
        "tests/test_d.py": "import os\n",
    }
    assert related_tests(tree, ["pkg/core.py"], [], 10) == [
        "tests/test_b.py", "tests/test_c.py", "tests/test_a.py",
    ]  # fmt: skip
    assert related_tests(tree, ["other.py"], [], 10) == sorted(p for p in tree if "test" in p)


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ({"setup.cfg": "[tool:pytest]\naddopts = --cov\n"}, ["addopts"]),
        ({"setup.cfg": "[metadata]\nname = x\n"}, []),
        ({"pytest.ini": "[pytest]\naddopts = -p xdist\n", "setup.cfg": "[tool:pytest]\n"},
         ["addopts"]),
        ({"pytest.ini": "[pytest]\n", "setup.cfg": "[tool:pytest]\naddopts = --cov\n"}, []),
        ({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--cov"\n'}, ["addopts"]),
        ({"pyproject.toml": '[tool.pytest.ini_options]\nrequired_plugins = ["pytest-cov"]\n'
                            'addopts = "--cov"\n'}, ["addopts", "required_plugins"]),
        ({"tox.ini": "[pytest]\nrequired_plugins = pytest-cov>=4.0.0\n"}, ["required_plugins"]),
        ({}, []),
    ],
)  # fmt: skip
def test_the_options_a_plugin_free_pytest_refuses_are_found_where_pytest_reads_them(
    configs: dict[str, str], expected: list[str]
) -> None:
    assert overridden_options(configs) == expected


def test_the_issues_traceback_frames_come_first_in_localization() -> None:
    documents = [
        Document("pkg/slug.py", SLUG),
        Document("pkg/other.py", "def slug_words(text):\n    return text.split()\n"),
    ]
    issue = (
        "slug words break\n\nTraceback (most recent call last):\n"
        '  File "/usr/lib/site-packages/pkg/slug.py", line 14, in join\nTypeError: boom\n'
    )
    found, _ = candidate_locations(issue, documents, 1, 10)
    assert found[0].label == "pkg/slug.py::Style.join"  # the frame's file, then its function


VERSION = '''class Version:
    major = 0

    def parse(self, text):
        """Parse a version string: parse the text, parse its parts."""
        return text.split(".")

    def replace(self, **parts):
        return Version()


def key(name):
    return name
'''


def test_what_the_issue_writes_dotted_comes_before_other_names_it_writes() -> None:
    documents = [Document("semver/version.py", VERSION)]
    issue = (
        "Version.replace drops the subclass: parse a version string, parse it again, "
        "and the parse result is a Version"
    )
    found, _ = candidate_locations(issue, documents, 1, 10)
    assert found[0].qualname == "Version.replace"  # BM25 alone puts parse first
    issue = "semver.key is wrong when you parse a version: parse gives text"
    found, _ = candidate_locations(issue, documents, 1, 10)
    assert found[0].qualname == "key"  # a module's function written after its package


def test_the_one_candidate_the_issue_writes_dotted_is_chosen_without_the_model() -> None:
    candidates, spans = candidate_locations(
        "parse, replace, key", [Document("semver/v.py", VERSION)], 1, 9
    )
    picked = issue_choice("Version.replace drops the subclass that parse keeps", candidates, spans)
    assert picked is not None and picked[0].qualname == "Version.replace"
    assert picked[1] == "the issue writes one candidate dotted"
    assert issue_choice("replace drops the subclass that parse keeps", candidates, spans) is None
    assert issue_choice("Version.replace drops what Version.parse keeps", candidates, spans) is None
    assert any(location.kind == "class" for location in candidates)
    assert issue_choice("semver.Version drops what parse keeps", candidates, spans) is None


def test_an_edit_spanning_two_files_is_one_candidate() -> None:
    other = "from slug import slugify\n\n\ndef title(text):\n    return slugify(text)\n"
    reply = block("    return slugify(text)\n", "    return slugify(text).title()\n", "util.py") + (
        block("    width = 10\n", "    width = 12\n", "slug.py")
    )
    edit = block_edit({"slug.py": SLUG, "util.py": other}, reply, "slug.py", LINT)
    assert set(edit.texts) == {"slug.py", "util.py"} and "width = 12" in edit.texts["slug.py"]
    assert "slugify(text).title()" in edit.texts["util.py"]


def test_a_docstring_in_the_region_shown_is_folded_to_one_line() -> None:
    text = 'def f(n):\n    """One.\n\n    Two.\n    """\n    return n\n'
    assert numbered(text, 1, 6, docstring_lines(text)) == (
        "  1 | def f(n):\n2-5 |     ...\n  6 |     return n"
    )
    short = 'def g():\n    """One line."""\n    return 1\n'
    assert "One line" in numbered(short, 1, 3, docstring_lines(short))


DESCRIPTOR = """class Cached:
    def __get__(self, obj, objtype=None):
        wrapper = self.wrap(obj)
        try:
            wrapper = obj.__dict__.setdefault(self.name, wrapper)
        except AttributeError:
            pass
        return wrapper
"""


def test_a_block_whose_old_text_is_part_of_a_line_edits_that_line() -> None:
    old = "obj.__dict__.setdefault(self.name, wrapper)\n"
    inline = block(old, "obj.__dict__.setdefault(self.name, wrapper) if obj else wrapper\n", "c.py")
    edit = block_edit({"c.py": DESCRIPTOR}, inline, "c.py", LINT)
    assert (
        "            wrapper = obj.__dict__.setdefault(self.name, wrapper) if obj else wrapper\n"
        in (edit.texts["c.py"])
    )
    assert edit.notes == (
        "block 1: applied at lines 5-5 (its old text is part of line 5: changed within it)",
    )
    lines = block(
        old, "if obj is not None:\n    obj.__dict__.setdefault(self.name, wrapper)\n", "c.py"
    )
    edit = block_edit({"c.py": DESCRIPTOR}, lines, "c.py", LINT)
    assert (
        "            if obj is not None:\n                obj.__dict__.setdefault("
        in edit.texts["c.py"]
    )
    with pytest.raises(Dropped, match="do not match"):
        block_edit({"c.py": DESCRIPTOR}, block("wrapper\n", "result\n", "c.py"), "c.py", LINT)


def test_a_block_copying_the_whole_region_shown_applies_what_it_changes() -> None:
    text = 'def last(items):\n    """Last.\n\n    Of items.\n    """\n    lo = 0\n    return items[lo]\n'
    shown = numbered(text, 1, 7, docstring_lines(text))
    assert "2-5 |     ..." in shown
    changed = shown.replace("items[lo]", "items[-1]")
    reply = f"f.py\n<<<<<<< SEARCH\n{shown}\n=======\n{changed}\n>>>>>>> REPLACE\n"
    edit = block_edit({"f.py": text}, reply, "f.py", LINT)
    assert edit.texts["f.py"] == text.replace("items[lo]", "items[-1]")
    assert edit.notes == ("block 1: applied at lines 7-7 (the lines it does not change left out)",)


def test_a_block_written_twice_applies_once_and_the_repeat_is_skipped() -> None:
    twice = block('SEPARATOR = re.compile(r"[^a-z0-9]")\n',
                  'SEPARATOR = re.compile(r"[^a-z0-9]+")\n', "slug.py") * 2  # fmt: skip
    edit = block_edit({"slug.py": SLUG}, twice, "slug.py", LINT)
    assert 'SEPARATOR = re.compile(r"[^a-z0-9]+")' in edit.texts["slug.py"]
    assert edit.notes == ("block 1: applied at lines 5-5", "block 2: a repeat of block 1, skipped")


def test_a_block_that_changes_nothing_is_dropped_saying_so() -> None:
    same = block("return self.dash.join(parts)\n", "return self.dash.join(parts)\n", "slug.py")
    with pytest.raises(Dropped, match="block 1: dropped: its new lines are the old ones"):
        block_edit({"slug.py": SLUG}, same, "slug.py", LINT)


def test_a_blocks_first_new_line_on_the_separator_line_is_read() -> None:
    """Seen in the bench (wcwidth): `=======        if idx < end - 1:`, the new line written
    on the marker's own line, was read as no block at all."""
    reply = "w.py\n<<<<<<< SEARCH\n        if idx < end:\n=======        if idx < end - 1:\n>>>>>>> REPLACE\n"
    [parsed] = parse_blocks(reply, "w.py")
    assert parsed.old == "        if idx < end:\n"
    assert parsed.new == "        if idx < end - 1:\n"
