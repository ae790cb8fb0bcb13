"""A whole-function rewrite is shown the function with its long docstring folded to one line,
and the docstring is put back from the file whatever the reply does with the placeholder: kept,
dropped, or replaced by one the model wrote."""

from __future__ import annotations

import textwrap

import pytest

from swe_aci.aci.config import DEFAULT_LINT_SELECT
from swe_aci.aci.lint import Linter
from swe_aci.configuration import jinja
from swe_aci.episode import load_config
from swe_aci.pipeline.prompts import rewrite_variables
from swe_aci.pipeline.repair import Dropped, make_edit, rewrite_tokens
from swe_aci.pipeline.skeleton import CONTEXT_LINES, context_lines, locations

VERSION = '''class Version:
    def replace(self, **parts):
        """
        Replace one or more parts of a version and return a new
        Version object, but leave self untouched.

        :param parts: the parts to be updated
        """
        version = dict(parts)
        return Version(**version)

    def short(self):
        """One line."""
        return 1
'''
LINT = Linter(DEFAULT_LINT_SELECT)


def fenced(code: str) -> str:
    return f"```python\n{code}```\n"


def test_the_rewrite_prompt_folds_a_long_docstring_and_the_edit_puts_it_back() -> None:
    found = {location.qualname: location for location in locations("v.py", VERSION)}
    replace = found["Version.replace"]
    code = rewrite_variables("issue", {"v.py": VERSION}, replace)["code"]
    assert code == (
        '    def replace(self, **parts):\n        """..."""\n'
        "        version = dict(parts)\n        return Version(**version)"
    )
    assert rewrite_tokens(code, 4096) < rewrite_tokens(replace.source, 4096)
    short = rewrite_variables("issue", {"v.py": VERSION}, found["Version.short"])["code"]
    assert '"""One line."""' in short
    fixed = "def replace(self, **parts):\n{}    version = dict(parts)\n    return type(self)(**version)\n"
    for docstring in ('    """..."""\n', ""):  # the placeholder kept, or no docstring at all
        edit = make_edit(VERSION, replace, fenced(fixed.format(docstring)), LINT)
        assert edit.texts["v.py"] == VERSION.replace("return Version(", "return type(self)(")
    own = make_edit(VERSION, replace, fenced(fixed.format('    """Mine."""\n')), LINT)
    assert own.texts == edit.texts  # a docstring the model wrote without seeing the original
    with pytest.raises(Dropped, match="the function is unchanged"):  # a docstring-only edit
        make_edit(VERSION, replace, fenced(textwrap.dedent(replace.source.replace(
            '"""\n        Replace one', '"""Replace parts.\n        Replace one'))), LINT)  # fmt: skip
    with pytest.raises(Dropped, match="the function is unchanged"):
        make_edit(VERSION, replace, fenced(textwrap.dedent(code) + "\n"), LINT)


def test_the_repair_prompts_of_a_file_share_all_but_their_target() -> None:
    """The issue, how its test fails and the file's top-level code (with every function's
    signature, the target's too) come before the target in every repair prompt of the local
    config, so llama.cpp reuses their computed prefix when the next sample is of another target
    of the same file (the first samples of a task alternate between its targets)."""
    source = "import re\n\n\ndef words(text):\n    return text.split()\n\n\n" + (
        "def count(text):\n    return len(words(text))\n\n\n" + VERSION
    )
    templates = load_config("local", []).strategy.templates
    found = {location.qualname: location for location in locations("v.py", source)}
    failure = "AssertionError: assert 2 == 3"
    prompts = [
        jinja()
        .from_string(templates.repair)
        .render(**rewrite_variables("issue", {"v.py": source}, found[name]), failure=failure)
        for name in ("words", "count", "Version.short")
    ]
    differ = next(i for i, chars in enumerate(zip(*prompts, strict=False)) if len(set(chars)) > 1)
    shared = prompts[0][:differ]
    assert shared.startswith("Issue:\nissue\n") and failure in shared
    assert "def words(text): ...\ndef count(text): ...\nclass Version: ..." in shared
    assert shared.endswith("The bug is in `")


def test_the_top_level_code_a_rewrite_is_shown_is_bounded() -> None:
    """A lookup table is shown as its first line and `...`; a file of more top-level code than
    CONTEXT_LINES shows its assignments as `name = ...` and says how much more it leaves out;
    imports and headers stay whole."""
    table = "PLURALS = {\n" + "".join(f"    'w{i}': 'w{i}s',\n" for i in range(50)) + "}\n"
    source = "from typing import (\n    Any,\n    Dict,\n    List,\n)\n" + table + VERSION
    assert context_lines(source) == (
        "from typing import (\n    Any,\n    Dict,\n    List,\n)\nPLURALS = {\n    ...\n"
        "class Version: ..."
    )
    many = "import re\n" + "".join(f"NAME_{i} = ('n', {i})\n" for i in range(400)) + VERSION
    shown = context_lines(many).splitlines()
    assert len(shown) == CONTEXT_LINES and shown[0] == "import re"
    assert shown[1] == "NAME_0 = ..." and shown[-1] == "# ... 153 more lines of top-level code"
    assert "def count(text): ...\n" in context_lines("def count(text):\n    return 1\n" + many)
