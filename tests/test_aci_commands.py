"""One declaration per ACI command: the docs, the tool schemas, the config and `check` read it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from fixtures.aci.support import Session, sessions
from swe_aci.aci.commands import BY_NAME, COMMANDS, DEFAULT_COMMANDS, Command
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ActionProblem, CheckedAction
from swe_aci.aci.parsing import CommandStep
from swe_aci.agent.parsing import command_text, tool_spec

SAMPLE_VALUES = {"integer": 3, "string": "x.py", "text": "a\nb\n"}


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


def test_the_default_interface_is_the_papers() -> None:
    assert DEFAULT_COMMANDS == (
        "open", "goto", "scroll_up", "scroll_down", "create", "edit",
        "search_file", "search_dir", "find_file", "submit",
    )  # fmt: skip
    assert ACIConfig().commands == list(DEFAULT_COMMANDS)


def test_ids_are_unique_and_config_knows_exactly_the_declared_ones() -> None:
    assert len(BY_NAME) == len(COMMANDS)
    ACIConfig(commands=[command.id for command in COMMANDS if command.id != "create_file"])
    with pytest.raises(ValidationError, match="unknown ACI command"):
        ACIConfig(commands=["open", "not_declared"])


def test_two_commands_typed_alike_are_never_enabled_together() -> None:
    """The paper's `create` and the str_replace set's `create` (id create_file) share a name."""
    assert BY_NAME["create_file"].name == BY_NAME["create"].name == "create"
    with pytest.raises(ValidationError, match="both typed 'create': create, create_file"):
        ACIConfig(commands=["create", "create_file"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.id)
def test_each_declaration_feeds_docs_schema_and_check(session: Session, command: Command) -> None:
    aci = session({"x.py": "x = 1\n"}, commands=[command.id])
    (doc,) = aci.command_docs()
    assert doc == command.doc(aci.config)
    assert "\n" not in doc.docstring and "{" not in doc.docstring
    assert doc.signature.split()[0] == command.name
    spec = tool_spec(doc)
    assert spec.name == command.name
    assert set(spec.parameters["required"]) == {a.name for a in doc.arguments if a.required}
    # a function call with every argument becomes an action that the check accepts as this command
    action = command_text(doc, {a.name: SAMPLE_VALUES[a.type] for a in doc.arguments})
    assert action.split()[0] == command.name
    checked = aci.check(action)
    assert isinstance(checked, CheckedAction)
    assert [step.name for step in checked.steps if isinstance(step, CommandStep)] == [command.name]
    # one argument more than the signature has is refused with the command's usage
    first_line, _, rest = action.partition("\n")
    problem = aci.check("\n".join(filter(None, [f"{first_line} extra", rest])))
    assert isinstance(problem, ActionProblem) and f"`{command.syntax.usage}`" in problem.message
