"""The repository's own tests a candidate is checked against: the test files that import the
changed module (then those that mention it), and the examples in the changed modules'
docstrings, run as doctests (`>>> f(x)` and the output it documents: the behaviour a library
promises, and the only regression signal of one that ships no tests). They run as the
repository's pytest configuration allows: when it adds options through `addopts` (`--cov`, a
plugin's flags) or requires plugins (`required_plugins`) that the pipeline's plugin-free pytest
would refuse, they are overridden with `-o addopts=''`, `-o required_plugins=''`."""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib

from swe_aci.pipeline.skeleton import module_name
from swe_aci.retrieval.documents import is_test_path

DOCTEST_PROMPT = re.compile(r"^\s*>>> ", re.MULTILINE)
# the files pytest reads its configuration from, in its order of precedence
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# what a repository's configuration sets that the pipeline's plugin-free pytest would refuse:
# options of plugins it does not load (`--cov`), plugins it requires (`pytest-cov>=4.0.0`)
OVERRIDDEN = ("addopts", "required_plugins")
INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest"}


def test_files(tree: dict[str, str]) -> list[str]:
    return sorted(
        path
        for path in tree
        if path.endswith(".py")
        and is_test_path(path)
        and posixpath.basename(path).startswith("test")
    )


def related_tests(
    tree: dict[str, str], paths: list[str], names: list[str], limit: int
) -> list[str]:
    """The test files importing a module of `paths` first, then those mentioning one of them
    or of `names` (all test files when none does), at most `limit`."""
    if limit == 0:
        return []
    tests = test_files(tree)
    modules = [module_name(path) for path in paths]
    patterns = [import_pattern(module) for module in modules if module]
    importing = re.compile("|".join(patterns) or r"(?!)", re.MULTILINE)
    stems = [posixpath.splitext(posixpath.basename(path))[0] for path in paths]
    words = [word for word in (*stems, *names) if word and word != "__init__"]
    mentioning = re.compile(rf"\b({'|'.join(map(re.escape, words))})\b") if words else None
    first = [path for path in tests if importing.search(tree[path])]
    second = [
        path
        for path in tests
        if path not in first and mentioning is not None and mentioning.search(tree[path])
    ]
    return ([*first, *second] or tests)[:limit]


def doctest_modules(tree: dict[str, str], paths: list[str]) -> list[str]:
    """The modules of `paths` (not test files) whose base text holds a docstring example."""
    return [
        path
        for path in paths
        if path.endswith(".py")
        and not is_test_path(path)
        and DOCTEST_PROMPT.search(tree.get(path, ""))
    ]


def import_pattern(module: str) -> str:
    """A line importing `module` (`import a.b`, `from a.b import x`, `from a import b`)."""
    parent, _, leaf = module.rpartition(".")
    options = [rf"from\s+{re.escape(module)}\s+import", rf"import\s+{re.escape(module)}\b"]
    if parent:
        options.append(rf"from\s+{re.escape(parent)}\s+import\s+[^\n]*\b{re.escape(leaf)}\b")
    return rf"^\s*(?:{'|'.join(options)})"


def overridden_options(configs: dict[str, str]) -> list[str]:
    """The options of OVERRIDDEN the repository's pytest configuration (the first file that has
    one, as pytest picks it) sets."""
    found = _configured_options(configs)
    return [option for option in OVERRIDDEN if option in found]


def _configured_options(configs: dict[str, str]) -> set[str]:
    for name in PYTEST_CONFIGS:
        text = configs.get(name)
        if text is None:
            continue
        if name == "pyproject.toml":
            try:
                section = tomllib.loads(text).get("tool", {}).get("pytest", {})
            except tomllib.TOMLDecodeError:
                continue
            if "ini_options" in section:
                return set(section["ini_options"])
            continue
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        section_name = INI_SECTIONS.get(name, "tool:pytest")
        if parser.has_section(section_name):
            return set(parser.options(section_name))
        if name == "pytest.ini":
            return set()
    return set()


def test_command(command: str, configs: dict[str, str]) -> str:
    """The pipeline's test command for this repository."""
    return " ".join([command, *(f"-o {option}=''" for option in overridden_options(configs))])
