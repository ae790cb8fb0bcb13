"""Windowed rewrites: the window of a long target shown without line numbers, the reply spliced
back in place (echoed context and marks taken off, re-indented), checked as a block is; and the
pipeline asking for one on a long function, with a scripted model through the real sandbox."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.aci.config import DEFAULT_LINT_SELECT
from swe_aci.aci.lint import Linter
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.repair import Dropped
from swe_aci.pipeline.skeleton import locations
from swe_aci.pipeline.windows import FAILS_HERE, window_edit, window_of
from swe_aci.trajectory.store import load_trajectory

LINT = Linter(DEFAULT_LINT_SELECT)
ISSUE = "partition_all's last partition holds the padding: len(seq) is not a multiple of n"

SOURCE = textwrap.dedent('''\
    """Iteration helpers."""

    from itertools import zip_longest

    no_pad = object()


    def partition_all(n, seq):
        """Partition all elements of sequence into tuples of length at most n.

        The final tuple may be shorter.

        >>> list(partition_all(2, [1, 2, 3]))
        [(1, 2), (3,)]
        """
        args = [iter(seq)] * n
        it = zip_longest(*args, fillvalue=no_pad)
        try:
            prev = next(it)
        except StopIteration:
            return
        for item in it:
            yield prev
            prev = item
        if prev[-1] is no_pad:
            try:
                yield prev[: len(seq) % n + 1]
            except TypeError:
                lo, hi = 0, n
                while lo < hi:
                    mid = (lo + hi) // 2
                    if prev[mid] is no_pad:
                        hi = mid
                    else:
                        lo = mid + 1
                yield prev[:lo]
        else:
            yield prev
''')
PATH = "toolz/itertoolz.py"
BUGGY = "            yield prev[: len(seq) % n + 1]\n"
FIXED = "            yield prev[: len(seq) % n]\n"


def partition_all():
    return next(loc for loc in locations(PATH, SOURCE) if loc.qualname == "partition_all")


def test_the_window_holds_the_issues_words_in_whole_statements_without_docstring_or_open_end():
    window = window_of(ISSUE, SOURCE, partition_all(), 12, None)
    assert window is not None
    lines = SOURCE.splitlines()
    shown = lines[window.start - 1 : window.end]
    assert "args = [iter(seq)] * n" in shown[0]  # after the def line and the docstring
    assert any("len(seq) % n" in line for line in shown)
    assert not shown[-1].rstrip().endswith(":")  # no block header whose body is not shown
    assert window.indent == 4
    assert window.code(SOURCE).splitlines()[:3] == [
        "def partition_all(n, seq):", "    ...", "    args = [iter(seq)] * n"
    ]  # fmt: skip


def test_the_window_grows_to_whole_statements_and_marks_the_failing_line():
    text = "def f(a):\n    x = call(\n        a,\n        1,\n    )\n    y = x + 1\n    return y\n"
    location = locations("m.py", text)[0]
    window = window_of("call y", text, location, 3, failing=5)
    assert window is not None
    assert (window.start, window.end) == (2, 7)  # lines 5-7 at first: never half of `call(`
    assert window.code(text).splitlines() == [
        "def f(a):", "    x = call(", "        a,", "        1,", "    )" + FAILS_HERE,
        "    y = x + 1", "    return y",
    ]  # fmt: skip


def test_the_corrected_window_is_spliced_back_in_place_at_its_indentation():
    window = window_of(ISSUE, SOURCE, partition_all(), 12, None)
    assert window is not None
    shown = window.code(SOURCE)
    reply = "Here is the fix:\n```python\n" + shown.replace(
        "yield prev[: len(seq) % n + 1]", "yield prev[: len(seq) % n]"
    ) + "\n```\n"  # fmt: skip
    edit = window_edit(SOURCE, window, reply, LINT)
    assert edit.texts[PATH] == SOURCE.replace(BUGGY, FIXED)
    assert edit.source == "window"


def test_echoed_context_line_numbers_and_the_failing_mark_are_taken_off():
    window = window_of(ISSUE, SOURCE, partition_all(), 12, None)
    assert window is not None
    before = SOURCE.splitlines()[window.start - 2]  # the docstring's last line
    fixed = window.code(SOURCE).replace("% n + 1]", "% n]").splitlines()
    assert fixed[:2] == ["def partition_all(n, seq):", "    ..."]
    reply_lines = ["from typing import Any", "", before.strip(), *fixed]  # an invented preamble
    numbered = [f"{number} | {line}" for number, line in enumerate(reply_lines, start=1)]
    reply = "```python\n" + "\n".join(numbered) + FAILS_HERE + "\n```"
    edit = window_edit(SOURCE, window, reply, LINT)
    assert edit.texts[PATH] == SOURCE.replace(BUGGY, FIXED)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda code: code, "unchanged"),
        (lambda code: code + "\n# a comment", "unchanged"),
        (lambda code: code.replace("next(it)", "next(it"), "no longer parses"),
        (lambda code: code.replace("% n + 1]", "% width]"), "undefined name 'width'"),
        (lambda code: "I would change the slice.", "no longer parses"),
    ],
)
def test_a_window_that_changes_no_code_breaks_the_file_or_adds_a_lint_error_is_dropped(
    change, reason
):
    window = window_of(ISSUE, SOURCE, partition_all(), 12, None)
    assert window is not None
    reply = "```python\n" + change(window.code(SOURCE)) + "\n```"
    with pytest.raises(Dropped, match=reason):
        window_edit(SOURCE, window, reply, LINT)


def test_a_prose_reply_is_no_code_change():
    window = window_of(ISSUE, SOURCE, partition_all(), 12, None)
    assert window is not None
    with pytest.raises(Dropped):
        window_edit(SOURCE, window, "", LINT)


def test_the_pipeline_asks_a_long_function_for_a_window_first_and_submits_its_fix(
    tmp_path: Path,
) -> None:
    commit_tree(
        tmp_path / "repo",
        {
            PATH: SOURCE,
            "toolz/__init__.py": "from toolz.itertoolz import partition_all\n",
            "tests/test_itertoolz.py": "from toolz import partition_all\n\n\n"
            "def test_even():\n    assert list(partition_all(2, [1, 2])) == [(1, 2)]\n",
        },
    )
    window = window_of(ISSUE, SOURCE, partition_all(), 16, None)
    assert window is not None
    fixed = window.code(SOURCE).replace("% n + 1]", "% n]")
    test = (
        "from toolz import partition_all\n\n\ndef test_issue():\n"
        "    assert list(partition_all(2, [1, 2, 3])) == [(1, 2), (3,)]\n"
    )
    script = [f"```python\n{test}```", f"```python\n{fixed}\n```"]
    config = load_config(
        "pipeline",
        ["model.name=scripted", f"model.script={json.dumps(script)}", "env.backend=local",
         "strategy.repair.temperatures=[0.0]", "strategy.repair.more_temperatures=[]",
         "strategy.repair.rewrite_max_lines=10", "strategy.repair.window_lines=16",
         "strategy.repair.templates=0"],
    )  # fmt: skip
    result = run_episode(
        config, Workspace(config.env, str(tmp_path / "repo")), ISSUE, instance_id="t",
        output_dir=tmp_path / "out",
    )  # fmt: skip
    assert result.exit_status == "submitted"
    assert f"+{FIXED}" in result.submission
    steps = load_trajectory(tmp_path / "out/t/t.traj")["trajectory"]
    repair = next(step for step in steps if step["action"].startswith("repair 1/1"))
    assert repair["pipeline"]["source"] == "window"
    assert repair["pipeline"]["window"] == [window.start, window.end]
    history = load_trajectory(tmp_path / "out/t/t.traj")["history"]
    prompt = next(m["content"] for m in history if "lines left out" in m["content"])
    # the def line, the docstring left out, no line numbers
    assert "```python\ndef partition_all(n, seq):\n    ...\n    args = [iter(seq)] * n\n" in prompt
    assert "    else:\n        yield prev\n```" in prompt  # the blocks it was in shown to their end


def test_a_window_never_ends_in_a_block_header_of_several_lines():
    """tomlkit's `_parse_string` (bench at ec4ad41): the window ended on the `):` of an `if (...)
    or (...):` over nine lines, cut one line at a time; every reply then failed to parse."""
    body = "".join(f"            total += {number}\n" for number in range(12))
    text = (
        "def parse(code, escaped):\n    total = 0\n    while True:\n        total += 1\n"
        "        if (\n            code == 1\n            and not escaped\n        ) or (\n"
        "            code == 2\n        ):\n" + body + "        return total\n"
    )
    location = locations("p.py", text)[0]
    for failing in range(2, 11):
        window = window_of("code escaped", text, location, 3, failing)
        if window is None:
            continue
        shown = text.splitlines()[window.start - 1 : window.end]
        assert not shown[-1].rstrip().endswith((":", "(", "escaped", "code == 2")), shown
