"""The ACI gives the same observations whatever backend runs the environment."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fixtures.aci.support import run
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ACI
from swe_aci.env.bwrap.environment import bwrap_problem
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import make_environment

FILES: dict[str, str | bytes] = {
    "pkg/mod.py": "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(80)),
    "pkg/data.bin": b"\x00\x01",
    "docs/My Notes.md": "-v flag\nsee f12\n",
    ".hidden/f12.py": "f12 = 1\n",
}
ACTIONS = [
    "open pkg/mod.py 100",
    "scroll_down",
    "scroll_up",
    "goto 20",
    "edit 24:24\n    return undefined_name\nend_of_edit",
    "edit 24:24\n    return x * 11\nend_of_edit",
    "search_file 'return x +'",
    "search_dir f12",
    "search_dir -v docs",
    "find_file '*.md'",
    "open pkg/data.bin",
    'create "new dir/reproduce.py"',
    "edit 1:1\nprint('hi')\nend_of_edit",
    "cd pkg && search_dir f1 && ls",
    "open missing.py",
]
STR_REPLACE_SET = ["view", "create_file", "str_replace", "insert", "undo_edit", "submit"]
STR_REPLACE_ACTIONS = [
    "view .",
    "view pkg/mod.py 20 30",
    "str_replace pkg/mod.py\n    return x + 11\nend_of_old_str\n    return undefined\nend_of_new_str",
    "str_replace pkg/mod.py\n    return x + 11\nend_of_old_str\n    return x * 11\nend_of_new_str",
    "insert pkg/mod.py 0\nimport os\nend_of_new_str",
    "undo_edit pkg/mod.py",
    'create "new dir/reproduce.py"\nprint(1)\nend_of_file_text',
    "create scratch.txt\nx\nend_of_file_text",
    "undo_edit scratch.txt",
    "view scratch.txt",
    "view pkg/data.bin",
]
BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(bool(bwrap_problem()), reason="no bwrap")),
    pytest.param("docker", marks=pytest.mark.docker),
]


def transcript(
    backend: str, repo: Path, actions: list[str] = ACTIONS, aci_config: ACIConfig | None = None
) -> tuple[list[str], str]:
    config = EnvConfig(backend=backend, image="swe-aci/base:bookworm")
    env = make_environment(Workspace(config, str(repo)))
    try:
        aci = ACI(env, aci_config)
        outputs = [run(aci, action) for action in actions]
        outputs.append(str(aci.state()).replace(env.repo_path, "{REPO}"))
        return outputs, aci.execute("submit").submission or ""
    finally:
        env.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_observations_as_local(backend: str, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    local_outputs, local_patch = transcript("local", repo)
    outputs, patch = transcript(backend, repo)
    assert outputs == local_outputs
    assert patch == local_patch
    assert "new dir/reproduce.py" in patch and "+    return x * 11" in patch
    applied = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=patch, text=True, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_str_replace_set_gives_the_same_observations(
    backend: str, make_repo: Callable[..., Path]
) -> None:
    repo = make_repo(FILES)
    config = ACIConfig(commands=STR_REPLACE_SET)
    local_outputs, local_patch = transcript("local", repo, STR_REPLACE_ACTIONS, config)
    outputs, patch = transcript(backend, repo, STR_REPLACE_ACTIONS, config)
    assert outputs == local_outputs
    assert patch == local_patch
    assert "+    return x * 11" in patch and "+print(1)" in patch and "scratch" not in patch
    assert "has been edited" in local_outputs[3] and "{REPO}/pkg/mod.py" in local_outputs[0]
