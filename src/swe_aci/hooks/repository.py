"""Hooks on the user's repository: `--apply` (the patch into the working tree) and `--open-pr`
(a pull request on GitHub)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.hooks.base import HookError, InstanceCompleted

if TYPE_CHECKING:
    from swe_aci.github.workflow import IssueWorkspace


@dataclass
class ApplyPatch:
    """`--apply`: the patch into the user's working tree, whole or not at all."""

    repository: str
    say: Callable[[str], None]

    def on_instance_completed(self, completed: InstanceCompleted[object]) -> None:
        from swe_aci.github.client import GitHubError
        from swe_aci.github.git import Git, apply_patch

        if not completed.submission.strip():
            self.say("nothing to apply: the episode submitted an empty patch")
            return
        git = Git(token=None)
        try:
            apply_patch(git, Path(self.repository), completed.submission)
        except GitHubError as error:
            raise HookError(f"{error}; the patch is saved in {completed.patch_path}") from None
        finally:
            git.close()
        self.say(f"applied the patch to {self.repository}")


@dataclass
class OpenPullRequest:
    """`--open-pr`: the pull request of a non-empty submission; a failure keeps the patch."""

    workspace: IssueWorkspace
    say: Callable[[str], None]

    def on_instance_completed(self, completed: InstanceCompleted[object]) -> None:
        from swe_aci.github.client import GitHubError

        if not completed.submission.strip():
            self.say("no pull request: the episode submitted an empty patch")
            return
        try:
            pull = self.workspace.open_pull_request(completed.submission, completed.trajectory_path)
        except GitHubError as error:
            raise HookError(f"{error}; the patch is saved in {completed.patch_path}") from None
        verb = "updated the open pull request" if pull.reused else "opened pull request"
        self.say(f"{verb}: {pull.url}")
