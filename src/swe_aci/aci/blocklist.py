"""Which shell commands are refused: interactive programs, however they are started.

A program matches by its name without the directory (`/usr/bin/vim` is `vim`); the options of an
entry such as `tail -f` may appear anywhere among the arguments, also inside a cluster of short
options (`tail -fn 5`). Every command a simple command runs is checked: the command itself, what
a wrapper such as `env`, `sudo`, `xargs` or `timeout` runs, and the commands of a `bash -c` or
`eval` script (see `shellwords.invocations`).
"""

from __future__ import annotations

import re

from swe_aci.aci.shellwords import Token, invocations, simple_commands

_SHORT_CLUSTER = re.compile(r"-([A-Za-z]+)")


class Blocklist:
    def __init__(self, interactive: list[str], standalone: list[str]) -> None:
        self._interactive = [entry.split() for entry in interactive]
        self._standalone = [entry.split() for entry in standalone]

    def match(self, tokens: list[Token] | tuple[Token, ...]) -> str | None:
        """The blocklist entry one of the commands of `tokens` matches, if any."""
        for words, piped in simple_commands(list(tokens)):
            for command, fed in invocations(words, piped):
                entry = self._entry(command, fed)
                if entry is not None:
                    return entry
        return None

    def _entry(self, words: list[str], piped: bool) -> str | None:
        program = [words[0].rpartition("/")[2], *words[1:]]
        for entry in self._interactive:
            if program[0] == entry[0] and all(_has_option(program[1:], o) for o in entry[1:]):
                return " ".join(entry)
        if not piped:
            for entry in self._standalone:
                if program == entry or words == entry:
                    return " ".join(entry)
        return None


def _has_option(args: list[str], option: str) -> bool:
    if option in args:
        return True
    if not _SHORT_CLUSTER.fullmatch(option) or len(option) != 2:
        return False
    for arg in args:
        cluster = _SHORT_CLUSTER.match(arg)
        if cluster and not arg.startswith("--") and option[1] in cluster.group(1):
            return True
    return False
