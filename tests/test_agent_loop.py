"""Whole episodes: the scripted model on a real local repository through the real ACI."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector_helpers import request, serving
from swe_aci.aci import checking
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ACI
from swe_aci.agent.config import AgentConfig
from swe_aci.agent.loop import Agent
from swe_aci.env.config import EnvConfig
from swe_aci.env.local import LocalEnvironment
from swe_aci.episode import load_config
from swe_aci.models.base import (
    ContextWindowExceeded,
    Message,
    ModelConfigError,
    ModelReply,
    ToolCall,
    ToolSpec,
    estimate_tokens,
)
from swe_aci.models.config import Price
from swe_aci.models.pricing import Pricing
from swe_aci.models.scripted import ScriptedModel
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryError, load_trajectory

ISSUE = "add() subtracts instead of adding"
CALC = "def add(a, b):\n    return a - b\n"


def act(command: str, thought: str = "DISCUSSION\nNext step.") -> str:
    return f"{thought}\n```\n{command}\n```\n"


OPEN = act("open calc.py")
FIX = act("edit 2:2\n    return a + b\nend_of_edit")
SUBMIT = act("submit")


class Session:
    """A repository, its sandbox and interface, and a way to run an episode on them."""

    def __init__(self, env: LocalEnvironment, output_dir: Path) -> None:
        self.env = env
        self.aci = ACI(env, ACIConfig())
        self.output_dir = output_dir
        self.steps: list[StepRecord] = []

    def agent_config(self, *overrides: str) -> AgentConfig:
        return load_config(None, ["agent.demonstrations=[]", *overrides]).agent

    def run(
        self,
        model: object,
        *overrides: str,
        on_step: Callable[[StepRecord], None] | None = None,
        issue: str = ISSUE,
    ) -> EpisodeResult:
        def record(step: StepRecord) -> None:
            self.steps.append(step)
            if on_step is not None:
                on_step(step)

        agent = Agent(
            self.agent_config(*overrides),
            model,  # type: ignore[arg-type]
            self.aci,
            output_dir=self.output_dir,
            instance_id="calc-1",
            environment="local",
            on_step=record,
        )
        return agent.run(issue)

    @property
    def trajectory_path(self) -> Path:
        return self.output_dir / "calc-1" / "calc-1.traj"

    def trajectory(self) -> dict:
        return load_trajectory(self.trajectory_path)


@pytest.fixture
def session(make_repo: Callable[..., Path], tmp_path: Path) -> Iterator[Session]:
    repo = make_repo({"calc.py": CALC})
    env = LocalEnvironment(str(repo), config=EnvConfig())
    try:
        yield Session(env, tmp_path / "out")
    finally:
        env.close()


class ReplyModel:
    """Answers with prepared replies (text or tool calls), raising the prepared exceptions."""

    def __init__(self, replies: list[ModelReply | Exception]) -> None:
        self.name = "prepared"
        self.replies = replies
        self.queries: list[list[Message]] = []
        self.tools: list[list[ToolSpec] | None] = []

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        self.queries.append(messages)
        self.tools.append(tools)
        reply = self.replies[len(self.queries) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_submit_path(session: Session) -> None:
    result = session.run(ScriptedModel([OPEN, FIX, act("true"), SUBMIT]))
    assert result.exit_status == "submitted"
    assert "-    return a - b\n+    return a + b" in result.submission
    assert result.stats.api_calls == 4
    traj = session.trajectory()
    assert [s["action"] for s in traj["trajectory"]] == [
        "open calc.py\n",
        "edit 2:2\n    return a + b\nend_of_edit\n",
        "true\n",
        "submit\n",
    ]
    assert traj["info"]["exit_status"] == "submitted"
    assert traj["info"]["submission"] == result.submission
    assert traj["info"]["model_stats"]["api_calls"] == 4
    assert traj["problem_statement"] == ISSUE
    assert traj["environment"] == "local"  # the backend, not a class name
    first = traj["trajectory"][0]
    assert first["thought"] == "DISCUSSION\nNext step.\n"
    assert first["state"]["open_file"].endswith("/calc.py")
    assert first["query"][-1]["content"].startswith("Resolve the following issue")
    # the message sequence: system, instance, then assistant/observation pairs
    history = traj["history"]
    assert [m["role"] for m in history] == ["system", "user"] + ["assistant", "user"] * 4
    assert (
        "COMMANDS:" in history[0]["content"] and "signature: open <path>" in history[0]["content"]
    )
    assert ISSUE in history[1]["content"]
    suffix = f"(Open file: {first['state']['open_file']})\n(Current directory: {session.env.repo_path})\nbash-$"
    assert history[3]["content"].startswith("[File: ")
    assert history[3]["content"].endswith(suffix)
    assert history[7]["content"] == (
        "Your command ran successfully and did not produce any output.\n" + suffix
    )
    # outputs beside the trajectory
    directory = session.trajectory_path.parent
    assert (directory / "calc-1.patch").read_text() == result.submission
    assert json.loads((directory / "calc-1.pred").read_text()) == {
        "instance_id": "calc-1",
        "model_name_or_path": "scripted",
        "model_patch": result.submission,
    }


def test_format_error_requery_leaves_no_trace(session: Session) -> None:
    bad = "I will just open the file: open calc.py"
    result = session.run(ScriptedModel([bad, OPEN, act("true"), SUBMIT]))
    assert result.exit_status == "submitted"
    assert result.stats.api_calls == 4
    first, second, _ = session.trajectory()["trajectory"]
    # the requery: processed history + the bad output + the error message
    assert first["query"][-2] == {"role": "assistant", "content": bad}
    assert first["query"][-1]["content"].startswith("Your last reply could not be used")
    assert "no command in a fenced code block" in first["query"][-1]["content"]
    assert first["response"] == OPEN
    # later queries and the stored history never show the bad output or the error
    everything = json.dumps(second["query"]) + json.dumps(session.trajectory()["history"])
    assert bad not in everything
    assert "could not be used" not in everything


def test_blocked_command_requery(session: Session) -> None:
    result = session.run(ScriptedModel([act("vim calc.py"), OPEN, SUBMIT]))
    assert result.exit_status == "submitted"
    first = session.trajectory()["trajectory"][0]
    assert first["action"] == "open calc.py\n"
    assert first["query"][-1]["content"].startswith(
        "Interactive operation 'vim' is not supported by this environment"
    )
    assert "vim calc.py" not in json.dumps(session.trajectory()["history"])


def test_each_reply_is_split_and_checked_once(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop executes the steps the ACI's check returned: one split per reply, the refused
    one included, none again at execution."""
    split = checking.split_action
    actions: list[str] = []

    def counted(action: str, syntax: Any) -> Any:
        actions.append(action)
        return split(action, syntax)

    monkeypatch.setattr(checking, "split_action", counted)
    result = session.run(ScriptedModel([act("vim calc.py"), OPEN, FIX, SUBMIT]))
    assert result.exit_status == "submitted"
    assert actions == [
        "vim calc.py",
        "open calc.py",
        "edit 2:2\n    return a + b\nend_of_edit",
        "submit",
    ]


def test_aci_format_problem_uses_the_format_error_template(session: Session) -> None:
    unterminated = act("edit 2:2\n    return a + b")
    result = session.run(ScriptedModel([OPEN, unterminated, FIX, SUBMIT]))
    assert result.exit_status == "submitted"
    second = session.trajectory()["trajectory"][1]
    assert second["query"][-1]["content"].startswith("Your last reply could not be used")
    assert "end_of_edit" in second["query"][-1]["content"]


def test_three_format_errors_exit_with_autosubmission(session: Session) -> None:
    model = ScriptedModel([OPEN, FIX, "no block", "still none", "```\nunclosed\n", SUBMIT])
    result = session.run(model)
    assert result.exit_status == "submitted (exit_format)"
    assert "+    return a + b" in result.submission
    assert model.position == 5  # three calls for the failed step, no fourth
    traj = session.trajectory()
    exit_step = traj["trajectory"][-1]
    assert exit_step["thought"] == "Exit due to format error"
    assert exit_step["action"] == "exit_format"
    assert exit_step["observation"] == "Exited (autosubmitted)"
    assert exit_step["response"] == "```\nunclosed\n"
    assert traj["info"]["exit_status"] == "submitted (exit_format)"
    assert (session.trajectory_path.parent / "calc-1.patch").exists()


def test_format_errors_without_changes_exit_without_submission(session: Session) -> None:
    result = session.run(ScriptedModel(["a", "b", "c"]))
    assert result.exit_status == "exit_format"
    assert result.submission == ""
    assert session.trajectory()["trajectory"][-1]["observation"] == "Exited"
    assert not (session.trajectory_path.parent / "calc-1.patch").exists()
    pred = json.loads((session.trajectory_path.parent / "calc-1.pred").read_text())
    assert pred["model_patch"] == ""


def test_format_error_counter_resets_after_a_valid_step(session: Session) -> None:
    replies = ["x", "y", OPEN, "x", "y", SUBMIT]
    assert session.run(ScriptedModel(replies)).exit_status == "submitted"


def test_step_limit(session: Session) -> None:
    model = ScriptedModel([OPEN, FIX, act("ls"), SUBMIT])
    result = session.run(model, "agent.limits.max_steps=2")
    assert result.exit_status == "submitted (exit_step_limit)"
    assert model.position == 2
    assert [s.action for s in session.steps][-1] == "exit_step_limit"


def test_wall_time_limit(session: Session) -> None:
    result = session.run(ScriptedModel([OPEN]), "agent.limits.wall_time=0.000001")
    assert result.exit_status == "exit_time_limit"
    assert result.stats.api_calls == 0
    assert session.trajectory()["trajectory"][0]["thought"] == "Exit due to time limit"


def test_cost_limit_crossed_mid_episode_discards_the_reply(session: Session) -> None:
    touch = act("touch crossed.txt")
    replies = [OPEN, FIX, touch]
    costs = [estimate_tokens(reply) for reply in replies]  # $1 per output token
    limit = sum(costs[:2]) + costs[2] / 2
    pricing = Pricing({"scripted": Price(input=0.0, output=1_000_000.0)})
    result = session.run(
        ScriptedModel(replies, pricing=pricing), f"agent.limits.per_instance_cost={limit}"
    )
    assert result.exit_status == "submitted (exit_cost)"
    assert result.stats.api_calls == 3
    assert result.stats.instance_cost == pytest.approx(sum(costs))
    assert "crossed.txt" not in result.submission  # the crossing reply was not executed
    assert "+    return a + b" in result.submission
    steps = session.trajectory()["trajectory"]
    assert [s["action"] for s in steps][-1] == "exit_cost"
    assert steps[-1]["thought"] == "Exit due to cost limit"
    assert steps[-1]["output_tokens"] == costs[2]  # the discarded call is accounted for
    assert steps[-1]["query"][-1]["role"] == "user"
    assert len(steps) == 3


def test_model_api_error_exits_with_autosubmission(session: Session) -> None:
    result = session.run(ScriptedModel([OPEN, FIX]))  # runs out of replies
    assert result.exit_status == "submitted (exit_api)"
    assert "no more replies" in session.trajectory()["info"]["error"]


def test_context_window_exceeded(session: Session) -> None:
    model = ReplyModel([ModelReply(OPEN), ContextWindowExceeded("prompt too long")])
    result = session.run(model)
    assert result.exit_status == "exit_context"
    assert session.trajectory()["info"]["error"] == "prompt too long"


def test_unexpected_error_exits_with_the_message_recorded(session: Session) -> None:
    def sandbox_dies(step: StepRecord) -> None:
        session.env.close()

    result = session.run(ScriptedModel([OPEN, act("ls"), SUBMIT]), on_step=sandbox_dies)
    assert result.exit_status == "exit_error"
    info = session.trajectory()["info"]
    assert info["exit_status"] == "exit_error"
    assert info["error"] == "SandboxError: the environment is closed"
    assert info["autosubmission_error"]  # the diff cannot be taken from a dead sandbox


def test_model_config_error_is_raised_after_saving(session: Session) -> None:
    model = ReplyModel([ModelConfigError("OPENAI_API_KEY is not set")])
    with pytest.raises(ModelConfigError):
        session.run(model)
    assert json.loads(session.trajectory_path.read_text())["trajectory"] == []


def test_trajectory_is_valid_after_every_step_and_after_a_crash(session: Session) -> None:
    seen: list[int] = []

    def check_then_crash(step: StepRecord) -> None:
        loaded = load_trajectory(session.trajectory_path)  # the journal, while running
        seen.append(len(loaded["trajectory"]))
        assert loaded["trajectory"][-1]["response"] == step.response
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        session.run(ScriptedModel([OPEN, FIX, act("ls"), SUBMIT]), on_step=check_then_crash)
    assert seen == [1, 2, 3]
    traj = session.trajectory()
    assert [step["action"] for step in traj["trajectory"]][3:] == ["exit_interrupted"]
    assert traj["info"]["exit_status"] == "exit_interrupted"
    assert traj["info"]["exit_signal"] == "SIGINT"
    assert traj["info"]["submission"] is None  # no autosubmission on an interrupt
    assert [p.name for p in session.trajectory_path.parent.iterdir()] == ["calc-1.traj"]


def test_a_kill_at_any_moment_leaves_the_finished_steps_readable(
    session: Session, tmp_path: Path
) -> None:
    """The journal is what a killed run leaves: every prefix of it, even one cut mid-line,
    loads as the steps finished so far."""
    journal = session.trajectory_path.with_name("calc-1.traj.jsonl")
    snapshots: list[bytes] = []
    session.run(
        ScriptedModel([OPEN, FIX, act("ls"), SUBMIT]),
        on_step=lambda step: snapshots.append(journal.read_bytes()),
    )
    assert not journal.exists()  # compacted into the .traj at the end
    killed = tmp_path / "killed" / "calc-1.traj"
    killed.parent.mkdir()
    for count, snapshot in enumerate(snapshots, start=1):
        for cut in (len(snapshot), len(snapshot) - 7):
            killed.with_name("calc-1.traj.jsonl").write_bytes(snapshot[:cut])
            finished = count if cut == len(snapshot) else count - 1
            if not finished:
                with pytest.raises(TrajectoryError, match="no steps"):
                    load_trajectory(killed)
                continue
            loaded = load_trajectory(killed)
            assert len(loaded["trajectory"]) == finished
            assert loaded["problem_statement"] == ISSUE
            assert loaded["info"]["exit_status"] is None


def test_each_message_is_stored_once_and_steps_refer_to_it(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """Queries are references into the history and a long issue is stored once; a long
    observation is in full in its step and its history message (linear, as SWE-agent's format
    has it); loading restores every query exactly as the model received it."""
    big = "\n".join(f"line {n} " + "x" * 60 for n in range(500))  # ~35 KB per observation
    repo = make_repo({"calc.py": CALC, "big.txt": big + "\n"})
    issue = "The issue.\n" + "Details of the issue. " * 2000  # ~44 KB
    env = LocalEnvironment(str(repo), config=EnvConfig())
    try:
        session = Session(env, tmp_path / "out")
        replies = [*(act("cat big.txt") for _ in range(8)), SUBMIT]
        model = ReplyModel([ModelReply(content=reply) for reply in replies])
        session.run(
            model,
            "agent.history.n=2",
            "agent.history.cache_breakpoints=1",
            "agent.limits.repeats.limit=0",  # the same command on purpose
            issue=issue,
        )
    finally:
        env.close()
    raw = session.trajectory_path.read_text()
    assert raw.count("line 499 ") == 16  # per observation: its step and its history message
    assert raw.count("Details of the issue. " * 2000) == 1
    assert len(raw) < 2 * 8 * len(big) + 2 * len(issue)
    loaded = session.trajectory()
    assert loaded["problem_statement"] == issue
    assert [step["query"] for step in loaded["trajectory"]] == model.queries
    assert all(step["observation"].startswith(big) for step in loaded["trajectory"][:8])


def test_an_unexpected_error_keeps_its_traceback(
    session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(step: StepRecord) -> None:
        if step.action.startswith("open"):
            raise KeyError("missing")

    result = session.run(ScriptedModel([OPEN, SUBMIT]), on_step=broken)
    assert result.exit_status == "exit_error"
    assert result.error == "KeyError: 'missing'"
    info = session.trajectory()["info"]
    assert info["error"] == "KeyError: 'missing'"
    assert info["traceback"].startswith("Traceback (most recent call last):")
    assert "in broken" in info["traceback"] and result.error_trace == info["traceback"]
    assert "in broken" in caplog.text


def test_an_oversized_submission_is_not_submitted_and_says_why(session: Session) -> None:
    result = session.run(
        ScriptedModel([OPEN, FIX, SUBMIT]), "agent.limits.max_submission_bytes=100"
    )
    assert result.exit_status == "submitted" and result.submission == ""
    traj = session.trajectory()
    assert "over agent.limits.max_submission_bytes=100" in traj["info"]["submission_note"]
    assert traj["trajectory"][-1]["observation"].startswith("Submission not taken: the diff was")
    assert not (session.trajectory_path.parent / "calc-1.patch").exists()


@pytest.mark.parametrize("ending", ["submit", "autosubmit"])
def test_files_left_out_of_the_submission_are_named_in_the_trajectory(
    session: Session, ending: str
) -> None:
    make = act("printf 'a\\0b' > blob.bin; head -c 2000000 /dev/zero | tr '\\0' x > big.txt")
    replies = [make, OPEN, FIX, SUBMIT] if ending == "submit" else [make, OPEN, FIX]
    result = session.run(ScriptedModel(replies))
    assert "+    return a + b" in result.submission
    assert "blob.bin" not in result.submission and "big.txt" not in result.submission
    excluded = session.trajectory()["info"]["excluded_from_submission"]
    assert [item["path"] for item in excluded] == ["big.txt", "blob.bin"]
    assert "binary" in excluded[1]["reason"] and "limit" in excluded[0]["reason"]


def test_a_rerun_replaces_every_output_of_the_earlier_run(session: Session) -> None:
    session.run(ScriptedModel([OPEN, FIX, SUBMIT]))
    directory = session.trajectory_path.parent
    assert (directory / "calc-1.patch").exists()
    session.env.run("git reset -q --hard")
    (directory / ".calc-1.pred.k2j4.tmp").write_text("left by a killed write")
    result = session.run(ScriptedModel([SUBMIT]))
    assert result.submission == ""
    assert sorted(p.name for p in directory.iterdir()) == ["calc-1.pred", "calc-1.traj"]
    assert json.loads((directory / "calc-1.pred").read_text())["model_patch"] == ""
    assert len(session.trajectory()["trajectory"]) == 1


def test_history_processor_applies_to_queries(session: Session) -> None:
    replies = [OPEN, act("ls"), act("ls -a"), SUBMIT]
    session.run(ScriptedModel(replies), "agent.history.n=1")
    last_query = session.trajectory()["trajectory"][-1]["query"]
    observations = [m["content"] for m in last_query[2:] if m["role"] == "user"]
    assert observations[0].startswith("Old output omitted (")
    assert observations[1].startswith("Old output omitted (")
    assert not observations[2].startswith("Old output omitted")
    assert all(set(m) <= {"role", "content", "cache_breakpoint"} for m in last_query)


def test_own_trajectory_as_demonstration(session: Session, tmp_path: Path) -> None:
    session.run(ScriptedModel([OPEN, FIX, SUBMIT]))
    demo = tmp_path / "demo.traj"
    demo.write_text(session.trajectory_path.read_text())
    session.env.run("git checkout -q -- calc.py")
    session.aci = ACI(session.env, ACIConfig())
    model = ReplyModel([ModelReply(SUBMIT)])
    session.run(model, f"agent.demonstrations=[{demo}]")
    sent = model.queries[0]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    demonstration = sent[1]["content"]
    assert "WORKED EXAMPLE" in demonstration
    assert "edit 2:2\n    return a + b\nend_of_edit" in demonstration
    assert "COMMANDS:" not in demonstration  # the demo's system prompt is left out
    assert ISSUE in demonstration and ISSUE in sent[2]["content"]


def test_tool_calls_episode(session: Session) -> None:
    def call(index: int, name: str, **arguments: object) -> ModelReply:
        return ModelReply("thinking", tool_calls=(ToolCall(f"call-{index}", name, arguments),))

    model = ReplyModel(
        [
            call(1, "open", path="calc.py"),
            ModelReply("I forgot to call a function."),
            call(2, "edit", start_line=2, end_line=2, replacement_text="    return a + b"),
            call(3, "bash", command="vim calc.py"),
            call(4, "submit"),
        ]
    )
    result = session.run(model, "agent.parser=tool_calls")
    assert result.exit_status == "submitted"
    assert "+    return a + b" in result.submission
    names = {tool.name for tool in model.tools[0] or []}
    assert {"open", "edit", "submit", "bash"} <= names
    history = session.trajectory()["history"]
    assert history[2]["tool_calls"][0]["id"] == "call-1"
    assert history[3]["role"] == "tool" and history[3]["tool_call_id"] == "call-1"
    assert history[3]["content"].startswith("[File: ")
    # a plain-text reply is answered by a user message, a refused call by its tool result
    assert model.queries[2][-1]["role"] == "user"
    assert "exactly one function call" in model.queries[2][-1]["content"]
    assert model.queries[4][-1] == {
        "role": "tool",
        "tool_call_id": "call-3",
        "content": model.queries[4][-1]["content"],
    }
    assert "Interactive operation 'vim'" in model.queries[4][-1]["content"]
    assert "COMMANDS:" not in history[0]["content"]


def test_shell_only_config(session: Session) -> None:
    config = load_config("shell_only")
    session.aci = ACI(session.env, config.aci)
    agent = Agent(
        config.agent,
        ScriptedModel([OPEN, act("sed -i 's/a - b/a + b/' calc.py"), SUBMIT]),
        session.aci,
        output_dir=session.output_dir,
        instance_id="calc-1",
        environment="local",
    )
    result = agent.run(ISSUE)
    assert result.exit_status == "submitted"
    assert "+    return a + b" in result.submission
    traj = session.trajectory()
    assert traj["trajectory"][0]["action"].startswith("sed")  # `open` was refused: not a command
    assert "signature: submit" in traj["history"][0]["content"]
    assert "signature: open" not in traj["history"][0]["content"]


class SlowModel(ReplyModel):
    """Prepared replies, each after `delay` seconds of (real) waiting."""

    def __init__(self, replies: list[ModelReply | Exception], delay: float) -> None:
        super().__init__(replies)
        self.delay = delay

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        import time

        time.sleep(self.delay)
        return super().query(messages, tools, timeout)


def test_each_step_records_its_model_latency_and_cost(session: Session) -> None:
    def reply(content: str, cost: float) -> ModelReply:
        return ModelReply(content=content, input_tokens=10, output_tokens=2, cost=cost)

    replies = [reply("no action here", 0.25), reply(OPEN, 0.5), reply(SUBMIT, 1.0)]
    result = session.run(SlowModel(replies, delay=0.05))  # type: ignore[arg-type]
    assert result.exit_status == "submitted"
    journal_steps = [step.model_latency for step in session.steps]
    steps = session.trajectory()["trajectory"]
    # The first step made two calls (the requery after the format error): both count.
    assert [s["cost"] for s in steps] == [0.75, 1.0]
    assert [s["input_tokens"] for s in steps] == [20, 10]
    assert steps[0]["model_latency"] >= 0.1 and steps[1]["model_latency"] >= 0.05
    assert [s["model_latency"] for s in steps] == journal_steps


# -- stuck detection, step counts, progress events ----------------------------------------------


def test_the_same_action_repeated_is_told_once_then_ends_the_episode(session: Session) -> None:
    """`ls` four times in a row with the same output: the fourth observation tells the model; the
    fifth ends the episode with exit_repeated, autosubmitting the fix made before."""
    model = ScriptedModel([OPEN, FIX, *[act("ls")] * 6, SUBMIT])
    result = session.run(model, "agent.limits.repeats.limit=4")
    assert result.exit_status == "submitted (exit_repeated)"
    assert "+    return a + b" in result.submission
    assert model.position == 7  # open, fix, then ls five times; never asked again
    assert result.steps == 7
    history = session.trajectory()["history"]
    observations = [m["content"] for m in history if m.get("message_type") == "observation"]
    warned = [text for text in observations if "4 times in a row" in text]
    assert len(warned) == 1 and observations.index(warned[0]) == 5  # told once, at the 4th ls
    assert [s.action for s in session.steps][-1] == "exit_repeated"
    assert session.trajectory()["trajectory"][-1]["thought"] == "Exit due to repeated action"


def test_a_second_streak_after_the_warning_ends_the_episode(session: Session) -> None:
    model = ScriptedModel([*[act("ls")] * 3, OPEN, *[act("ls")] * 3, SUBMIT])
    result = session.run(model, "agent.limits.repeats.limit=3")
    assert result.exit_status == "exit_repeated"  # nothing changed: no submission
    assert model.position == 7


def test_the_same_action_with_new_output_is_not_stuck_unless_asked(session: Session) -> None:
    counting = act("date +%s%N")  # the same command, a new output each time
    replies = [*[counting] * 5, SUBMIT]
    assert session.run(ScriptedModel(replies), "agent.limits.repeats.limit=3").exit_status == (
        "submitted"
    )
    session.steps.clear()
    strict = session.run(
        ScriptedModel(replies),
        "agent.limits.repeats.limit=3",
        "agent.limits.repeats.compare=action",
    )
    assert strict.exit_status == "exit_repeated"


def test_repeats_limit_zero_switches_detection_off(session: Session) -> None:
    replies = [*[act("ls")] * 8, SUBMIT]
    result = session.run(ScriptedModel(replies), "agent.limits.repeats.limit=0")
    assert result.exit_status == "submitted" and result.steps == 9


def test_max_steps_counts_executed_actions_only(session: Session) -> None:
    replies = [act(f"echo {n}") for n in range(30)]
    result = session.run(ScriptedModel(replies), "agent.limits.max_steps=25")
    assert result.exit_status == "exit_step_limit"
    assert result.steps == 25  # the exit's own record is no step
    assert len(session.steps) == 26 and session.steps[-1].action == "exit_step_limit"


def test_progress_reports_each_turn_and_each_rejected_reply(session: Session) -> None:
    from swe_aci.trajectory.progress import ReplyRejected, TurnStarted

    events: list[object] = []
    agent = Agent(
        session.agent_config(),
        ScriptedModel(["no action here", act("vim calc.py"), OPEN, SUBMIT]),
        session.aci,
        output_dir=session.output_dir,
        instance_id="calc-1",
        environment="local",
        on_progress=events.append,
    )
    assert agent.run(ISSUE).exit_status == "submitted"
    turns = [event for event in events if isinstance(event, TurnStarted)]
    rejected = [event for event in events if isinstance(event, ReplyRejected)]
    assert [event.turn for event in turns] == [1, 2]
    assert turns[0].tokens_sent == 0 and turns[1].tokens_sent > 0
    assert [(event.turn, event.kind) for event in rejected] == [(1, "format"), (1, "blocked")]
    assert "vim" in rejected[1].reason


def test_a_lone_surrogate_in_a_reply_and_invalid_utf8_output_are_recorded(
    session: Session,
) -> None:
    """Text decoded with surrogateescape reaches the model's reply as lone surrogates, and a
    command prints bytes that are not UTF-8: the journal and the .traj are written all the same,
    and load back, by load_trajectory and the inspector."""
    printed = act(r"printf 'bad \xff\xfe byte\n'", thought="DISCUSSION\nLook at \udcff this.")
    echoed = act("echo '\udcff'", thought="DISCUSSION\nAnd \ud800 again.")
    journaled: list[str] = []

    def read_the_journal(step: StepRecord) -> None:  # the episode running: only its journal
        journaled.append(load_trajectory(session.trajectory_path)["trajectory"][-1]["thought"])

    result = session.run(ScriptedModel([printed, echoed, SUBMIT]), on_step=read_the_journal)
    assert result.exit_status == "submitted"
    assert journaled[:2] == [
        "DISCUSSION\nLook at \udcff this.\n",
        "DISCUSSION\nAnd \ud800 again.\n",
    ]
    steps = session.trajectory()["trajectory"]
    assert steps[0]["thought"] == journaled[0] and "\udcff" in steps[0]["response"]
    assert steps[0]["observation"] == "bad \ufffd\ufffd byte"
    assert steps[1]["thought"] == journaled[1] and steps[1]["action"] == "echo '\udcff'\n"
    with serving([session.output_dir]) as address:
        status, _, body = request(address, "/run/0/instance/calc-1.html")
    page = body.decode("utf-8")
    assert status == 200 and "Look at \ufffd this." in page and "And \ufffd again." in page
