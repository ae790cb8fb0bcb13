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
from typing import TYPE_CHECKING

from swe_aci.aci.docs import ArgumentDoc, CommandDoc
from swe_aci.aci.parsing import CommandStep, Syntax

if TYPE_CHECKING:
    from swe_aci.aci.config import ACIConfig
    from swe_aci.aci.interface import ACI

Handler = Callable[["ACI", CommandStep], str]


@dataclass(frozen=True)
class Command:
    name: str
    signature: str  # first line: the command line; a multi-line command continues to `end_name`
    docstring: str | Callable[[ACIConfig], str]  # one line; a str may use `{config.<field>}`
    run: Handler | None  # None: the command ends the episode; the ACI takes the submission
    arguments: tuple[ArgumentDoc, ...] = ()
    end_name: str | None = None  # the terminator line of a multi-line command
    default: bool = True  # in the default interface (the config's default command list)

    @property
    def ends_episode(self) -> bool:
        return self.run is None

    def doc(self, config: ACIConfig) -> CommandDoc:
        return CommandDoc(
            self.name,
            self.signature,
            self.docstring(config)
            if callable(self.docstring)
            else self.docstring.format(config=config),
            self.arguments,
            self.end_name,
        )

    @property
    def syntax(self) -> Syntax:
        return Syntax(self.signature.split("\n")[0], self.signature, self.end_name)


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
_CURRENT_DIR = "the directory to search in (if not provided, searches in the current directory)"
_TERM = _arg("search_term", "the term to search for")

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
        lambda aci, step: aci.editor.edit(step.args, step.body),
        (
            _arg("start_line", "the line number to start the edit at", type="integer"),
            _arg("end_line", "the line number to end the edit at (inclusive)", type="integer"),
            _arg("replacement_text", "the text to replace the current selection with"),
        ),
        end_name="end_of_edit",
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
        "submit",
        "submit",
        "submits your current code and terminates the session",
        None,
    ),
)

BY_NAME: dict[str, Command] = {command.name: command for command in COMMANDS}
DEFAULT_COMMANDS: tuple[str, ...] = tuple(c.name for c in COMMANDS if c.default)
