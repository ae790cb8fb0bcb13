"""A small bash lexer: enough to tell where commands start, line by line.

It follows quotes, backslashes, comments, `(`/`$(` nesting, here-documents and line continuations,
so an action can be cut into ACI commands and shell chunks without misreading a heredoc body or a
multi-line string, and so the simple commands of a shell chunk can be checked against the
blocklist. It is not a full parser (no aliases, no expansions); it never needs to be one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Operators, longest first.
OPERATORS = (
    "<<<", "<<-", "&>>", ";;&", "<<", ">>", "&&", "||", ";;", ";&", "|&", "&>", ">&", "<&", ">|", "<>",
    ";", "&", "|", "<", ">", "(", ")",
)  # fmt: skip
CONTROL = frozenset({"\n", ";", "&&", "||", "|", "|&", "&", ";;", ";&", ";;&", "(", ")", "$("})
REDIRECTIONS = frozenset({"<", ">", ">>", "<<<", "&>", "&>>", ">&", "<&", ">|", "<>"})
HEREDOC = frozenset({"<<", "<<-"})
KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
     "in", "select", "function", "{", "}", "!", "[[", "]]", "coproc"}
)  # fmt: skip
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


@dataclass(frozen=True)
class Token:
    kind: str  # "word" or "op"
    text: str  # a word without its quotes; an operator as written
    start: int  # offsets in the line
    end: int
    depth: int  # `(`/`$(` nesting before the token


@dataclass
class LexState:
    """What carries over from one line to the next."""

    quote: str | None = None
    depth: int = 0
    continuation: bool = False
    pending_heredocs: list[tuple[str, bool]] = field(default_factory=list)
    heredocs: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def at_command_start(self) -> bool:
        """Whether the next line starts a new command at top level."""
        return (
            self.quote is None and self.depth == 0 and not self.continuation and not self.heredocs
        )


def lex_line(line: str, state: LexState) -> list[Token]:
    """Tokens of one physical line; updates `state`. Heredoc body lines yield no tokens; a line
    that ends a command ends with a "\n" operator token."""
    if state.heredocs:
        delimiter, strip_tabs = state.heredocs[0]
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            state.heredocs.pop(0)
        return []
    tokens: list[Token] = []
    state.continuation = False
    word: list[str] = []
    word_start: int | None = 0 if state.quote else None
    i, n = 0, len(line)

    def flush(end: int) -> None:
        nonlocal word, word_start
        if word_start is not None:
            tokens.append(Token("word", "".join(word), word_start, end, state.depth))
        word, word_start = [], None

    while i < n:
        char = line[i]
        if state.quote == "'":
            if char == "'":
                state.quote = None
            else:
                word.append(char)
            i += 1
            continue
        if state.quote in ('"', "`"):
            if char == "\\" and i + 1 < n:
                word.append(line[i + 1])
                i += 2
                continue
            if char == state.quote:
                state.quote = None
            else:
                word.append(char)
            i += 1
            continue
        if char in " \t":
            flush(i)
            i += 1
            continue
        if char == "\\":
            if i + 1 == n:
                state.continuation = True
                i += 1
                continue
            if word_start is None:
                word_start = i
            word.append(line[i + 1])
            i += 2
            continue
        if char in "'\"`":
            if word_start is None:
                word_start = i
            state.quote = char
            i += 1
            continue
        if char == "#" and word_start is None:
            break
        if line.startswith("$(", i):
            flush(i)
            tokens.append(Token("op", "$(", i, i + 2, state.depth))
            state.depth += 1
            i += 2
            continue
        operator = next((op for op in OPERATORS if line.startswith(op, i)), None)
        if operator is None:
            if word_start is None:
                word_start = i
            word.append(char)
            i += 1
            continue
        flush(i)
        tokens.append(Token("op", operator, i, i + len(operator), state.depth))
        i += len(operator)
        if operator == "(":
            state.depth += 1
        elif operator == ")":
            state.depth = max(0, state.depth - 1)
        elif operator in HEREDOC and state.depth == 0:
            i = _read_heredoc_delimiter(line, i, operator == "<<-", state)
    if state.quote is None:
        flush(n)
    elif word_start is not None:
        word.append("\n")
        flush(n)
    if state.quote is None and not state.continuation:
        tokens.append(Token("op", "\n", n, n, state.depth))
    state.heredocs.extend(state.pending_heredocs)
    state.pending_heredocs.clear()
    return tokens


def _read_heredoc_delimiter(line: str, i: int, strip_tabs: bool, state: LexState) -> int:
    """Register the delimiter word after `<<`; return the offset after it."""
    n = len(line)
    while i < n and line[i] in " \t":
        i += 1
    delimiter: list[str] = []
    quote: str | None = None
    while i < n:
        char = line[i]
        if quote:
            if char == quote:
                quote = None
            else:
                delimiter.append(char)
        elif char in "'\"":
            quote = char
        elif char == "\\" and i + 1 < n:
            delimiter.append(line[i + 1])
            i += 1
        elif char in " \t;&|<>()":
            break
        else:
            delimiter.append(char)
        i += 1
    if delimiter:
        state.pending_heredocs.append(("".join(delimiter), strip_tabs))
    return i


def simple_commands(tokens: list[Token]) -> list[tuple[list[str], bool]]:
    """The simple commands of a token list as (words, fed by a pipe), without leading
    assignments, keywords and redirections."""
    commands: list[tuple[list[str], bool]] = []
    words: list[str] = []
    piped = False
    skip_next_word = False
    for token in tokens:
        if token.kind == "op":
            if token.text in CONTROL:
                if words:
                    commands.append((words, piped))
                words = []
                piped = token.text in ("|", "|&")
            elif token.text in REDIRECTIONS or token.text in HEREDOC:
                skip_next_word = True
                if words:
                    words.append(token.text)
            continue
        if skip_next_word:
            skip_next_word = False
            if words:
                words.append(token.text)
            continue
        if not words and (token.text in KEYWORDS or ASSIGNMENT.match(token.text)):
            continue
        words.append(token.text)
    if words:
        commands.append((words, piped))
    return commands


# Programs that run the command given in their arguments: name -> (options that take a value,
# positional arguments before the command). `command -v`/`-V` only look a program up.
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "sudo": (frozenset({"-u", "--user", "-g", "--group", "-p", "--prompt", "-C", "-D", "-r",
                        "-t", "-U", "-T", "--chdir", "--role", "--type", "--other-user"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "xargs": (frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n",
                         "--max-args", "-P", "--max-procs", "-s", "--max-chars"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata"}), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "setsid": (frozenset(), 0),
    "nohup": (frozenset(), 0),
}  # fmt: skip
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
MAX_NESTING = 8


def invocations(
    words: list[str], piped: bool = False, depth: int = 0
) -> list[tuple[list[str], bool]]:
    """Every command a simple command runs, as (words, fed by a pipe): itself, what its wrappers
    run (`env vi x`, `sudo -u me nano`, `xargs vi`, `timeout 5 vim`), and the simple commands of
    a script given to `bash -c` / `sh -c` / `eval`."""
    found: list[tuple[list[str], bool]] = []
    current = words
    for _ in range(MAX_NESTING):
        if not current:
            break
        found.append((current, piped))
        name = current[0].rpartition("/")[2]
        if name in SHELLS or name == "eval":
            script = " ".join(current[1:]) if name == "eval" else _shell_script(current[1:])
            if script is not None and depth < MAX_NESTING:
                state = LexState()
                tokens = [token for line in script.split("\n") for token in lex_line(line, state)]
                for inner, inner_piped in simple_commands(tokens):
                    found.extend(invocations(inner, inner_piped, depth + 1))
            break
        if name not in WRAPPERS:
            break
        current = _wrapped(name, current[1:])
    return found


def _wrapped(name: str, args: list[str]) -> list[str]:
    """The command a wrapper runs: its arguments after its own options and positionals."""
    valued, positionals = WRAPPERS[name]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if arg.startswith("-") and len(arg) > 1:
            if name == "command" and arg in ("-v", "-V"):
                return []
            index += 2 if arg in valued else 1
        elif name == "env" and ASSIGNMENT.match(arg):
            index += 1
        elif positionals:
            positionals -= 1
            index += 1
        else:
            break
    return args[index:]


def _shell_script(args: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (options such as -e, -lc allowed before it), else None."""
    with_c = False
    for arg in args:
        if arg.startswith("-") and len(arg) > 1:
            with_c = with_c or (not arg.startswith("--") and "c" in arg[1:])
            continue
        return arg if with_c else None
    return None
