"""The working copy's directories that come first on the import path (recipes/import_roots.py):
read from what the install left in the virtualenv, so a `lib/` or `src/` project imports the
agent's edits, not the cached base tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from batch_helpers import recipe_row, write_rows
from env_helpers import skip_unavailable
from swe_aci.env import EnvConfig, make_environment
from swe_aci.recipes import task_workspace
from swe_aci.recipes.import_roots import import_roots
from swe_aci.tasks import load_tasks


def site_packages(venv: Path) -> Path:
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return site


def test_roots_come_from_pth_lines_egg_links_and_the_editable_finder(tmp_path: Path) -> None:
    tree, venv = tmp_path / "tree", tmp_path / "venv"
    for directory in ("lib", "rel", "pkgs/one", "code/inner", "src"):
        (tree / directory).mkdir(parents=True)
    site = site_packages(venv)
    (site / "easy-install.pth").write_text(f"{tree / 'lib'}\n{tmp_path / 'elsewhere'}\n")
    (site / "distutils-precedence.pth").write_text("import os; os.getenv('X')\n# a comment\n")
    (site / "relative.pth").write_text("../../../../tree/rel\n")  # read against site-packages
    (site / "two.egg-link").write_text(f"{tree / 'pkgs' / 'one'}\n.\n")
    (site / "__editable___demo_0_1_finder.py").write_text(
        "import sys\n"
        f"MAPPING: dict[str, str] = {{'demo': {str(tree / 'code' / 'inner' / 'demo')!r}, "
        f"'solo': {str(tree / 'solo.py')!r}}}\n"
    )
    (site / "__editable__.root.pth").write_text(f"{tree}\n")  # the root itself is always last

    assert import_roots(venv, tree) == ("code/inner", "lib", "rel", "pkgs/one", "src")


def test_a_plain_tree_has_no_roots_and_unreadable_finders_are_skipped(tmp_path: Path) -> None:
    tree, venv = tmp_path / "tree", tmp_path / "venv"
    (tree / "src" / "__init__.py").parent.mkdir(parents=True)
    (tree / "src" / "__init__.py").write_text("")  # a package named src, not a src layout
    site = site_packages(venv)
    (site / "__editable___x_finder.py").write_text("MAPPING = {'x': f'{unknown}'}\n")
    (site / "__editable___y_finder.py").write_text("MAPPING = {\n")
    (site / "__editable___z_finder.py").write_bytes(b"MAPPING = {'z': '/x'}\0\n")

    assert import_roots(venv, tree) == ()


LIB_LAYOUT = {
    "lib/calc.py": "def add(a, b):\n    return a - b\n",
    "setup.py": (
        "from setuptools import setup\n"
        'setup(name="calc", version="0.1", package_dir={"": "lib"}, py_modules=["calc"])\n'
    ),
}


@pytest.mark.parametrize("backend", ["bwrap", "local"])
def test_a_lib_layout_project_imports_the_working_copys_edit(tmp_path: Path, backend: str) -> None:
    skip_unavailable(backend)
    project = tmp_path / "calc"
    for relative, content in LIB_LAYOUT.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(content)
    row = recipe_row(
        "demo__calc-lib", {"path": str(project)}, python="3.9",
        install=["pip install --no-build-isolation --no-deps -e ."],
    )  # fmt: skip
    task = load_tasks(write_rows(tmp_path / "tasks.jsonl", [row])).tasks[0]
    prepared = task_workspace(task, EnvConfig(backend=backend), cache_dir=tmp_path / "cache")
    with make_environment(prepared) as env:
        env.run("sed -i 's/a - b/a + b/' lib/calc.py")
        for where in (".", "/tmp"):
            output = env.run(f"(cd {where} && python -c 'import calc; print(calc.add(2, 3))')")
            assert output.output.strip() == "5", output.output
