"""The RAG baseline's parts on small generated repositories: documents, BM25, packing, oracle,
diff extraction and the apply check."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.env.base import Environment
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import make_environment
from swe_aci.models.base import estimate_tokens
from swe_aci.rag.bm25 import RetrievalUnavailable, rank
from swe_aci.rag.config import load_rag_config
from swe_aci.rag.documents import (
    BaseTree,
    Document,
    is_test_path,
    patched_files,
)
from swe_aci.rag.patch import apply_diff, extract_diff
from swe_aci.rag.prompt import build_prompt, numbered

LIBRARY = {
    "calendar_tools/dates.py": (
        "def parse_iso_date(text):\n"
        "    year, month, day = text.split('-')\n"
        "    return int(year), int(day), int(month)\n"
    ),
    "calendar_tools/render.py": "def render_table(rows):\n    return '\\n'.join(rows)\n",
    "calendar_tools/colors.py": "PALETTE = ['red', 'green', 'blue']\n",
    "calendar_tools/__init__.py": "",
    "tests/test_dates.py": "from calendar_tools.dates import parse_iso_date\n",
    "README.md": "A calendar library: tables and colors.\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0binary",
}

ISSUE = (
    "parse_iso_date swaps the month and the day\n\n"
    "`parse_iso_date('2024-03-05')` returns (2024, 5, 3) instead of (2024, 3, 5)."
)

GOLD = """\
diff --git a/calendar_tools/dates.py b/calendar_tools/dates.py
--- a/calendar_tools/dates.py
+++ b/calendar_tools/dates.py
@@ -1,3 +1,3 @@
 def parse_iso_date(text):
     year, month, day = text.split('-')
-    return int(year), int(day), int(month)
+    return int(year), int(month), int(day)
"""


@pytest.fixture
def library_env(make_repo: Callable[..., Path]) -> Iterator[Environment]:
    repo = make_repo(LIBRARY)
    os.symlink("calendar_tools/dates.py", repo / "link.py")
    env = make_environment(Workspace(EnvConfig(backend="local"), str(repo)))
    yield env
    env.close()


def test_sources_are_text_source_files_without_tests(library_env: Environment) -> None:
    documents = BaseTree(library_env, 10_000).sources([".py", ".md", ".png"], include_tests=False)
    paths = [document.path for document in documents]
    assert paths == [
        "README.md",
        "calendar_tools/__init__.py",
        "calendar_tools/colors.py",
        "calendar_tools/dates.py",
        "calendar_tools/render.py",
    ]  # no binary logo, no test file, and the uncommitted symlink is not in the base tree
    with_tests = BaseTree(library_env, 10_000).sources([".py"], include_tests=True)
    assert "tests/test_dates.py" in [document.path for document in with_tests]
    small = BaseTree(library_env, 40).sources([".py"], include_tests=False)
    assert [document.path for document in small] == [
        "calendar_tools/__init__.py",
        "calendar_tools/colors.py",
    ]


def test_committed_symlinks_are_not_documents(make_repo: Callable[..., Path]) -> None:
    outside = make_repo({"secret.py": "TOKEN = 'do not read'\n"}, name="outside")
    repo = make_repo({"a.py": "x = 1\n"})
    os.symlink(outside / "secret.py", repo / "leak.py")
    commit_tree(repo, {})
    env = make_environment(Workspace(EnvConfig(backend="local"), str(repo)))
    try:
        documents = BaseTree(env, 10_000).sources([".py"], include_tests=True)
        assert [document.path for document in documents] == ["a.py"]
        assert BaseTree(env, 10_000).oracle("--- a/leak.py\n+++ b/leak.py\n") == []
    finally:
        env.close()


def test_readmes_are_the_root_readme_files(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.rst": "top\n", "docs/README.md": "nested\n", "readme.txt": "t\n"})
    env = make_environment(Workspace(EnvConfig(backend="local"), str(repo)))
    try:
        readmes = BaseTree(env, 10_000).readmes()
        assert [document.path for document in readmes] == ["README.rst", "readme.txt"]
    finally:
        env.close()


def test_test_paths_follow_swe_bench() -> None:
    assert is_test_path("tests/test_dates.py")
    assert is_test_path("pkg/testing/utils.py")
    assert not is_test_path("pkg/contest.py")
    assert not is_test_path("pkg/latest_version.py")


def test_bm25_ranks_the_relevant_file_first(library_env: Environment) -> None:
    documents = BaseTree(library_env, 10_000).sources([".py", ".md"], include_tests=False)
    ranking = rank(ISSUE, documents)
    assert ranking[0].document.path == "calendar_tools/dates.py"
    assert ranking[0].score > ranking[1].score
    assert sorted(ranked.document.path for ranked in ranking) == sorted(
        document.path for document in documents
    )


def test_bm25_with_no_shared_word_keeps_path_order() -> None:
    documents = [Document("a.py", "alpha"), Document("b.py", "beta")]
    assert [ranked.document.path for ranked in rank("zeta", documents)] == ["a.py", "b.py"]
    assert rank("anything", []) == []


def test_missing_bm25s_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(RetrievalUnavailable, match=r"pip install 'swe-aci\[rag\]'"):
        rank("issue", [Document("a.py", "x")])


def test_packing_respects_the_budget_in_rank_order() -> None:
    config = load_rag_config(None, ["model.name=scripted", "model.script=[x]"])
    empty = build_prompt(config, ISSUE, [], 100_000)
    documents = [
        Document("first.py", "a = 1\n" * 40),  # about 60 tokens
        Document("huge.py", "b = 2\n" * 2000),  # about 3000 tokens: never fits
        Document("second.py", "c = 3\n" * 40),
        Document("third.py", "d = 4\n" * 40),
    ]
    budget = empty.tokens + 200
    prompt = build_prompt(config, ISSUE, documents, budget)
    assert prompt.included == ["first.py", "second.py"]
    assert prompt.skipped == ["huge.py", "third.py"]
    assert empty.tokens < prompt.tokens <= budget
    user = prompt.messages[1]["content"]
    assert user.index("[start of first.py]") < user.index("[start of second.py]")
    assert "1 a = 1\n2 a = 1" in user
    assert ISSUE in user
    assert prompt.tokens == sum(estimate_tokens(m["content"]) for m in prompt.messages)


def test_a_prompt_over_budget_without_files_has_no_files() -> None:
    config = load_rag_config(None, ["model.name=scripted", "model.script=[x]"])
    prompt = build_prompt(config, ISSUE, [Document("a.py", "x = 1\n")], 10)
    assert prompt.included == []
    assert prompt.skipped == ["a.py"]


def test_numbered_lines() -> None:
    assert numbered("a\n\nb\n") == "1 a\n2 \n3 b"


def test_oracle_picks_the_files_the_gold_patch_changes(library_env: Environment) -> None:
    patch = (
        GOLD
        + "--- a/calendar_tools/colors.py\n+++ b/calendar_tools/colors.py\n@@ -1 +1 @@\n"
        + "-PALETTE = ['red', 'green', 'blue']\n+PALETTE = ['red']\n"
        + "--- /dev/null\n+++ b/calendar_tools/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    )
    documents = BaseTree(library_env, 10_000).oracle(patch)
    assert [document.path for document in documents] == [
        "calendar_tools/dates.py",
        "calendar_tools/colors.py",
    ]
    assert documents[0].text == LIBRARY["calendar_tools/dates.py"]


def test_patched_files_reads_headers_only() -> None:
    sql = "--- a/db.sql\n+++ b/db.sql\n@@ -1,2 +1,1 @@\n--- a comment\n select 1;\n"
    assert patched_files(sql) == ["db.sql"]
    assert patched_files("--- a/x.py\t2024-01-01\n+++ b/x.py\n") == ["x.py"]


BARE = "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


@pytest.mark.parametrize(
    "reply",
    [
        f"Here is the fix.\n<patch>\n{BARE}</patch>\nDone.",
        f"Sure:\n```diff\n{BARE}```\n",
        f"```python\nprint('not it')\n```\n```\n{BARE}```",
        f"The fix:\n\n{BARE}",
        f"<patch>\n```diff\n{BARE}```\n</patch>",
    ],
)
def test_extract_diff_finds_the_diff(reply: str) -> None:
    extracted = extract_diff(reply)
    assert extracted is not None
    assert extracted.startswith("--- a/f.py\n")
    assert "-x = 1\n+x = 2\n" in extracted


def test_extract_diff_without_a_diff() -> None:
    assert extract_diff("I could not find the bug.") is None
    assert extract_diff("```python\nx = 2\n```") is None


def test_apply_diff_keeps_a_valid_diff(library_env: Environment) -> None:
    result = apply_diff(library_env, GOLD)
    assert result.reason is None
    assert result.method == "git apply"
    assert "+    return int(year), int(month), int(day)" in result.model_patch
    assert ".git" not in result.model_patch


def test_apply_diff_recounts_wrong_hunk_lengths(library_env: Environment) -> None:
    miscounted = GOLD.replace("@@ -1,3 +1,3 @@", "@@ -1,7 +1,9 @@")
    result = apply_diff(library_env, miscounted)
    assert result.method == "git apply --recount"
    assert "@@ -1,3 +1,3 @@" in result.model_patch


def test_apply_diff_rejects_a_diff_that_does_not_apply(library_env: Environment) -> None:
    wrong = GOLD.replace("int(day), int(month)", "int(month), int(month)")
    result = apply_diff(library_env, wrong)
    assert result.model_patch == ""
    assert result.reason is not None
    assert result.reason.startswith("git apply failed: ")
    assert library_env.submission().patch == ""


def test_apply_diff_refuses_paths_outside_the_repository(
    library_env: Environment, tmp_path: Path
) -> None:
    escape = "--- /dev/null\n+++ b/../../escaped.py\n@@ -0,0 +1 @@\n+x = 1\n"
    result = apply_diff(library_env, escape)
    assert result.model_patch == ""
    assert not list(Path(library_env.repo_path).parents[1].glob("escaped.py"))
