"""The pipeline strategy with the scripted model, through the real sandbox: the stages, the
choice, the files it writes, the time budget, and the parts (localization, edits, reproduction)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.aci.config import DEFAULT_LINT_SELECT
from swe_aci.aci.lint import Linter
from swe_aci.analysis.stats import read_run
from swe_aci.env.config import Workspace
from swe_aci.episode import EpisodeConfig, load_config, run_episode
from swe_aci.evaluate.parsers import TestStatus
from swe_aci.pipeline.localize import candidate_locations, choice_grammar, chosen_index
from swe_aci.pipeline.repair import Dropped, make_edit, rewrite_tokens
from swe_aci.pipeline.reproduction import model_test_problem
from swe_aci.pipeline.sandbox import TestRun, fails_as_reproduction
from swe_aci.pipeline.skeleton import locations, module_name
from swe_aci.retrieval.documents import Document
from swe_aci.trajectory.result import EpisodeResult
from swe_aci.trajectory.store import load_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ISSUE = (EXAMPLES / "wordcount.issue.md").read_text()


def fenced(code: str) -> str:
    return f"Here is the fix:\n```python\n{code}```\n"


WRONG = fenced(
    "def top_words(text, n):\n    counts = Counter(words(text))\n    return sorted(counts.items())[1:n]\n"
)
RIGHT = fenced(
    "def top_words(text, n):\n"
    '    """Return the n most common words with their counts, most common first."""\n'
    "    counts = Counter(words(text))\n"
    "    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))\n"
    "    return ranked[:n]\n"
)
RIGHT_AGAIN = RIGHT.replace("return ranked[:n]", "return ranked[ : n]  # n of them")
UNDEFINED = RIGHT.replace("return ranked[:n]", "return rankd[:n]")
PASSES_AT_BASE = fenced(
    "from wordcount import top_words\n\n\ndef test_issue():\n    assert top_words('a', 1) == []\n"
)
REPRODUCTION = fenced(
    "from wordcount import top_words\n\n\ndef test_issue():\n"
    "    assert top_words('a b c a b a', 3) == [('a', 3), ('b', 2), ('c', 1)]\n"
)
SCRIPT = ["I would change top_words.", WRONG, UNDEFINED, RIGHT, RIGHT_AGAIN]


def wordcount_repo(root: Path) -> Path:
    files = {
        str(path.relative_to(EXAMPLES / "wordcount")): path.read_text()
        for path in (EXAMPLES / "wordcount").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    commit_tree(root, files)
    return root


def run_on_wordcount(
    config: EpisodeConfig, tmp_path: Path, issue: str = ISSUE, instance_id: str = "w"
) -> EpisodeResult:
    """The pipeline of `config` on the wordcount repository (made once under `tmp_path`), as
    `instance_id` under out/."""
    repo = tmp_path / "repo"
    if not repo.exists():
        wordcount_repo(repo)
    return run_episode(
        config,
        Workspace(config.env, str(repo)),
        issue,
        instance_id=instance_id,
        output_dir=tmp_path / "out",
    )


def pipeline_config(script: list[str], backend: str, *extra: str):
    """The pipeline with the scripted model's replies, the template repairs off (they fix the
    wordcount bug before any model sample: tests of templates turn them on)."""
    return load_config(
        "pipeline",
        [
            "model.name=scripted",
            f"model.script={json.dumps(script)}",
            f"env.backend={backend}",
            "strategy.repair.temperatures=[0.0, 0.8, 0.8, 0.8]",
            "strategy.repair.templates=0",
            *extra,
        ],
    )


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_the_pipeline_stops_at_the_first_fix_the_issues_example_passes(
    tmp_path: Path, backend: str
) -> None:
    """The issue's `>>>` example is the reproduction (no model call); each new candidate is
    validated as it appears and the search stops at the first that passes it."""
    if backend == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    repo = wordcount_repo(tmp_path / "repo")
    shown = []
    config = pipeline_config(SCRIPT, backend)
    result = run_episode(
        config,
        Workspace(config.env, str(repo)),
        ISSUE,
        instance_id="wordcount",
        output_dir=tmp_path / "out",
        on_step=lambda step: shown.append(step.action),
    )
    assert result.exit_status == "submitted"
    assert "+    return ranked[:n]" in result.submission
    assert "rankd" not in result.submission and "test_issue" not in result.submission
    assert shown == [
        "localize",
        "reproduce from the issue",
        "follow the execution",
        "repair 1/8 (T=0) wordcount/counter.py::top_words",
        "tests at the base",
        "validate 1",
        "repair 2/8 (T=0.8) wordcount/counter.py::top_words",
        "repair 3/8 (T=0.8) wordcount/counter.py::top_words",
        "validate 2",
        "choose",
    ]
    assert result.steps == len(shown)  # what `batch` prints and results.json records
    trajectory = load_trajectory(tmp_path / "out/wordcount/wordcount.traj")
    steps = {step["action"]: step for step in trajectory["trajectory"]}
    assert (
        "counter.py\n  top_words(text, n)\n  words(text)"
        in steps["localize"]["query"][0]["content"]
    )
    issue_test = steps["reproduce from the issue"]["pipeline"]
    assert issue_test["accepted"] == ["test_issue_example_1"] and not issue_test["dropped"]
    assert "== [('a', 3), ('b', 2), ('c', 1)]" in issue_test["test"]
    repair = steps["repair 2/8 (T=0.8) wordcount/counter.py::top_words"]
    assert "lint: F821" in repair["observation"] and repair["pipeline"]["source"] == "rewrite"
    assert "reproduction test fails" in steps["validate 1"]["observation"]
    assert (
        "samples 3 (rewrite): reproduction test passes, regressions 0"
        in (steps["validate 2"]["observation"])
    )
    choice = trajectory["info"]["choice"]
    assert "(issue example): the reproduction test passes on it" in choice
    assert steps["choose"]["pipeline"]["chosen"] == 2
    assert steps["choose"]["pipeline"]["reproduction"] == "issue example"
    prediction = json.loads((tmp_path / "out/wordcount/wordcount.pred").read_text())
    assert prediction["model_patch"] == result.submission
    assert (tmp_path / "out/wordcount/wordcount.patch").read_text() == result.submission
    stats = read_run(tmp_path / "out")
    assert stats[0].submitted and stats[0].api_calls == 4


def block(old: str, new: str = "    return ranked[:n]\n") -> str:
    return (
        "wordcount/counter.py\n```\n<<<<<<< SEARCH\n" + old + "=======\n" + new
        + ">>>>>>> REPLACE\n```\n"
    )  # fmt: skip


PLAIN_ISSUE = "top_words returns one word too few: it always returns n - 1 of them.\n"


def test_without_an_example_the_models_test_decides_and_more_samples_are_drawn(
    tmp_path: Path,
) -> None:
    """No example in the issue: the model writes the test (one that passes at the base is
    dropped); the first samples fail it, so more samples (new temperatures) are drawn."""
    script = [PASSES_AT_BASE, REPRODUCTION, WRONG, block("    return ranked[: n + 1]\n"), WRONG,
              block("    return ranked[: n - 1]\n")]  # fmt: skip
    config = pipeline_config(
        script,
        "local",
        "strategy.repair.temperatures=[0.0]",
        "strategy.repair.more_temperatures=[0.9, 1.0, 1.1, 1.2]",
        "strategy.repair.locations=1",
    )
    result = run_on_wordcount(config, tmp_path, PLAIN_ISSUE)
    assert result.exit_status == "submitted"
    assert "-    return ranked[: n - 1]\n+    return ranked[:n]\n" in result.submission
    changed = [line for line in result.submission.splitlines() if line[:1] in "+-"]
    assert len(changed) == 4  # the block changed one line (and the two file headers)
    steps = load_trajectory(tmp_path / "out/w/w.traj")["trajectory"]
    actions = [step["action"] for step in steps]
    assert actions == [
        "localize",
        "reproduce 1/2 (T=0)",
        "reproduce 2/2 (T=0.7)",
        "follow the execution",
        "repair 1/5 (T=0) wordcount/counter.py::top_words",
        "tests at the base",
        "validate 1",
        "repair 2/5 (T=0.9) wordcount/counter.py::top_words",
        "repair 3/5 (T=1) wordcount/counter.py::top_words",
        "repair 4/5 (T=1.1) wordcount/counter.py::top_words",
        "validate 2",
        "choose",
    ]
    by_action = {step["action"]: step for step in steps}
    assert "passes at the base" in by_action["reproduce 1/2 (T=0)"]["observation"]
    assert by_action["reproduce 2/2 (T=0.7)"]["pipeline"]["origin"] == "model-written"
    assert "its old lines do not match the file" in by_action[actions[7]]["observation"]
    assert by_action[actions[7]]["pipeline"]["source"] == "block"
    assert by_action[actions[7]]["pipeline"]["phase"] == "more samples"
    assert "the same edit as samples 1" in by_action[actions[8]]["observation"]
    assert "(block)" in by_action["validate 2"]["observation"]
    assert "(model-written)" in by_action["choose"]["observation"]


def test_the_prompts_say_how_the_tests_fail_at_the_base(tmp_path: Path) -> None:
    """pytest's `E` lines of the reproduction at the base reach every repair prompt; without a
    reproduction the prompt has no such section; the next try at a test is told why the one
    before was not kept."""
    config = pipeline_config([REPRODUCTION, RIGHT], "local", "strategy.repair.temperatures=[0.0]")
    result = run_on_wordcount(config, tmp_path, PLAIN_ISSUE)
    assert result.exit_status == "submitted"
    prompts = [
        message["content"]
        for message in load_trajectory(tmp_path / "out/w/w.traj")["history"]
        if message["role"] == "user"
    ]
    assert len(prompts) == 2
    assert (
        "The test of the issue fails now with:\n```\n"
        "AssertionError: assert [('a', 3), ('b', 2)] == [('a', 3), ('b', 2), ('c', 1)]\n"
        "Right contains one more item: ('c', 1)\n```"
    ) in prompts[1]
    assert "fails now with" not in prompts[0]
    config = pipeline_config([PASSES_AT_BASE, PASSES_AT_BASE, RIGHT], "local")
    run_on_wordcount(config, tmp_path, PLAIN_ISSUE, instance_id="v")
    history = load_trajectory(tmp_path / "out/v/v.traj")["history"]
    first, second, repair = [m["content"] for m in history if m["role"] == "user"]
    assert "not kept" not in first
    assert second.startswith(first.rstrip()) and second.endswith(
        "`test_issue`.\n\nA test written before was not kept: the test passes at the base: it "
        "does not show the issue. Write one that avoids this."
    )
    assert "The bug is in `top_words`" in repair and "fails now with" not in repair


def test_a_spent_time_budget_ends_the_pipeline_cleanly(tmp_path: Path) -> None:
    config = pipeline_config(SCRIPT, "local", "strategy.time_budget=0.000001")
    result = run_on_wordcount(config, tmp_path)
    assert result.exit_status == "exit_time_limit" and result.submission == ""
    trajectory = load_trajectory(tmp_path / "out/w/w.traj")
    assert trajectory["trajectory"][-1]["action"] == "choose"


def test_a_candidate_whose_tests_hang_does_not_hold_the_episode_past_its_budget(
    tmp_path: Path,
) -> None:
    """The candidate loops forever: its test runs are cut at the budget's end, not after
    `validation.timeout` each (120 s here, more than the whole episode takes), and a candidate
    whose tests do not finish is not submitted."""
    hangs = fenced("def top_words(text, n):\n    while True:\n        pass\n")
    config = pipeline_config(
        [REPRODUCTION, hangs], "local", "strategy.time_budget=15",
        "strategy.validation.timeout=120", "strategy.repair.temperatures=[0.0]",
    )  # fmt: skip
    started = time.monotonic()
    result = run_on_wordcount(config, tmp_path, PLAIN_ISSUE)
    assert time.monotonic() - started < 60
    assert result.exit_status == "exit_time_limit" and result.submission == ""
    choice = load_trajectory(tmp_path / "out/w/w.traj")["trajectory"][-1]["observation"]
    assert choice == (
        "pipeline: no fix found: the best candidate (wordcount/counter.py::top_words) makes the "
        "tests time out and passes no reproduction test"
    )


def test_no_usable_repair_ends_with_a_format_exit_and_no_patch(tmp_path: Path) -> None:
    script = ["top_words", "no code here", UNDEFINED, "```python\ndef other():\n    pass\n```",
              "still nothing", "nothing", "nothing"]  # fmt: skip
    config = pipeline_config(
        script,
        "local",
        "strategy.repair.temperatures=[0, 0, 0]",
        "strategy.repair.more_temperatures=[]",
        "strategy.repair.locations=1",
        "strategy.repair.rounds_after=0",
    )
    result = run_on_wordcount(config, tmp_path)
    assert result.exit_status == "exit_format" and result.submission == ""
    reasons = [s["observation"] for s in load_trajectory(tmp_path / "out/w/w.traj")["trajectory"]]
    assert any("no parsable function named top_words" in reason for reason in reasons)


# -- the parts -------------------------------------------------------------------------------

CLASSY = """import math


class Shape:
    def area(self):
        return 0

    @property
    def perimeter(self):
        return math.pi


def unrelated(x: int) -> int:
    return x
"""


def test_skeleton_spans_cover_methods_with_their_decorators() -> None:
    found = {location.qualname: location for location in locations("geo/shape.py", CLASSY)}
    assert set(found) == {"Shape.area", "Shape.perimeter", "unrelated"}
    perimeter = found["Shape.perimeter"]
    assert (perimeter.start, perimeter.end, perimeter.indent) == (8, 10, 4)
    assert found["unrelated"].signature == "unrelated(x: int) -> int"
    assert (
        module_name("src/geo/shape.py") == "geo.shape" and module_name("geo/__init__.py") == "geo"
    )


def test_a_method_rewritten_at_column_zero_is_put_back_at_its_indentation() -> None:
    location = {loc.qualname: loc for loc in locations("geo/shape.py", CLASSY)}["Shape.area"]
    reply = fenced("def area(self):\n    return 1\n")
    edit = make_edit(CLASSY, location, reply, Linter(DEFAULT_LINT_SELECT))
    assert "    def area(self):\n        return 1\n\n    @property" in edit.texts["geo/shape.py"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (fenced("def area(self):\n    return 0\n"), "unchanged"),
        (fenced("def area(self):\n    return radius\n"), "lint: F821"),
        (fenced("def surface(self):\n    return 1\n"), "no parsable function named area"),
        (fenced("def area(self):\n    ...\n"), "no parsable function named area"),
    ],
)
def test_unusable_repairs_are_dropped_with_the_reason(reply: str, reason: str) -> None:
    location = {loc.qualname: loc for loc in locations("geo/shape.py", CLASSY)}["Shape.area"]
    with pytest.raises(Dropped, match=reason):
        make_edit(CLASSY, location, reply, Linter(DEFAULT_LINT_SELECT))


def test_localization_puts_the_function_the_issue_names_first() -> None:
    documents = [
        Document("geo/shape.py", CLASSY),
        Document("geo/other.py", "def area_of_circle(r):\n    return r * r\n"),
    ]
    found, _ = candidate_locations("unrelated gives a circle's value", documents, 2, 10)
    assert found[0].qualname == "unrelated"  # named, though BM25 prefers area_of_circle
    names = ["words", "top_words", "a.b"]
    assert chosen_index("I pick top_words.", names) == 1
    assert chosen_index("words", names) == 0 and chosen_index("nothing", names) is None
    assert choice_grammar(names) == 'root ::= "words" | "top_words" | "a.b"'


def test_a_reproduction_must_fail_on_the_issue_not_on_its_own_mistakes() -> None:
    def run(status: TestStatus, output: str = "") -> TestRun:
        return TestRun({"t.py::test_issue": status}, output, timed_out=False)

    assert (
        fails_as_reproduction(run(TestStatus.FAILED, "E   AssertionError: assert 1 == 2")) is None
    )
    assert "passes at the base" in (fails_as_reproduction(run(TestStatus.PASSED)) or "")
    assert "did not run" in (fails_as_reproduction(run(TestStatus.ERROR)) or "")
    broken = run(TestStatus.FAILED, "E   NameError: name 'top_word' is not defined")
    assert "import or name error" in (fails_as_reproduction(broken) or "")


def test_a_model_test_failing_on_an_exception_the_issue_does_not_name_is_rejected() -> None:
    def failed(output: str) -> TestRun:
        return TestRun({"t.py::test_issue": TestStatus.FAILED}, output, timed_out=False)

    wrong_call = failed("E       ValueError: v1.1.0 is not valid SemVer string")
    issue = "Version.replace returns a Version, not the subclass it was called on"
    assert model_test_problem(wrong_call, wrong_call, issue) == (
        "the test fails on ValueError, which the issue does not name"
    )
    assert model_test_problem(wrong_call, wrong_call, "parse raises ValueError on 'v1'") is None
    qualified = failed("E   tomlkit.exceptions.InvalidNumberError: Invalid number")
    assert model_test_problem(qualified, qualified, "loads fails: InvalidNumberError") is None
    assert model_test_problem(wrong_call, wrong_call, "replace() crashes on a subclass") is None
    other = "numeric_range()[-1] raises IndexError on a reversed range"
    assert "fails on ValueError" in (model_test_problem(wrong_call, wrong_call, other) or "")
    assertion = failed("E       AssertionError: assert 1 == 2")
    assert model_test_problem(assertion, assertion, issue) is None


def test_a_model_test_misusing_the_library_is_rejected_unless_the_issue_reports_it() -> None:
    """A submodule never imported, or a call that does not fit the signature, fails on the test
    and not on the issue (pyflakes: `module 'pyflakes' has no attribute 'checker'`, accepted
    where the issue spoke of a crash)."""

    def failed(output: str) -> TestRun:
        return TestRun({"t.py::test_issue": TestStatus.FAILED}, output, timed_out=False)

    crash = "checking a class body crashes with a traceback"
    module = failed("E       AttributeError: module 'pyflakes' has no attribute 'checker'")
    assert "uses the library wrongly" in (model_test_problem(module, module, crash) or "")
    keyword = failed("E   TypeError: parse() got an unexpected keyword argument 'strict'")
    positional = failed("E   TypeError: Foo.bar() takes 2 positional arguments but 3 were given")
    missing = failed("E   TypeError: key() missing 1 required positional argument: 'k'")
    for wrong in (keyword, positional, missing):
        assert "uses the library wrongly" in (model_test_problem(wrong, wrong, crash) or "")
    forwarded = "`wrapped(x, strict=True)` raises TypeError: got an unexpected keyword argument"
    assert model_test_problem(keyword, keyword, forwarded) is None
    attribute = failed("E   AttributeError: 'NoneType' object has no attribute 'group'")
    assert model_test_problem(attribute, attribute, crash) is None


# -- honesty ---------------------------------------------------------------------------------

MARKERS = {
    "patch": "GOLD-FIX-7f3a",
    "test_patch": "HIDDEN-TEST-91c2",
    "FAIL_TO_PASS": "test_f2p_marker_5d1e",
    "PASS_TO_PASS": "test_p2p_marker_a8b0",
    "hints_text": "HINT-MARKER-0c4d",
}


def test_no_prompt_and_no_sandbox_file_holds_the_tasks_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task row carries the gold patch, the hidden tests and their ids: the pipeline (every
    prompt of every stage, and the chooser's tests) runs on the issue and the repository only.
    While it runs, after every step, the whole sandbox (and the recipe's cache it is built from)
    is searched for the answers."""
    from swe_aci.env.config import EnvConfig
    from swe_aci.recipes import task_workspace
    from swe_aci.tasks import load_tasks

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where sandboxes are made
    source = wordcount_repo(tmp_path / "wordcount")
    row = {
        "instance_id": "wordcount-honest",
        "repo": "demo/wordcount",
        "problem_statement": ISSUE,
        "hints_text": MARKERS["hints_text"],
        "patch": "--- a/wordcount/counter.py\n+++ b/wordcount/counter.py\n@@ -21 +21 @@\n"
        f"-    return ranked[: n - 1]\n+    return ranked[:n]  # {MARKERS['patch']}\n",
        "test_patch": "--- /dev/null\n+++ b/tests/test_hidden.py\n@@ -0,0 +1 @@\n"
        f"+# {MARKERS['test_patch']}\n",
        "FAIL_TO_PASS": [f"tests/test_hidden.py::{MARKERS['FAIL_TO_PASS']}"],
        "PASS_TO_PASS": [f"tests/test_counter.py::{MARKERS['PASS_TO_PASS']}"],
        "environment": {"source": {"path": str(source)}, "test_cmd": "pytest -rA"},
    }
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps(row) + "\n")
    task = load_tasks(task_file).tasks[0]
    # the task's environment has no pytest: the issue's test cannot run, so the model writes
    # tests (which cannot run either) and the choice falls to the majority of samples
    script = [SCRIPT[0], PASSES_AT_BASE, REPRODUCTION, *SCRIPT[1:]]
    config = pipeline_config(script, "local")
    workspace = task_workspace(task, EnvConfig(backend="local"), cache_dir=tmp_path / "cache")
    searched: list[int] = []

    def search_the_sandbox(_step: object) -> None:
        files = [
            p for root in (scratch, tmp_path / "cache") for p in root.rglob("*") if p.is_file()
        ]
        assert any(p.name == "counter.py" for p in scratch.rglob("*"))  # the sandbox is there
        for path in files:
            content = path.read_bytes()
            for key, marker in MARKERS.items():
                assert marker.encode() not in content, f"{key} found in {path}"
        searched.append(len(files))

    result = run_episode(
        config,
        workspace,
        task.problem_statement,
        instance_id=task.instance_id,
        output_dir=tmp_path / "out",
        on_step=search_the_sandbox,
    )
    assert result.exit_status == "submitted" and len(searched) == 12
    trajectory = (tmp_path / "out/wordcount-honest/wordcount-honest.traj").read_text()
    prompts = [
        m["content"]
        for m in load_trajectory(tmp_path / "out/wordcount-honest/wordcount-honest.traj")["history"]
        if m["role"] == "user"
    ]
    assert len(prompts) == 7
    for key, marker in MARKERS.items():
        assert marker not in trajectory, key


def test_typing_names_a_model_forgot_to_import_are_imported() -> None:
    text = '"""Doc."""\n\nimport os\n\n\ndef first(items):\n    return items[0]\n'
    location = locations("m.py", text)[0]
    reply = fenced(
        "def first(items: List[int]) -> Optional[int]:\n    return items[0] if items else None\n"
    )
    edit = make_edit(text, location, reply, Linter(DEFAULT_LINT_SELECT))
    assert edit.texts["m.py"].startswith(
        '"""Doc."""\n\nimport os\nfrom typing import List, Optional\n'
    )
    with pytest.raises(Dropped, match="lint: F821"):
        make_edit(
            text,
            location,
            fenced("def first(items: List[int]):\n    return nothing\n"),
            Linter(DEFAULT_LINT_SELECT),
        )


def test_batch_and_stats_run_the_pipeline_like_the_loop(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from batch_helpers import generated_task_file
    from swe_aci.cli import app

    task_file = generated_task_file(
        tmp_path, 2, test_cmd="python -m pytest -rA -p no:cacheprovider"
    )
    fix = fenced("def add(a, b):\n    return a + b\n")
    test = fenced("from calc import add\n\n\ndef test_issue():\n    assert add(2, 3) == 5\n")
    out = tmp_path / "out"
    script = json.dumps([fix, fix, fix, test, test])
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
    batch = runner.invoke(
        app,
        ["batch", "--instances", str(task_file), "--env", "local", "--cache-dir", str(tmp_path / "c"), "--output-dir", str(out),
         "--config", "pipeline",
         "--set", "model.name=scripted", "--set", f"model.script={script}"],
    )  # fmt: skip
    assert batch.exit_code == 0, batch.output
    preds = json.loads((out / "preds.json").read_text())
    assert all("+    return a + b" in p["model_patch"] for p in preds.values()) and len(preds) == 2
    stats = runner.invoke(app, ["stats", str(out)])
    assert stats.exit_code == 0 and "submitted" in stats.output, stats.output


def test_a_rewrite_may_take_twice_the_functions_length_and_a_margin() -> None:
    short = "def f(x):\n    return x + 1\n" * 10  # 270 characters
    assert rewrite_tokens(short, 1024) == 2 * 270 // 3 + 128 < 1024
    assert rewrite_tokens(short * 10, 1024) == 1024
