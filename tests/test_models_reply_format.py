"""The thought-action reply format is defined once (agent.parsing.THOUGHT_ACTION): the parser,
the local model's grammar, the human and replay models and the shipped prompts all agree with it,
and a different format changes all of them together."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from swe_aci.agent.parsing import THOUGHT_ACTION, reply_format
from swe_aci.episode import load_config
from swe_aci.models import FormatError, ThoughtActionFormat
from swe_aci.models.human import HumanModel
from swe_aci.models.replay import ReplayModel
from test_models_local import gbnf_regex

OTHER = ThoughtActionFormat(header="THOUGHT", fence="~~~")
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def test_the_parser_names_its_format() -> None:
    assert reply_format("thought_action") is THOUGHT_ACTION
    assert reply_format("tool_calls") is None  # function calls: no text format


@pytest.mark.parametrize("fmt", [THOUGHT_ACTION, OTHER])
@pytest.mark.parametrize(
    ("thought", "action"),
    [
        ("DISCUSSION\nList the files.", "ls -a"),
        ("", "submit"),
        ("Fix it.", "edit 2:2\n    return a + b\nend_of_edit"),
    ],
)
def test_compose_is_read_back_by_parse(fmt: ThoughtActionFormat, thought: str, action: str) -> None:
    text = fmt.compose(thought, action)
    assert fmt.holds_block(text)
    assert fmt.parse(text) == (f"{thought}\n" if thought else "", f"{action}\n")


@pytest.mark.parametrize("fmt", [THOUGHT_ACTION, OTHER])
def test_what_the_grammar_admits_the_parser_reads(fmt: ThoughtActionFormat) -> None:
    grammar = gbnf_regex(fmt.grammar(512))
    thought = fmt.discussion("Look at the code, then `fix` it.")
    for action in ("ls -a", "edit 3:4\n    x = 1\nend_of_edit", 'search_dir "a b"'):
        reply = fmt.compose(thought.rstrip("\n"), action).rstrip("\n")
        assert grammar.fullmatch(reply), reply
        assert fmt.parse(reply) == (thought, f"{action}\n")
    other = OTHER if fmt is THOUGHT_ACTION else THOUGHT_ACTION
    assert not grammar.fullmatch(other.compose(other.discussion("Look.").rstrip("\n"), "ls"))


def test_errors_name_the_formats_fence() -> None:
    with pytest.raises(FormatError, match=r"no command in a fenced code block \(~~~\)"):
        OTHER.parse("THOUGHT\nx\n```\nls\n```\n")
    with pytest.raises(FormatError, match=r"fence lines \(~~~\) .* without indentation"):
        OTHER.parse("THOUGHT\n  ~~~\n  ls\n  ~~~\n")


@pytest.mark.parametrize(("header", "fence"), [("A", ""), ("A", "` `"), ("A\nB", "```")])
def test_a_format_must_be_readable(header: str, fence: str) -> None:
    with pytest.raises(ValueError):
        ThoughtActionFormat(header=header, fence=fence)


@pytest.mark.parametrize("config", ["default", "shell_only"])
def test_the_shipped_prompts_show_replies_in_the_parsers_format(config: str) -> None:
    """The example reply each prompt shows is one the parser reads and the local grammar
    admits; a prompt drifting from the format fails here."""
    system = load_config(config).agent.templates.system
    example = re.search(r"^( *)DISCUSSION\n.*?^\1```\n.*?^\1```$", system, re.M | re.S)
    assert example is not None
    reply = "\n".join(line.removeprefix(example.group(1)) for line in example.group(0).split("\n"))
    assert THOUGHT_ACTION.parse(reply)[1] == "ls -a\n"
    assert gbnf_regex(THOUGHT_ACTION.grammar(4096)).fullmatch(reply)


def test_human_and_replay_write_in_the_format_they_are_given(tmp_path: Path) -> None:
    human = HumanModel(OTHER, stdin=io.StringIO("ls\n.\n"), stdout=io.StringIO())
    assert human.query([]).content == "THOUGHT\n(typed by a human)\n\n~~~\nls\n~~~\n"
    path = tmp_path / "t.traj"
    steps = [
        {"thought": "Look.", "action": "ls", "response": "Look.\n```\nls\n```\n"},  # no ~~~ line
        {"thought": "Go.", "action": "submit", "response": "Go.\n~~~\nsubmit\n~~~\n"},
    ]
    path.write_text(json.dumps({"trajectory": steps}))
    replay = ReplayModel(path, OTHER)
    assert [replay.query([]).content for _ in steps] == [
        "Look.\n~~~\nls\n~~~\n",  # rebuilt in the given format
        "Go.\n~~~\nsubmit\n~~~\n",  # already in it: as recorded
    ]
