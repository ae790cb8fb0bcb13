"""The plain reading of how an episode ended: patch or none, new files nothing uses, the exit."""

from __future__ import annotations

from swe_aci.trajectory.outcome import PatchKind, outcome_of


def new_file(path: str, *lines: str) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def changed(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n"
        f"+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


FIX = changed("calc.py", "    return a - b", "    return a + b")
REPRODUCE = new_file("reproduce.py", "from calc import add", "print(add(1, 2))")


def test_an_empty_submission_is_no_patch() -> None:
    outcome = outcome_of("submitted", "")
    assert outcome.kind is PatchKind.NONE and outcome.kind.value == 3
    assert outcome.summary == "no patch was produced (nothing changed); the model submitted"


def test_a_change_to_the_repository_is_a_fix() -> None:
    outcome = outcome_of("submitted", FIX + REPRODUCE)
    assert outcome.kind is PatchKind.FIX and outcome.kind.value == 0
    assert outcome.files == ("calc.py", "reproduce.py")
    assert outcome.summary == "a patch was produced (2 files changed); the model submitted"


def test_only_a_scratch_file_is_named_and_is_no_fix() -> None:
    outcome = outcome_of("submitted", REPRODUCE)
    assert outcome.kind is PatchKind.NEW_FILES_ONLY and outcome.kind.value == 4
    assert outcome.unused_new_files == ("reproduce.py",)
    assert outcome.summary.startswith(
        "no fix: the patch only adds files the agent created that nothing else uses (reproduce.py)"
    )


def test_new_files_that_another_new_file_uses_are_a_fix() -> None:
    module = new_file("pkg/helpers.py", "def helper():", "    return 1")
    user = new_file("pkg/api.py", "from pkg.helpers import helper", "VALUE = helper()")
    assert outcome_of("submitted", module + user).kind is PatchKind.FIX
    data = new_file("data.json", "{}")
    loader = new_file("load.py", "import json", "DATA = json.load(open('data.json'))")
    assert outcome_of("submitted", data + loader).unused_new_files == ("load.py",)
    mentioned = new_file("notes.py", "# helpers are in pkg/helpers")  # a comment, no import
    assert outcome_of("submitted", module + mentioned).kind is PatchKind.NEW_FILES_ONLY


def test_an_autosubmission_says_how_the_episode_ended_in_words() -> None:
    outcome = outcome_of("submitted (exit_format)", FIX)
    assert outcome.ended == "exit_format"
    assert outcome.summary == (
        "a patch was produced (1 file changed); the episode ended on the format error "
        "(exit_format), its changes were submitted automatically"
    )
    assert "submitted (exit_format)" not in outcome.summary
    nothing = outcome_of("exit_repeated", "")
    assert nothing.summary == (
        "no patch was produced (nothing changed); the episode ended on the repeated action "
        "(exit_repeated)"
    )
