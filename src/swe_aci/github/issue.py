"""A GitHub issue URL read into the problem statement the agent gets."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from swe_aci.github.client import GitHubClient, GitHubError
from swe_aci.github.config import API_URL_VARIABLE, PUBLIC_API_URL, GitHubConfig

ISSUE_URL = re.compile(
    r"https?://(?P<host>[A-Za-z0-9.-]+(?::\d+)?)/(?P<owner>[A-Za-z0-9_.-]+)/"
    r"(?P<name>[A-Za-z0-9_.-]+)/issues/(?P<number>\d+)/?(?:[?#]\S*)?"
)


@dataclass(frozen=True)
class IssueRef:
    """OWNER/REPO#N on a GitHub host."""

    host: str
    owner: str
    name: str
    number: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def repo_path(self) -> str:
        return f"/repos/{self.owner}/{self.name}"

    @property
    def branch(self) -> str:
        """The branch `--open-pr` pushes."""
        return f"swe-aci/issue-{self.number}"

    @property
    def instance_id(self) -> str:
        """SWE-bench's style: owner__repo-N."""
        return f"{self.owner}__{self.name}-{self.number}"

    def __str__(self) -> str:
        return f"{self.full_name}#{self.number}"


def parse_issue_url(text: str) -> IssueRef | None:
    """The issue a URL names, or None when `text` is not a GitHub issue URL."""
    match = ISSUE_URL.fullmatch(text.strip())
    if match is None:
        return None
    return IssueRef(match["host"], match["owner"], match["name"], int(match["number"]))


def api_url_for(issue: IssueRef, config: GitHubConfig) -> str:
    """The config's URL, else $GITHUB_API_URL, else github.com's or the Enterprise host's."""
    if config.api_url:
        return config.api_url
    if os.environ.get(API_URL_VARIABLE):
        return os.environ[API_URL_VARIABLE]
    if issue.host in ("github.com", "www.github.com"):
        return PUBLIC_API_URL
    return f"https://{issue.host}/api/v3"


@dataclass(frozen=True)
class Issue:
    ref: IssueRef
    title: str
    body: str
    comments: list[str]

    def problem_statement(self) -> str:
        parts = [f"{self.title}\n", self.body.strip()]
        for number, comment in enumerate(self.comments, 1):
            parts.append(f"\nComment {number}:\n{comment.strip()}")
        return "\n".join(parts).strip() + "\n"


def fetch_issue(client: GitHubClient, ref: IssueRef, with_comments: bool) -> Issue:
    what = f"issue {ref}"
    data: dict[str, Any] = client.get(f"{ref.repo_path}/issues/{ref.number}", what)
    if "pull_request" in data:
        raise GitHubError(f"{ref} is a pull request, not an issue")
    comments: list[str] = []
    if with_comments and data.get("comments"):
        pages = client.get_pages(
            f"{ref.repo_path}/issues/{ref.number}/comments",
            f"the comments of {what}",
            client.config.max_comment_pages,
        )
        comments = [str(item.get("body") or "") for item in pages]
    return Issue(ref, str(data.get("title") or ""), str(data.get("body") or ""), comments)
