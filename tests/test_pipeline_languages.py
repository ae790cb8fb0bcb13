"""The pipeline on repositories in other languages, with the scripted model through the real
sandbox: a small JavaScript repository and a small Go repository with one bug each; a reply
whose block breaks the syntax is dropped with tree-sitter's reason, the correct block is the
submission, and the patch fixes the bug as the repository's own tests (node's runner, `go test`)
show. Also the language of a repository, the edit check and the canonical form."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import commit_tree
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.blocks import block_edit
from swe_aci.pipeline.localize import candidate_locations
from swe_aci.pipeline.repair import Dropped
from swe_aci.pipeline.structure import (
    canonical,
    fence,
    language,
    repository_language,
    syntax_problem,
)
from swe_aci.retrieval.documents import Document
from swe_aci.trajectory.store import load_trajectory

STATS_JS = """'use strict';

const PRECISION = 2;

/** The mean of the values. */
function mean(values) {
  let total = 0;
  for (const value of values) {
    total += value;
  }
  return total / (values.length - 1);
}

class Histogram {
  constructor() {
    this.counts = new Map();
  }

  add(value) {
    this.counts.set(value, (this.counts.get(value) || 0) + 1);
  }
}

module.exports = { mean, Histogram, PRECISION };
"""
JAVASCRIPT_REPO = {
    "package.json": '{"name": "stats", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "lib/stats.js": STATS_JS,
    "lib/format.js": "function round(x, digits) {\n  return Number(x.toFixed(digits));\n}\n\n"
    "module.exports = { round };\n",
    "test/stats.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\nconst { mean } = require('../lib/stats.js');\n\n"
    "test('mean', () => {\n  assert.strictEqual(mean([1, 2, 3]), 2);\n});\n",
}
JAVASCRIPT_ISSUE = (
    "mean([1, 2, 3]) returns 3 instead of 2: it divides the total by one fewer than the number "
    "of values.\n"
)

COUNTER_GO = """package counter

import "sort"

// Counter counts words.
type Counter struct {
\tcounts map[string]int
}

// New returns an empty counter.
func New() *Counter {
\treturn &Counter{counts: map[string]int{}}
}

// Add counts one occurrence of word.
func (c *Counter) Add(word string) {
\tc.counts[word]++
}

// Top returns the n most frequent words, most frequent first.
func (c *Counter) Top(n int) []string {
\twords := make([]string, 0, len(c.counts))
\tfor word := range c.counts {
\t\twords = append(words, word)
\t}
\tsort.Slice(words, func(i, j int) bool {
\t\tif c.counts[words[i]] != c.counts[words[j]] {
\t\t\treturn c.counts[words[i]] > c.counts[words[j]]
\t\t}
\t\treturn words[i] < words[j]
\t})
\tif n < len(words) {
\t\twords = words[:n-1]
\t}
\treturn words
}
"""
GO_REPO = {
    "go.mod": "module example.com/wordfreq\n\ngo 1.19\n",
    "counter/counter.go": COUNTER_GO,
    "counter/counter_test.go": 'package counter\n\nimport "testing"\n\n'
    "func TestTop(t *testing.T) {\n\tc := New()\n"
    '\tfor _, w := range []string{"a", "b", "a", "c", "a", "b"} {\n\t\tc.Add(w)\n\t}\n'
    '\tif got := c.Top(2); len(got) != 2 || got[0] != "a" || got[1] != "b" {\n'
    '\t\tt.Fatalf("Top(2) = %v", got)\n\t}\n}\n',
    "split/split.go": 'package split\n\nimport "strings"\n\n// Words splits text on spaces.\n'
    "func Words(text string) []string {\n\treturn strings.Fields(text)\n}\n",
    "tools/gen.py": "print('a helper script in Python')\n",
}
GO_ISSUE = "Top(2) returns only the most frequent word: it returns one word fewer than asked.\n"


def block(path: str, old: str, new: str) -> str:
    return f"{path}\n```\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


def run_pipeline(
    tmp_path: Path, files: dict[str, str], issue: str, script: list[str], *overrides: str
):
    repo = tmp_path / "repo"
    commit_tree(repo, files)
    config = load_config(
        "pipeline",
        [
            "model.name=scripted",
            f"model.script={json.dumps(script)}",
            "env.backend=local",
            "strategy.repair.temperatures=[0.0, 0.8]",
            *overrides,
        ],
    )
    result = run_episode(
        config, Workspace(config.env, str(repo)), issue, instance_id="t",
        output_dir=tmp_path / "out",
    )  # fmt: skip
    steps = load_trajectory(tmp_path / "out/t/t.traj")["trajectory"]
    return result, {step["action"]: step for step in steps}, repo


def patched_copy(tmp_path: Path, files: dict[str, str], patch: str) -> Path:
    """The repository at its base with `patch` applied, in a directory of its own."""
    repo = tmp_path / "patched"
    commit_tree(repo, files)
    subprocess.run(["git", "apply", "-"], cwd=repo, input=patch, text=True, check=True)
    return repo


def test_the_pipeline_fixes_a_javascript_bug_and_drops_the_reply_that_breaks_the_syntax(
    tmp_path: Path,
) -> None:
    old = "  return total / (values.length - 1);\n"
    broken = block("lib/stats.js", old, "  return total / (values.length;\n")
    right = block("lib/stats.js", old, "  return total / values.length;\n")
    result, steps, _ = run_pipeline(tmp_path, JAVASCRIPT_REPO, JAVASCRIPT_ISSUE, [broken, right])
    assert result.exit_status == "submitted"
    assert "-  return total / (values.length - 1);\n+  return total / values.length;\n" in (
        result.submission
    )
    assert list(steps) == [
        "localize",
        "reproduce",
        "repair 1/2 (T=0) lib/stats.js::mean",
        "repair 2/2 (T=0.8) lib/stats.js::mean",
        "tests at the base",
        "validate 1",
        "choose",
    ]
    assert steps["localize"]["pipeline"]["chosen"] == "lib/stats.js::mean"
    assert "lib/format.js::round" in steps["localize"]["pipeline"]["candidates"]
    assert steps["reproduce"]["observation"] == (
        "skipped: the reproduction tests are pytest tests; the repository's code is JavaScript"
    )
    dropped = steps["repair 1/2 (T=0) lib/stats.js::mean"]
    assert dropped["pipeline"]["dropped"] == (
        "block 1: dropped: the file no longer parses (line 11: missing `)`)"
    )
    assert "```javascript\n" in dropped["query"][0]["content"]  # the region's fence
    assert "no regression signal" in steps["tests at the base"]["observation"]
    assert "chose the edit of lib/stats.js::mean" in steps["choose"]["observation"]
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the fix is not run")
    node = ["node", "--test", "test/"]
    base = subprocess.run(node, cwd=tmp_path / "repo", capture_output=True, text=True)
    fixed = patched_copy(tmp_path, JAVASCRIPT_REPO, result.submission)
    after = subprocess.run(node, cwd=fixed, capture_output=True, text=True)
    assert base.returncode != 0 and after.returncode == 0, after.stdout


HISTOGRAM_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { Histogram } = require('../lib/stats.js');\n\ntest('add counts', () => {\n"
    "  const h = new Histogram();\n  h.add(1);\n  h.add(1);\n"
    "  assert.strictEqual(h.counts.get(1), 2);\n});\n"
)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_repositorys_test_command_turns_away_a_candidate_that_breaks_its_tests(
    tmp_path: Path,
) -> None:
    """`validation.suite_command` runs the repository's own tests (passing at the base: the
    test of the bug is not there yet) on each candidate; the one that breaks them loses."""
    files = {**JAVASCRIPT_REPO, "test/stats.test.js": HISTOGRAM_TEST}
    old = "  return total / (values.length - 1);\n"
    fix = block("lib/stats.js", old, "  return total / values.length;\n")
    breaks_add = fix + block(
        "lib/stats.js",
        "    this.counts.set(value, (this.counts.get(value) || 0) + 1);\n",
        "    this.counts.set(value, 1);\n",
    )
    result, steps, _ = run_pipeline(
        tmp_path, files, JAVASCRIPT_ISSUE, [breaks_add, fix],
        "strategy.validation.suite_command='node --test test/'",
    )  # fmt: skip
    assert result.exit_status == "submitted"
    assert "this.counts.set" not in result.submission
    assert "+  return total / values.length;" in result.submission
    base = steps["tests at the base"]
    assert base["pipeline"] == {"command": "node --test test/", "passed": True}
    assert "regressions 1" in steps["validate 1"]["observation"]
    assert "regressions 0" in steps["validate 2"]["observation"]


def test_the_pipeline_fixes_a_go_bug(tmp_path: Path) -> None:
    old = "\t\twords = words[:n-1]\n"
    broken = block("counter/counter.go", old, "\t\twords = words[:n\n")
    right = block("counter/counter.go", old, "\t\twords = words[:n]\n")
    result, steps, _ = run_pipeline(tmp_path, GO_REPO, GO_ISSUE, [broken, right])
    assert result.exit_status == "submitted"
    assert "-\t\twords = words[:n-1]\n+\t\twords = words[:n]\n" in result.submission
    assert steps["localize"]["pipeline"]["chosen"] == "counter/counter.go::Counter.Top"
    assert not any(".py" in label for label in steps["localize"]["pipeline"]["candidates"])
    assert "missing `]`" in steps["repair 1/2 (T=0) counter/counter.go::Counter.Top"]["observation"]
    assert steps["reproduce"]["pipeline"]["skipped"].endswith("the repository's code is Go")
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed: the fix is not run")
    environment = {**os.environ, "GOCACHE": str(tmp_path / "gocache")}
    command = [go, "test", "./..."]
    base = subprocess.run(command, cwd=tmp_path / "repo", capture_output=True, env=environment)
    fixed = patched_copy(tmp_path, GO_REPO, result.submission)
    after = subprocess.run(command, cwd=fixed, capture_output=True, text=True, env=environment)
    assert base.returncode != 0 and after.returncode == 0, after.stdout


def test_a_repository_is_in_the_language_of_most_of_its_source_files() -> None:
    assert repository_language(GO_REPO) == "Go"  # its one Python script does not count more
    assert repository_language(["a.ts", "b.tsx", "c.js", "d.py"]) == "JavaScript"
    assert repository_language(["a.py", "b.go", "tests/c.go", "tests/d.go"]) == "Python"
    assert repository_language(["README.md"]) == "Python"
    assert (language("x.h"), language("x.cc"), language("Rakefile")) == ("C", "C", "Ruby")
    assert (fence("a.py"), fence("a.tsx"), fence("a.rs")) == ("python", "tsx", "rust")


def test_an_edit_is_judged_by_the_parse_errors_it_adds() -> None:
    broken = "func f() {\n\treturn 1\n"  # already missing its `}`
    assert syntax_problem(broken, broken.replace("1", "2"), "f.go", 2, 2, 1) is None
    added = syntax_problem("package p\n", "package p\nfunc (\n", "p.go", 2, 1, 1)
    assert added is not None and added.startswith("the file no longer parses (line 2")
    assert syntax_problem("x = 1\n", "x = (\n", "a.py", 1, 1, 1) == "the file no longer parses"


def test_an_edit_of_comments_or_formatting_alone_is_no_change() -> None:
    before = "function f(a) {\n  return a + 1; // one more\n}\n"
    reformatted = "function f(a) {\n    return a+1; // add one\n}\n"
    assert canonical(before, "f.js") == canonical(reformatted, "f.js")
    assert canonical(before, "f.js") != canonical(before.replace("+ 1", "+ 2"), "f.js")
    reply = block("f.js", "  return a + 1; // one more\n", "  return a + 1; // plus one\n")
    with pytest.raises(Dropped, match="change no code"):
        block_edit({"f.js": before}, reply, "f.js", None)


def test_a_block_names_its_file_by_the_languages_endings() -> None:
    texts = {"src/a.ts": "export const a = 1;\n", "src/b.ts": "export const b = 1;\n"}
    reply = block("src/b.ts", "export const b = 1;\n", "export const b = 2;\n")
    edit = block_edit(texts, reply, "src/a.ts", None)
    assert edit.texts == {"src/b.ts": "export const b = 2;\n"} and edit.source == "block"


def test_a_file_of_a_stack_trace_comes_first() -> None:
    documents = [Document(path, GO_REPO[path]) for path in ("counter/counter.go", "split/split.go")]
    issue = "Top(2) is wrong.\n\npanic: boom\n\t/home/u/wordfreq/split/split.go:7 +0x1d\n"
    found, _ = candidate_locations(issue, documents, files=1, functions=5)
    assert [location.label for location in found] == ["split/split.go::Words"]
