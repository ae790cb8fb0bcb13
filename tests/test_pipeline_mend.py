"""A model-written reproduction test mended before it runs: its stand-ins for the code under test
removed, a warning it expects with `pytest.raises` expected with `pytest.warns`, the imports it
leaves out added; and the imports an issue's example leaves out."""

from __future__ import annotations

import json
from pathlib import Path

from swe_aci.episode import load_config
from swe_aci.pipeline.imports import missing_imports, with_imports
from swe_aci.pipeline.issue_prose import reported_outputs
from swe_aci.pipeline.mend import mend_test, top_level_names
from swe_aci.trajectory.store import load_trajectory
from test_pipeline import PLAIN_ISSUE, RIGHT, fenced, run_on_wordcount

MODULE = "pkg.api"
REPOSITORY = {"key": "pkg.api", "Key": "pkg.items", "naturalday": "pkg.time"}


def mended(
    test: str,
    module_names: tuple[str, ...] = ("key", "dumps"),
    reported: tuple[tuple[str, str], ...] = (),
) -> tuple[str, list[str]]:
    return mend_test(test, MODULE, list(module_names), REPOSITORY, list(reported))


def test_a_stand_in_for_the_function_under_test_is_removed_and_the_real_one_imported() -> None:
    test = (
        "import pkg\n\n\ndef key(k) -> pkg.Key:\n    return pkg.key(k)\n\n\n"
        "def test_key():\n    assert key(['a']) == 'a'\n"
    )
    text, notes = mended(test)
    assert "def key" not in text
    assert text.startswith("import pkg\nfrom pkg.api import key\n")
    assert notes == [
        "removed the test's own key (it stands in for the repository's)",
        "added `from pkg.api import key`",
    ]
    compile(text, "t.py", "exec")


def test_a_stand_in_for_a_name_the_test_imports_is_removed_without_a_new_import() -> None:
    test = (
        "from pkg.time import naturalday\n\n\ndef naturalday(value):\n    return 'today'\n\n\n"
        "def test_day():\n    assert naturalday(1) == 'today'\n"
    )
    text, notes = mended(test)
    assert text == (
        "from pkg.time import naturalday\n\n\n\n\ndef test_day():\n"
        "    assert naturalday(1) == 'today'\n"
    )
    assert notes == ["removed the test's own naturalday (it stands in for the repository's)"]


def test_tests_fixtures_and_helpers_of_other_names_stay() -> None:
    test = (
        "import pytest\nfrom pkg.api import key\n\n\n@pytest.fixture\ndef dumps():\n    return 1\n\n\n"
        "def helper():\n    return 2\n\n\nclass TestKey:\n    def test_it(self, dumps):\n"
        "        assert key(helper()) == dumps\n"
    )
    assert mended(test, ("key", "dumps", "TestKey")) == (test, [])


def test_the_imports_a_test_leaves_out_come_from_pytest_the_repository_and_the_standard_library() -> (
    None
):
    test = (
        '"""A test."""\nimport os\n\n\ndef test_it():\n'
        "    with pytest.raises(ValueError):\n        key(Key(datetime(2020, 1, 1)))\n"
        "    assert re.match('a', pkg.dumps()) and datetime.now() and Decimal('1')\n"
        "    assert naturalday(timedelta(days=1)) and time.sleep(0) is None\n"
        "    assert frozen_time(dumps())\n"
    )
    text, notes = mended(test)
    assert text.startswith(
        '"""A test."""\nimport os\nimport pytest\nfrom pkg.api import key\n'
        "from pkg.items import Key\nfrom datetime import datetime\nimport re\nimport pkg\n"
        "from decimal import Decimal\nfrom pkg.time import naturalday\n"
        "from datetime import timedelta\nimport time\nfrom pkg.api import dumps\n\n\ndef test_it"
    )
    assert "frozen_time" not in "".join(notes) and len(notes) == 11
    compile(text, "t.py", "exec")


def test_a_warning_expected_with_pytest_raises_is_expected_with_pytest_warns() -> None:
    test = (
        "import pytest, warnings\n\n\ndef test_it():\n"
        "    with pytest.raises(ValueError):\n        key(1)\n"
        "    s = 'é'; ctx = pytest.raises(DeprecationWarning, match='x')\n"
        "    with pytest.raises(warnings.UserWarning):\n        key(2)\n"
    )
    text, notes = mended(test)
    assert text == test.replace("'é'; ctx = pytest.raises", "'é'; ctx = pytest.warns").replace(
        "pytest.raises(warnings", "pytest.warns(warnings"
    ).replace("import pytest, warnings\n", "import pytest, warnings\nfrom pkg.api import key\n")
    assert notes[:2] == [
        "pytest.raises(DeprecationWarning) made pytest.warns (raises catches exceptions, not warnings)",
        "pytest.raises(warnings.UserWarning) made pytest.warns (raises catches exceptions, not warnings)",
    ]
    as_errors = "import warnings\nwarnings.simplefilter('error')\n" + test
    assert "pytest.warns" not in mended(as_errors)[0]


def test_a_module_is_imported_only_when_every_attribute_read_from_it_exists() -> None:
    assert missing_imports("datetime.datetime.now()\nmath.floor(1.5)", {}) == [
        "import datetime",
        "import math",
    ]
    assert missing_imports("datetime.now()", {}) == ["from datetime import datetime"]
    assert missing_imports("antigravity.fly()\nthis.s", {}) == []


def test_a_package_is_imported_when_read_as_one_and_its_function_when_called() -> None:
    importable = {"parse": "parse", "compile": "parse"}
    assert missing_imports("parse('{}', 'a')", importable) == ["from parse import parse"]
    assert missing_imports("parse.compile('{}')", importable) == ["import parse"]
    assert missing_imports("tomlkit.key('a')", {"key": "tomlkit.api"}) == ["import tomlkit"]


def test_names_bound_anywhere_or_provided_around_the_code_are_left_alone() -> None:
    code = (
        "def f(Decimal):\n    return Decimal\n"
        "try:\n    pass\nexcept ValueError as re:\n    print(re)\n"
        "[Path for Path in range(2)]\nimport pathlib as datetime\ndatetime.Path\n"
    )
    assert missing_imports(code, {}) == []
    assert with_imports("assert pytest.approx(1) == 1", {}, frozenset({"pytest"})) == (
        "assert pytest.approx(1) == 1"
    )
    assert with_imports("x = 1 +", {}) == "x = 1 +"


def test_top_level_names_are_functions_classes_and_assigned_names() -> None:
    text = "A = 1\nB: int = 2\nx, y = 1, 2\n\n\ndef f():\n    C = 3\n\n\nclass K:\n    D = 4\n"
    assert top_level_names(text) == ["A", "B", "f", "K"]
    assert top_level_names("def (") == []


def test_an_unparsable_test_is_left_as_it_is() -> None:
    assert mended("def test_it(:\n    pass\n") == ("def test_it(:\n    pass\n", [])


STANDING_IN = fenced(
    "def top_words(text, n):\n    return Counter(text.split()).most_common(n)\n\n\n"
    "def test_issue():\n    text = 'a b c a b a'\n"
    "    assert top_words(text, 3) == Counter(text.split()).most_common(3)\n"
)


def test_the_pipeline_runs_the_mended_test_and_keeps_what_it_mended(tmp_path: Path) -> None:
    """The model's test stands in for `top_words` (it would pass at the base) and uses `Counter`
    without importing it (it would fail on a NameError): mended, it fails at the base on the
    issue, and the fix passes it."""
    config = load_config(
        "pipeline",
        [
            "model.name=scripted",
            f"model.script={json.dumps([STANDING_IN, RIGHT])}",
            "env.backend=local",
            "strategy.repair.temperatures=[0.0]",
        ],
    )
    result = run_on_wordcount(config, tmp_path, PLAIN_ISSUE)
    assert result.exit_status == "submitted"
    steps = load_trajectory(tmp_path / "out/w/w.traj")["trajectory"]
    reproduce = next(step for step in steps if step["action"].startswith("reproduce 1/"))
    info = reproduce["pipeline"]
    assert info["accepted"] is True
    assert info["mended"] == [
        "removed the test's own top_words (it stands in for the repository's)",
        "added `from wordcount.counter import top_words`",
        "added `from collections import Counter`",
    ]
    assert "def top_words" not in info["test"]
    assert reproduce["observation"].startswith("mended before it ran: removed the test's own")
    assert "(model-written)" in steps[-1]["observation"]


LEAP_ISSUE = (
    "`is_leap_year(2000)` returns False, and `days_in_month(2000, 2)` says 28. But 2000 was a "
    "leap year: years divisible by 400 are leap years.\n"
)


def test_an_assertion_of_what_the_issue_reports_as_the_bug_is_removed() -> None:
    reported = reported_outputs(LEAP_ISSUE)
    assert reported == [("is_leap_year(2000)", "False"), ("days_in_month(2000, 2)", "28")]
    test = (
        "from calutil.leap import is_leap_year\nfrom calutil.months import days_in_month\n\n"
        "def test_issue():\n"
        "    assert not is_leap_year(2000), '2000 should not be a leap year'\n"
        "    assert days_in_month(2000, 2) == 29\n"
        "    assert leap.is_leap_year(2000) is False\n"
        "    assert days_in_month(2000, 2) != 28\n"
    )
    text, notes = mended(test, reported=tuple(reported))
    assert "not is_leap_year(2000)" not in text and "is False" not in text
    assert "== 29" in text and "!= 28" in text  # these say what the issue wants
    assert notes == [
        "removed `assert not is_leap_year(2000), '2000 should not be a leap year'`: it asserts "
        "what the issue reports as the bug",
        "removed `assert leap.is_leap_year(2000) is False`: it asserts what the issue reports "
        "as the bug",
    ]
    alone = "def test_issue():\n    assert days_in_month(2000, 2) == 28\n"
    assert mended(alone, reported=tuple(reported))[0] == alone  # its only assertion: kept


def test_a_name_spelled_with_other_capitals_is_respelled_as_the_repository_spells_it() -> None:
    """`naturalDay` is the repository's `naturalday` (then imported), `true` the builtin
    `True`; `KEy` stays: the repository has both `key` and `Key`."""
    test = "def test_day():\n    assert naturalDay('é', KEy) == true\n"
    text, notes = mended(test)
    assert text == (
        "from pkg.time import naturalday\n"
        "def test_day():\n    assert naturalday('é', KEy) == True\n"
    )
    assert notes == [
        "`naturalDay` spelled `naturalday`, as the repository (or Python) spells it",
        "`true` spelled `True`, as the repository (or Python) spells it",
        "added `from pkg.time import naturalday`",
    ]


def test_a_name_a_standard_module_lacks_is_not_imported_from_it() -> None:
    """docopt-ng: the model's `from typing import Any, ParsedOptions` failed on its import
    before the test showed anything."""
    test = (
        "import ast\nfrom typing import Any, ParsedOptions as P\nimport json; from re import X\n\n"
        "def test_it():\n    from typing import Nope\n    assert key('x') == ast.literal_eval(\"'x'\")\n"
    )
    mended_test, notes = mended(test)
    assert mended_test == (
        "import ast\nfrom typing import Any\nimport json; from re import X\nfrom pkg.api import"
        " key\n\ndef test_it():\n    pass\n    assert key('x') == ast.literal_eval(\"'x'\")\n"
    )
    assert notes == [
        "removed `ParsedOptions` from `from typing import ...`: the module has no such name",
        "removed `Nope` from `from typing import ...`: the module has no such name",
        "added `from pkg.api import key`",
    ]
    # a name the repository defines is imported from it instead
    instead = mended("from typing import key\n\ndef test_it():\n    assert key('x')\n")[0]
    assert instead == "from pkg.api import key\n\n\ndef test_it():\n    assert key('x')\n"
