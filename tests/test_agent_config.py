"""Config loading: the built-in configs, overrides, and one clear ConfigError per kind of mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from swe_aci.aci.config import ACIConfig
from swe_aci.agent.templates import Templates
from swe_aci.configuration import ConfigError, builtin_config_dir, resolve_config_path
from swe_aci.episode import EpisodeConfig, load_config

NO_DEMO = "agent.demonstrations=[]"  # the default demonstration is recorded separately


def minimal_config(directory: Path, **agent: object) -> Path:
    """A config file holding only what is required, plus `agent` keys."""
    default = yaml.safe_load((builtin_config_dir() / "default.yaml").read_text())
    data = {"agent": {"templates": default["agent"]["templates"], **agent}}
    path = directory / "mine.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def write_demo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "trajectory": [{"action": "submit\n", "response": "```\nsubmit\n```"}],
                "history": [{"role": "user", "content": "demo issue"}],
            }
        )
    )
    return path


def test_default_config_is_the_papers_interface() -> None:
    config = load_config(None, [NO_DEMO])
    assert isinstance(config, EpisodeConfig)
    assert config.agent.parser == "thought_action"
    assert config.agent.history.type == "last_n_observations"
    assert config.agent.history.n == 5
    assert config.agent.limits.max_format_errors == 3
    assert config.aci.window == 100
    assert "submit" in config.aci.commands and "edit" in config.aci.commands


def test_default_demonstration_points_at_the_recorded_example() -> None:
    raw = yaml.safe_load((builtin_config_dir() / "default.yaml").read_text())
    (demo,) = raw["agent"]["demonstrations"]
    expected = builtin_config_dir().parent / "examples" / "demo" / "demo.traj"
    assert (builtin_config_dir() / demo).resolve() == expected.resolve()


def test_shell_only_by_name_and_by_path() -> None:
    by_name = load_config("shell_only")
    by_path = load_config(builtin_config_dir() / "shell_only.yaml")
    assert by_name == by_path
    assert by_name.aci.commands == ["submit"]
    assert by_name.agent.demonstrations == []
    assert resolve_config_path("shell_only") == builtin_config_dir() / "shell_only.yaml"


def test_overrides_are_yaml_values_applied_before_validation() -> None:
    config = load_config(
        None,
        [
            NO_DEMO,
            "agent.history.n=3",
            "agent.history.collapse_every=4",
            "model.name=openai/gpt-4o",
            "model.temperature=0.2",
            "env.env_vars={PIP_NO_INPUT: '1'}",
            "aci.commands=[open, submit]",
            "env.image=",
        ],
    )
    assert config.agent.history.n == 3 and config.agent.history.collapse_every == 4
    assert config.model.name == "openai/gpt-4o" and config.model.temperature == 0.2
    assert config.env.env_vars == {"PIP_NO_INPUT": "1"}
    assert config.aci.commands == ["open", "submit"]
    assert config.env.image is None


def test_demonstrations_are_relative_to_the_config_file(tmp_path: Path) -> None:
    write_demo(tmp_path / "demos" / "one.traj")
    config = load_config(minimal_config(tmp_path, demonstrations=["demos/one.traj"]))
    assert config.agent.demonstrations == [str((tmp_path / "demos" / "one.traj").resolve())]


def test_demonstration_override_is_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_demo(tmp_path / "here.traj")
    monkeypatch.chdir(tmp_path)
    config = load_config(None, ["agent.demonstrations=[here.traj]"])
    assert config.agent.demonstrations == ["here.traj"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["agent.histroy.n=3"], "unknown key agent.histroy"),
        (["agent.history.window=3"], "unknown key agent.history.window"),
        (["agent.history.n=0"], "agent.history.n: Input should be greater than or equal to 1"),
        (["agent.parser=json"], "agent.parser: Input should be 'thought_action' or 'tool_calls'"),
        (["aci.commands=[open, vim]"], "unknown ACI command(s) vim"),
        (["agent.history.n"], "bad override 'agent.history.n': expected key.path=value"),
        (["agent..n=1"], "expected key.path=value"),
        (["agent.parser.kind=x"], "agent.parser is not a section"),
        (["agent.history.n=[1"], "not valid YAML"),
        (
            ["agent.templates.system='{{ nope }}'"],
            "agent.templates.system: unknown variable(s) nope",
        ),
        (["agent.templates.next_step='{% if %}'"], "agent.templates.next_step: Jinja syntax error"),
        (["agent.history={type: full, collapse_every: 2}"], "agent.history: collapse_every"),
        (["agent.templates=null"], "agent.templates"),
    ],
)
def test_config_errors_name_the_key(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(None, [NO_DEMO, *overrides])
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_missing_required_key(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("agent:\n  parser: thought_action\n")
    with pytest.raises(ConfigError, match=r"missing key agent\.templates"):
        load_config(path)


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file not found: .*nope\.yaml"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  parser: [unclosed\n  history: 1\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: YAML error line \d+"):
        load_config(bad)
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(listing)


def test_missing_or_broken_demonstration(tmp_path: Path) -> None:
    path = minimal_config(tmp_path, demonstrations=["absent.traj"])
    with pytest.raises(
        ConfigError, match=r"agent.demonstrations: trajectory file not found: .*absent"
    ):
        load_config(path)
    (tmp_path / "broken.traj").write_text("not json")
    path = minimal_config(tmp_path, demonstrations=["broken.traj"])
    with pytest.raises(ConfigError, match=r"broken\.traj is not valid JSON"):
        load_config(path)


@pytest.mark.parametrize("name", ["default", "shell_only"])
@pytest.mark.parametrize("parser", ["thought_action", "tool_calls"])
def test_system_prompt_follows_the_parser(name: str, parser: str) -> None:
    templates = Templates(load_config(name, [NO_DEMO]).agent.templates)
    text = templates.render(
        "system", command_docs="DOCS", WINDOW=100, parser=parser, aci=ACIConfig()
    )
    assert ("DOCS" in text) == (parser == "thought_action")
    assert ("DISCUSSION" in text) == (parser == "thought_action")
    assert "\n\n\n" not in text and "{%" not in text and "{{" not in text
    error = templates.render("format_error", error="no block", parser=parser)
    assert ("```" in error) == (parser == "thought_action")


def test_default_templates_render_the_interface_strings() -> None:
    templates = Templates(load_config(None, [NO_DEMO]).agent.templates)
    assert "100 lines" in templates.render(
        "system", command_docs="", WINDOW=100, parser="thought_action", aci=ACIConfig()
    )
    message = templates.render("format_error", error="no block", parser="thought_action")
    assert message.startswith("Your last reply could not be used") and "no block" in message
    observation = templates.render(
        "next_step", observation="out", open_file="n/a", working_dir="/r"
    )
    assert observation == "out\n(Open file: n/a)\n(Current directory: /r)\nbash-$"
    empty = templates.render("next_step_no_output", open_file="/r/a.py", working_dir="/r")
    assert empty == (
        "Your command ran successfully and did not produce any output.\n"
        "(Open file: /r/a.py)\n(Current directory: /r)\nbash-$"
    )


def test_a_config_extends_another_and_overrides_some_keys(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("extends: default\naci:\n  window: 30\n")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nagent:\n  history:\n    n: 2\n")
    config = load_config(child)
    default = load_config()
    assert config.aci.window == 30 and config.agent.history.n == 2
    assert config.agent.templates == default.agent.templates
    assert config.agent.demonstrations == default.agent.demonstrations


def test_extends_loops_and_bad_values_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ConfigError, match="loops back"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: [default]\n")
    with pytest.raises(ConfigError, match="extends must name one config"):
        load_config(tmp_path / "c.yaml")


def test_the_local_configs_are_the_pipeline_and_an_agent_loop_collapsing_in_blocks() -> None:
    config = load_config("local")
    assert config.model.name == "local" and config.strategy.type == "pipeline"
    assert config.strategy.time_budget > 0
    agent = load_config("local_agent")
    assert agent.model.name == "local" and agent.strategy.type == "agent"
    assert agent.agent.history.collapse_every == 5


def test_the_local_model_with_tool_calls_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"agent\.parser=tool_calls does not work with the local"):
        load_config("local_agent", ["agent.parser=tool_calls"])
    assert load_config("local", ["agent.parser=tool_calls"]).strategy.type == "pipeline"


def test_a_strategy_names_its_type_and_only_its_keys() -> None:
    with pytest.raises(
        ConfigError, match=r"strategy\.type must be agent, pipeline, attempts or rag"
    ):
        load_config("default", ["strategy.type=loop"])
    with pytest.raises(ConfigError, match=r"unknown key strategy\.agent\.repair"):
        load_config("default", ["strategy.repair.temperatures=[0.5]"])
    with pytest.raises(ConfigError, match="unknown variable"):
        load_config("pipeline", ["strategy.templates.repair='{{patch}}'"])
