"""`swe-aci run` and `swe-aci replay`: one episode, its steps shown as they happen."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    DEFAULT_OUTPUT,
    ConfigOption,
    EnvOption,
    ImageOption,
    InitCopyOption,
    ModelOption,
    SetOption,
    build_config,
    check_before_work,
    check_writable,
    default_output_dir,
    fail,
    guarded,
    read_issue,
    require_model,
    resolved_repo,
)

if TYPE_CHECKING:
    from swe_aci.github.issue import IssueRef
    from swe_aci.github.workflow import IssueWorkspace
    from swe_aci.trajectory.result import EpisodeResult

TRAJECTORY_SAVED = "the trajectory so far was saved"
OutputOption = Annotated[
    Path | None,
    typer.Option(
        help="Where trajectories and patches go (default: ./trajectories, or "
        "~/.local/share/swe-aci/trajectories when that would be inside the repository worked on)."
    ),
]


def finish_episode(
    result: EpisodeResult,
    *,
    exit_with_outcome: bool = True,
    then: Callable[[], None] | None = None,
) -> None:
    """Print the outputs and the outcome, then do `then` (apply the patch, open a pull request).
    An episode that ended on an unexpected error is a failed command (exit 1); otherwise the exit
    code says whether a patch was produced (0), none (3), or only files the agent created that
    nothing else uses (4)."""
    from swe_aci.episode_display import print_result

    outcome = print_result(result)
    if result.error_trace is not None:
        fail(
            f"the episode ended on an unexpected error ({result.error}); its traceback is in "
            f"{result.trajectory_path}",
            code=1,
        )
    if then is not None:
        then()
    if exit_with_outcome and outcome.kind.value:
        raise typer.Exit(outcome.kind.value)


def run(
    repo: Annotated[str | None, typer.Option(help="Local git repository or git URL.")] = None,
    issue: Annotated[
        str | None,
        typer.Option(help="Issue text, a file holding it, or a GitHub issue URL."),
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option(help="One task of a task file, FILE:ID (instead of --repo and --issue)."),
    ] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to start from (default HEAD).")] = None,
    config: ConfigOption = None,
    model: ModelOption = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = None,
    instance_id: Annotated[str | None, typer.Option(help="Name of this run's outputs.")] = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
    issue_comments: Annotated[
        bool, typer.Option(help="With a GitHub issue URL: give the agent its comments too.")
    ] = False,
    open_pr: Annotated[
        bool,
        typer.Option(help="With a GitHub issue URL: push the patch and open a pull request."),
    ] = False,
    apply: Annotated[
        bool, typer.Option(help="Apply the patch to the local --repo clone's working tree.")
    ] = False,
) -> None:
    """Run the agent on one issue of one repository, or on one task of a task file.

    Exit code: 0 a patch was produced, 3 no patch, 4 a patch that only adds files nothing else
    uses (a reproduction script), 1 an unexpected error, 2 a usage error.
    """

    def body() -> None:
        if instance is not None:
            if repo is not None or issue is not None or commit is not None:
                fail("--instance names the repository and the issue: drop --repo/--issue/--commit")
            run_task(instance)
            return
        from swe_aci.github.issue import parse_issue_url

        issue_ref = parse_issue_url(issue) if issue is not None else None
        if issue_ref is None and (open_pr or issue_comments):
            flag = "--open-pr" if open_pr else "--issue-comments"
            fail(f"{flag} needs a GitHub issue URL as --issue")
        if apply and (repo is None or is_remote_location(repo)):
            fail("--apply needs --repo naming a local clone to apply the patch to")
        if issue_ref is not None:
            run_github_issue(issue_ref)
            return
        if repo is None or issue is None:
            fail("give --repo and --issue, or one task of a task file with --instance FILE:ID")
        from swe_aci.env.config import Workspace
        from swe_aci.episode import instance_id_for, run_episode
        from swe_aci.episode_display import EpisodeDisplay

        problem = read_issue(issue)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_before_work(episode_config)
        outputs = output_dir or default_output_dir(repo)
        check_writable(outputs)
        display = EpisodeDisplay()
        with resolved_repo(repo, init_copy) as location:
            require_model(episode_config)
            result = run_episode(
                episode_config,
                Workspace(episode_config.env, location, commit),
                problem,
                instance_id=instance_id_for(repo, problem) if instance_id is None else instance_id,
                output_dir=outputs,
                on_step=display.step,
                on_progress=display.progress,
            )
        finish_episode(result, then=(lambda: apply_submission(repo, result)) if apply else None)

    def run_github_issue(issue_ref: IssueRef) -> None:
        from swe_aci.env.config import Workspace
        from swe_aci.episode import run_episode
        from swe_aci.episode_display import EpisodeDisplay
        from swe_aci.github.workflow import issue_workspace

        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_before_work(episode_config)
        require_model(episode_config)
        local = repo is not None and not is_remote_location(repo)
        outputs = output_dir or (default_output_dir(repo) if local and repo else DEFAULT_OUTPUT)
        check_writable(outputs)
        display = EpisodeDisplay()
        with (
            resolved_repo(repo, init_copy) if local else contextlib.nullcontext(None) as location,
            issue_workspace(
                issue_ref,
                episode_config.github,
                clone_from=repo,
                local_repository=location,
                commit=commit,
                with_comments=issue_comments,
                need_token=open_pr,
            ) as workspace,
        ):
            result = run_episode(
                episode_config,
                Workspace(episode_config.env, workspace.location, workspace.base_commit),
                workspace.issue.problem_statement(),
                instance_id=instance_id or issue_ref.instance_id,
                output_dir=outputs,
                on_step=display.step,
                on_progress=display.progress,
            )

            def after() -> None:
                if apply:
                    apply_submission(repo or workspace.location, result)
                if open_pr:
                    report_pull_request(workspace, result)

            finish_episode(result, then=after)

    def run_task(spec: str) -> None:
        from swe_aci.episode import run_episode
        from swe_aci.episode_display import EpisodeDisplay
        from swe_aci.recipes import task_workspace
        from swe_aci.tasks import load_task

        task = load_task(spec)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        require_model(episode_config)
        if instance_id is not None:
            task = task.model_copy(update={"instance_id": instance_id})
        outputs = output_dir or DEFAULT_OUTPUT
        check_writable(outputs)
        workspace = task_workspace(
            task, episode_config.env, log=lambda line: typer.echo(line, err=True)
        )
        display = EpisodeDisplay()
        result = run_episode(
            episode_config,
            workspace,
            task.problem_statement,
            instance_id=task.instance_id,
            output_dir=outputs,
            on_step=display.step,
            on_progress=display.progress,
        )
        finish_episode(result)

    guarded(body, interrupted=TRAJECTORY_SAVED)


def is_remote_location(location: str) -> bool:
    from swe_aci.env.repo import is_remote

    return is_remote(location)


def apply_submission(repository: str, result: EpisodeResult) -> None:
    """`--apply`: the patch into the user's working tree, whole or not at all."""
    from swe_aci.github.client import GitHubError
    from swe_aci.github.git import Git, apply_patch

    if not result.submission.strip():
        typer.echo("nothing to apply: the episode submitted an empty patch")
        return
    git = Git(token=None)
    try:
        apply_patch(git, Path(repository), result.submission)
    except GitHubError as error:
        fail(f"{error}; the patch is saved in {result.trajectory_path.with_suffix('.patch')}")
    finally:
        git.close()
    typer.echo(f"applied the patch to {repository}")


def report_pull_request(workspace: IssueWorkspace, result: EpisodeResult) -> None:
    """`--open-pr`: the pull request of a non-empty submission; a failure keeps the patch."""
    from swe_aci.github.client import GitHubError

    if not result.submission.strip():
        typer.echo("no pull request: the episode submitted an empty patch")
        return
    try:
        pull = workspace.open_pull_request(result.submission, result.trajectory_path)
    except GitHubError as error:
        fail(f"{error}; the patch is saved in {result.trajectory_path.with_suffix('.patch')}")
    verb = "updated the open pull request" if pull.reused else "opened pull request"
    typer.echo(f"{verb}: {pull.url}")


def replay(
    trajectory: Annotated[Path, typer.Argument(help="A .traj file (ours or paper-era).")],
    repo: Annotated[str, typer.Option(help="The repository the trajectory ran on.")],
    commit: Annotated[str | None, typer.Option(help="Its base commit (default HEAD).")] = None,
    config: ConfigOption = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
) -> None:
    """Re-execute the actions recorded in a trajectory and compare the resulting patch."""

    def body() -> None:
        from swe_aci.env.config import Workspace
        from swe_aci.episode import run_episode
        from swe_aci.episode_display import EpisodeDisplay
        from swe_aci.trajectory.exits import INTERRUPTED
        from swe_aci.trajectory.store import load_trajectory, recorded_problem_statement

        recorded = load_trajectory(trajectory)
        episode_config = build_config(
            config,
            set_ or [],
            **{
                "model.name": "replay",
                "model.replay_path": str(trajectory),
                "env.backend": env,
                "env.image": image,
            },
        )
        check_before_work(episode_config)
        outputs = output_dir or default_output_dir(repo)
        check_writable(outputs)
        instance_id = replay_instance_id(trajectory, outputs)
        display = EpisodeDisplay()
        with resolved_repo(repo, init_copy) as location:
            result = run_episode(
                episode_config,
                Workspace(episode_config.env, location, commit),
                recorded_problem_statement(recorded) or f"(replay of {trajectory.name})",
                instance_id=instance_id,
                output_dir=outputs,
                on_step=display.step,
                on_progress=display.progress,
            )
        finish_episode(result, exit_with_outcome=False)
        info = recorded["info"]
        if info.get("exit_status") in (None, "", INTERRUPTED):
            typer.echo("the recorded episode did not finish: no submission to compare with")
            return
        expected = comparable_patch(info.get("submission"))
        produced = comparable_patch(result.submission)
        if produced == expected:
            typer.echo("replayed patch matches the recorded submission")
            return
        typer.echo(patch_difference(expected, produced))
        fail("the replayed patch differs from the recorded submission (diff above)", code=1)

    guarded(body, interrupted=TRAJECTORY_SAVED)


def replay_instance_id(trajectory: Path, output_dir: Path) -> str:
    """The trajectory's name (characters an id cannot hold made `_`), unless the replay would
    then overwrite the trajectory itself."""
    from swe_aci.records import instance_id_from

    instance_id = instance_id_from(trajectory.stem, "replay")
    destination = output_dir / instance_id / f"{instance_id}.traj"
    if destination.resolve() == trajectory.resolve():
        return f"{instance_id}-replay"
    return instance_id


def comparable_patch(submission: str | None) -> str:
    """A submission as `replay` compares it: only newlines at the ends are ignored (paper-era
    submissions start with one); spaces, even at the end of the last line, are significant."""
    return (submission or "").strip("\n")


def patch_difference(expected: str, produced: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(),
        produced.splitlines(),
        "recorded submission",
        "replayed patch",
        lineterm="",
    )
    return "\n".join(lines)
