"""Every ACI command, declared once: name, signature, one-line doc, argument docs, handler.

The prompt's command list and the tool-calling schemas (`Command.doc`), the config's list of known
commands (`COMMANDS`), the action checks (`Command.syntax`) and the execution (`Command.run`) all
read these declarations. Adding a command means adding one `Command` here (its handler usually
calls a method of one of the ACI's parts: viewer, editor, search) and a test.

The docstrings keep the paper-era wording the published prompts used; search terms are documented
as literal strings, which they are here. docs/aci.md shows each command's output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from swe_aci.aci.docs import ArgumentDoc, CommandDoc
from swe_aci.aci.parsing import CommandStep, Syntax


class Receiver(Protocol):
    """What a handler runs on: the ACI's parts (`interface.py: ACI` is one). Declared here, not
    imported, because the ACI and its config read this table."""

    viewer: Any
    editor: Any
    search: Any
    iterative: Any
    str_replace: Any


class DocSettings(Protocol):
    """The settings a command's doc may name (`config.py: ACIConfig` has them)."""

    lint: bool
    window: int
    search_context: int


Handler = Callable[[Receiver, CommandStep], str]


@dataclass(frozen=True)
class Command:
    name: str  # what the model types
    signature: str  # first line: the command line; a multi-line command continues to its `ends`
    docstring: str | Callable[[DocSettings], str]  # one line; a str may use `{config.<field>}`
    run: Handler | None  # None: the command ends the episode; the ACI takes the submission
    arguments: tuple[ArgumentDoc, ...] = ()
    ends: tuple[str, ...] = ()  # the terminator line of each multi-line argument, in order
    default: bool = True  # in the default interface (the config's default command list)
    key: str | None = None  # its name in `aci.commands` when two interfaces type the same name

    @property
    def id(self) -> str:
        return self.key or self.name

    @property
    def ends_episode(self) -> bool:
        return self.run is None

    def doc(self, config: DocSettings) -> CommandDoc:
        return CommandDoc(
            self.name,
            self.signature,
            self.docstring(config)
            if callable(self.docstring)
            else self.docstring.format(config=config),
            self.arguments,
            self.ends,
        )

    @property
    def syntax(self) -> Syntax:
        return Syntax(self.signature.split("\n")[0], self.signature, self.ends)


def _arg(name: str, description: str, required: bool = True, type: str = "string") -> ArgumentDoc:
    return ArgumentDoc(name, type, description, required)


EDIT_DOC = (
    "replaces lines <start_line> through <end_line> (inclusive) with the given text in the open "
    "file. The replacement text is terminated by a line with only end_of_edit on it. All of the "
    "<replacement text> will be entered, so make sure your indentation is formatted properly."
)
EDIT_LINT_DOC = (
    " Python files will be checked for syntax errors after the edit. If the system detects a "
    "syntax error, the edit will not be executed. Simply try to edit the file again, but make "
    "sure to read the error message and modify the edit command you issue accordingly. Issuing "
    "the same command a second time will just lead to the same error message again."
)
STR_REPLACE_LINT_DOC = " A change to a Python file that introduces a syntax error is not applied (the output says why)."
_CURRENT_DIR = "the directory to search in (if not provided, searches in the current directory)"
_TERM = _arg("search_term", "the term to search for")
_PATH = _arg("path", "the path of the file (absolute, or relative to the current directory)")


def _linted(doc: str) -> Callable[[DocSettings], str]:
    return lambda config: doc + (STR_REPLACE_LINT_DOC if config.lint else "")


COMMANDS: tuple[Command, ...] = (
    Command(
        "open",
        "open <path> [<line_number>]",
        "opens the file at the given path in the editor. If line_number is provided, the window "
        "will be move to include that line",
        lambda aci, step: aci.viewer.open(step.args),
        (
            _arg("path", "the path to the file to open"),
            _arg(
                "line_number",
                "the line number to move the window to (if not provided, the window will start "
                "at the top of the file)",
                required=False,
                type="integer",
            ),
        ),
    ),
    Command(
        "goto",
        "goto <line_number>",
        "moves the window to show <line_number>",
        lambda aci, step: aci.viewer.goto(step.args),
        (_arg("line_number", "the line number to move the window to", type="integer"),),
    ),
    Command(
        "scroll_up",
        "scroll_up",
        "moves the window up {config.window} lines",
        lambda aci, step: aci.viewer.scroll_up(step.args),
    ),
    Command(
        "scroll_down",
        "scroll_down",
        "moves the window down {config.window} lines",
        lambda aci, step: aci.viewer.scroll_down(step.args),
    ),
    Command(
        "create",
        "create <filename>",
        "creates and opens a new file with the given name",
        lambda aci, step: aci.viewer.create(step.args),
        (_arg("filename", "the name of the file to create"),),
    ),
    Command(
        "edit",
        "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
        lambda config: EDIT_DOC + (EDIT_LINT_DOC if config.lint else ""),
        lambda aci, step: aci.editor.edit(step.args, step.blocks[0]),
        (
            _arg("start_line", "the line number to start the edit at", type="integer"),
            _arg("end_line", "the line number to end the edit at (inclusive)", type="integer"),
            _arg("replacement_text", "the text to replace the current selection with"),
        ),
        ends=("end_of_edit",),
    ),
    Command(
        "search_file",
        "search_file <search_term> [<file>]",
        "searches for search_term (a literal string, not a regular expression) in file. If file "
        "is not provided, searches in the current open file",
        lambda aci, step: aci.search.search_file(step.args),
        (
            _TERM,
            _arg(
                "file",
                "the file to search in (if not provided, searches in the current open file)",
                required=False,
            ),
        ),
    ),
    Command(
        "search_dir",
        "search_dir <search_term> [<dir>]",
        "searches for search_term (a literal string, not a regular expression) in all files in "
        "dir. If dir is not provided, searches in the current directory",
        lambda aci, step: aci.search.search_dir(step.args),
        (_TERM, _arg("dir", _CURRENT_DIR, required=False)),
    ),
    Command(
        "find_file",
        "find_file <file_name> [<dir>]",
        "finds all files with the given name in dir. If dir is not provided, searches in the "
        "current directory",
        lambda aci, step: aci.search.find_file(step.args),
        (_arg("file_name", "the name of the file to search for"), _arg("dir", _CURRENT_DIR, False)),
    ),
    Command(
        "search",
        "search <search_term> [<path>]",
        "searches for search_term (a literal string, not a regular expression) in path (a file, "
        "or all files in a directory; if not provided, the current directory) and opens the "
        "first match in the editor, with {config.search_context} lines around it. The next and "
        "prev commands move to the other matches",
        lambda aci, step: aci.iterative.search(step.args),
        (
            _TERM,
            _arg(
                "path",
                "the file or directory to search in (if not provided, the current directory)",
                required=False,
            ),
        ),
        default=False,
    ),
    Command(
        "next",
        "next",
        "opens the next match of the last search",
        lambda aci, step: aci.iterative.next(step.args),
        default=False,
    ),
    Command(
        "prev",
        "prev",
        "opens the previous match of the last search",
        lambda aci, step: aci.iterative.prev(step.args),
        default=False,
    ),
    Command(
        "view",
        "view <path> [<start_line> <end_line>]",
        "shows the file at path with line numbers, or only lines start_line to end_line of it "
        "(end_line -1: to the end); for a directory, lists the files and directories up to 2 "
        "levels deep, hidden ones left out",
        lambda aci, step: aci.str_replace.view(step.args),
        (
            _arg("path", "the file or directory (absolute, or relative to the current directory)"),
            _arg("start_line", "the first line to show", required=False, type="integer"),
            _arg("end_line", "the last line to show (-1: the end)", required=False, type="integer"),
        ),
        default=False,
    ),
    Command(
        "create",
        "create <path>\n<file_text>\nend_of_file_text",
        _linted("creates a new file at path holding file_text (an existing file is not changed)."),
        lambda aci, step: aci.str_replace.create(step.args, step.blocks),
        (_PATH, _arg("file_text", "the content of the new file", type="text")),
        ends=("end_of_file_text",),
        default=False,
        key="create_file",
    ),
    Command(
        "str_replace",
        "str_replace <path>\n<old_str>\nend_of_old_str\n<new_str>\nend_of_new_str",
        _linted(
            "replaces old_str by new_str in the file at path. old_str must match exactly one "
            "place in the file, character for character (indentation included)."
        ),
        lambda aci, step: aci.str_replace.str_replace(step.args, step.blocks),
        (
            _PATH,
            _arg("old_str", "the exact text to replace", type="text"),
            _arg("new_str", "the text to put in its place (empty: delete old_str)", type="text"),
        ),
        ends=("end_of_old_str", "end_of_new_str"),
        default=False,
    ),
    Command(
        "insert",
        "insert <path> <insert_line>\n<new_str>\nend_of_new_str",
        _linted("inserts new_str after line insert_line of the file at path (0: at the top)."),
        lambda aci, step: aci.str_replace.insert(step.args, step.blocks),
        (
            _PATH,
            _arg("insert_line", "the line after which to insert (0: at the top)", type="integer"),
            _arg("new_str", "the lines to insert", type="text"),
        ),
        ends=("end_of_new_str",),
        default=False,
    ),
    Command(
        "undo_edit",
        "undo_edit <path>",
        "takes back the last create, str_replace or insert of the file at path",
        lambda aci, step: aci.str_replace.undo_edit(step.args),
        (_PATH,),
        default=False,
    ),
    Command(
        "submit",
        "submit",
        "submits your current code and terminates the session",
        None,
    ),
)

BY_NAME: dict[str, Command] = {command.id: command for command in COMMANDS}
"""Every command by its id, the name `aci.commands` lists."""
DEFAULT_COMMANDS: tuple[str, ...] = tuple(c.id for c in COMMANDS if c.default)
TYPED_NAMES: frozenset[str] = frozenset(command.name for command in COMMANDS)
