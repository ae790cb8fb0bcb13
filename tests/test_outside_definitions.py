"""What the issue uses that only the repository's tests or docs define reaches the prompt of the
model-written reproduction: semver's issue takes its subclass "from the documentation"."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_tree
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.outside_definitions import MAX_LINES, outside_definitions
from swe_aci.trajectory.store import load_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VPREFIX = '''from semver import Version


class VPrefix(Version):
    """A version written with a leading v."""

    def __str__(self):
        return "v" + super().__str__()


def unrelated():
    return 1
'''
LONG = "class Long:\n" + "".join(f"    a{n} = {n}\n" for n in range(MAX_LINES + 1))
TREE = {
    "src/semver/version.py": "class Version:\n    def replace(self, **parts):\n        return Version()\n",
    "docs/advanced/vprefix.py": VPREFIX,
    "docs/advanced/long.py": LONG,
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef version():\n    return 1\n",
    "tests/helpers.py": "class Version:\n    pass\n\n\nclass Mine:\n    pass\n",
}
ISSUE = """`replace` forgets the subclass

Take `VPrefix` from the documentation, and `Long` too:

```python
class Mine(Version):
    pass

version = VPrefix.parse("v1.1.0")
print(version.replace(prerelease="dev"), Long, Mine, unrelated)
```
"""


def test_a_class_only_the_docs_define_is_shown_with_its_file_s_imports() -> None:
    found = outside_definitions(ISSUE, TREE)
    assert [(each.name, each.path) for each in found] == [("VPrefix", "docs/advanced/vprefix.py")]
    source = found[0].source
    assert source.startswith("from semver import Version\n\n\nclass VPrefix(Version):")
    assert "unrelated" not in source  # named, but not called: only a class or a called function
    # not shown: `Version` (the package defines it), `version` (a fixture, and not called),
    # `Mine` (the issue defines it), `Long` (longer than MAX_LINES)
    assert outside_definitions("`Version.replace` is wrong", TREE) == []


def test_the_model_writing_the_reproduction_is_shown_the_definition(tmp_path: Path) -> None:
    files = {
        str(path.relative_to(EXAMPLES / "wordcount")): path.read_text()
        for path in (EXAMPLES / "wordcount").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    files["docs/tally.py"] = "def tally(text):\n    return len(text.split())\n"
    commit_tree(tmp_path / "repo", files)
    issue = "top_words returns one word too few; `tally(text)` from the docs counts them all.\n"
    config = load_config(
        "pipeline",
        [
            "model.name=scripted",
            f"model.script={json.dumps(['no test here', 'nor here'])}",
            "env.backend=local",
        ],
    )
    run_episode(
        config, Workspace(config.env, str(tmp_path / "repo")), issue, instance_id="w",
        output_dir=tmp_path / "out",
    )  # fmt: skip
    history = load_trajectory(tmp_path / "out/w/w.traj")["history"]
    prompts = [str(message["content"]) for message in history if message["role"] == "user"]
    reproduce = [prompt for prompt in prompts if "Write a pytest test" in prompt]
    assert reproduce and all(
        "The issue's `tally` is defined in the repository's docs/tally.py" in prompt
        and "def tally(text):\n    return len(text.split())\n```" in prompt
        and "the definitions above, then one function `test_issue`" in prompt
        for prompt in reproduce
    )
