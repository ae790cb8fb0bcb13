"""The commands' documentation as the model reads it (paper-era wording; search terms are
documented as literal strings, which they are here)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArgumentDoc:
    name: str
    type: str  # "string" or "integer"
    description: str
    required: bool


@dataclass(frozen=True)
class CommandDoc:
    name: str
    signature: str  # first line is the command line; edit's continues with its body and end
    docstring: str  # one line
    arguments: tuple[ArgumentDoc, ...] = ()
    end_name: str | None = None  # the terminator line of a multi-line command


_CURRENT_DIR = "the directory to search in (if not provided, searches in the current directory)"


def command_doc(name: str, window: int) -> CommandDoc:
    """The documentation of one command; {WINDOW} in the paper's docstrings is filled in."""
    docs = {
        "open": CommandDoc(
            "open",
            "open <path> [<line_number>]",
            "opens the file at the given path in the editor. If line_number is provided, the "
            "window will be move to include that line",
            (
                ArgumentDoc("path", "string", "the path to the file to open", True),
                ArgumentDoc(
                    "line_number",
                    "integer",
                    "the line number to move the window to (if not provided, the window will "
                    "start at the top of the file)",
                    False,
                ),
            ),
        ),
        "goto": CommandDoc(
            "goto",
            "goto <line_number>",
            "moves the window to show <line_number>",
            (ArgumentDoc("line_number", "integer", "the line number to move the window to", True),),
        ),
        "scroll_down": CommandDoc(
            "scroll_down", "scroll_down", f"moves the window down {window} lines"
        ),
        "scroll_up": CommandDoc("scroll_up", "scroll_up", f"moves the window up {window} lines"),
        "create": CommandDoc(
            "create",
            "create <filename>",
            "creates and opens a new file with the given name",
            (ArgumentDoc("filename", "string", "the name of the file to create", True),),
        ),
        "edit": CommandDoc(
            "edit",
            "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
            "replaces lines <start_line> through <end_line> (inclusive) with the given text in "
            "the open file. The replacement text is terminated by a line with only end_of_edit "
            "on it. All of the <replacement text> will be entered, so make sure your indentation "
            "is formatted properly. Python files will be checked for syntax errors after the "
            "edit. If the system detects a syntax error, the edit will not be executed. Simply "
            "try to edit the file again, but make sure to read the error message and modify the "
            "edit command you issue accordingly. Issuing the same command a second time will "
            "just lead to the same error message again.",
            (
                ArgumentDoc("start_line", "integer", "the line number to start the edit at", True),
                ArgumentDoc(
                    "end_line", "integer", "the line number to end the edit at (inclusive)", True
                ),
                ArgumentDoc(
                    "replacement_text",
                    "string",
                    "the text to replace the current selection with",
                    True,
                ),
            ),
            end_name="end_of_edit",
        ),
        "search_file": CommandDoc(
            "search_file",
            "search_file <search_term> [<file>]",
            "searches for search_term (a literal string, not a regular expression) in file. If "
            "file is not provided, searches in the current open file",
            (
                ArgumentDoc("search_term", "string", "the term to search for", True),
                ArgumentDoc(
                    "file",
                    "string",
                    "the file to search in (if not provided, searches in the current open file)",
                    False,
                ),
            ),
        ),
        "search_dir": CommandDoc(
            "search_dir",
            "search_dir <search_term> [<dir>]",
            "searches for search_term (a literal string, not a regular expression) in all files "
            "in dir. If dir is not provided, searches in the current directory",
            (
                ArgumentDoc("search_term", "string", "the term to search for", True),
                ArgumentDoc("dir", "string", _CURRENT_DIR, False),
            ),
        ),
        "find_file": CommandDoc(
            "find_file",
            "find_file <file_name> [<dir>]",
            "finds all files with the given name in dir. If dir is not provided, searches in the "
            "current directory",
            (
                ArgumentDoc("file_name", "string", "the name of the file to search for", True),
                ArgumentDoc("dir", "string", _CURRENT_DIR, False),
            ),
        ),
        "submit": CommandDoc(
            "submit", "submit", "submits your current code and terminates the session"
        ),
    }
    return docs[name]
