"""`run --issue https://github.com/OWNER/REPO/issues/N`, `--open-pr` and `--apply`, against a fake
GitHub REST API on 127.0.0.1 whose repositories are local bare git repositories: the requests
sent, the branch pushed, the pull request's body, the token kept out of every file and output,
and each failure a user can cause ending in one line."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from swe_aci.cli import app
from swe_aci.github.config import GitHubConfig
from swe_aci.github.issue import api_url_for, parse_issue_url

pytest_plugins = ["fake_github"]

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
ISSUE_URL = "https://github.com/acme/hello/issues/7"
SESSION = [
    "DISCUSSION\nLook.\n```\nopen hello.py\n```\n",
    "DISCUSSION\nGreet.\n```\nedit 1:1\nprint('hello, world')\nend_of_edit\n```\n",
    'DISCUSSION\nIs a token here?\n```\necho "token=$GITHUB_TOKEN"; env | grep -i token\n```\n',
    "DISCUSSION\nDone.\n```\nsubmit\n```\n",
]
NOTHING = ["DISCUSSION\nNothing to do.\n```\nsubmit\n```\n"]


def cli(fake, *args: str | Path, script: list[str] = SESSION) -> Result:
    arguments = [
        "run", "--env", "local", "--model", "scripted",
        "--set", f"model.script={json.dumps(script)}",
        "--set", f"github.api_url={fake.url}",
        *map(str, args),
    ]  # fmt: skip
    return CliRunner(env=PLAIN).invoke(app, arguments)


def assert_one_line_error(result: Result, *fragments: str) -> str:
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code != 0
    assert "Traceback" not in result.stderr
    # Progress lines (turns, step times) come first when the episode ran; the error is one line.
    lines = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(lines) == 1, result.stderr
    assert result.stderr.rstrip().endswith(lines[0])
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def files_holding(root: Path, secret: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


@pytest.fixture
def upstream(fake_github, make_repo: Callable[..., Path]):
    source = make_repo({"hello.py": "print('hello')\n", "README.md": "# hello\n"}, name="hello")
    repository = fake_github.add_repository("acme", "hello", source)
    fake_github.add_issue(
        "acme/hello", 7, "Greet the world", "hello.py should say hello, world.",
        comments=["It should also keep printing one line."],
    )  # fmt: skip
    return repository


@pytest.fixture
def work(work: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """conftest's empty current directory, with no GitHub settings from the environment."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    return work


def test_issue_to_pull_request(fake_github, upstream, work, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    result = cli(fake_github, "--issue", ISSUE_URL, "--issue-comments", "--open-pr")
    assert result.exit_code == 0, result.stderr
    assert "opened pull request: https://github.com/acme/hello/pull/1" in result.stdout

    assert fake_github.calls() == [
        "GET /repos/acme/hello/issues/7",
        "GET /repos/acme/hello/issues/7/comments?per_page=100",
        "GET /repos/acme/hello",  # its clone URL
        "GET /repos/acme/hello",  # default branch and push permission
        "GET /repos/acme/hello/pulls?head=acme%3Aswe-aci%2Fissue-7&state=open",
        "POST /repos/acme/hello/pulls",
    ]
    assert {r.authorization for r in fake_github.requests} == {f"Bearer {fake_github.token}"}

    # the agent got title, body and comments
    trajectory = json.loads((work / "trajectories/acme__hello-7/acme__hello-7.traj").read_text())
    problem = trajectory["problem_statement"]
    assert problem.startswith("Greet the world\n")
    assert "should say hello, world." in problem and "keep printing one line" in problem

    # the pushed branch: one commit on main with the patch
    diff = git("diff", "main", "swe-aci/issue-7", cwd=upstream.bare)
    assert "-print('hello')\n+print('hello, world')\n" in diff
    assert git("rev-list", "--count", "main..swe-aci/issue-7", cwd=upstream.bare).strip() == "1"

    pull = fake_github.pulls[0]
    assert pull["head"] == "acme:swe-aci/issue-7" and pull["base"] == "main"
    assert pull["title"] == "swe-aci: Greet the world"
    body = pull["body"]
    for shown in (
        "for #7 (Greet the world)",
        'add "Fixes #7" if it resolves it',
        "**Files changed:** `hello.py`",
        "**Exit status:** `submitted`",
        "**Model:** `scripted`",
        "**Cost:** $0.0000 (4 model calls",
        "(4 steps)",
        "  1. open hello.py",
        "  4. submit",
    ):
        assert shown in body, shown
    assert "Fixes #7\n" not in body and not body.startswith("Fixes")

    # the token: in no output, no file (trajectory, clones, remotes), not in the sandbox
    basic = base64.b64encode(f"x-access-token:{fake_github.token}".encode())
    assert fake_github.token not in result.stdout + result.stderr
    assert "token=\n" in trajectory["trajectory"][2]["observation"] + "\n"
    for secret in (fake_github.token.encode(), basic):
        assert files_holding(tmp_path, secret) == []
    assert json.dumps(pull).find(fake_github.token) < 0


def test_without_push_access_the_branch_goes_to_a_fork(
    fake_github, upstream, work, monkeypatch
) -> None:
    upstream.push = False
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    result = cli(fake_github, "--issue", ISSUE_URL, "--open-pr")
    assert result.exit_code == 0, result.stderr
    assert fake_github.calls()[2:] == [
        "GET /repos/acme/hello",
        "POST /repos/acme/hello/forks",
        "GET /repos/octo-user/hello",
        "GET /repos/acme/hello/pulls?head=octo-user%3Aswe-aci%2Fissue-7&state=open",
        "POST /repos/acme/hello/pulls",
    ]
    fork = fake_github.repositories["octo-user/hello"]
    assert "+print('hello, world')" in git("diff", "main", "swe-aci/issue-7", cwd=fork.bare)
    assert "swe-aci/issue-7" not in git("branch", cwd=upstream.bare)
    assert fake_github.pulls[0]["head"] == "octo-user:swe-aci/issue-7"


def test_a_rerun_updates_the_open_pull_request(fake_github, upstream, work, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    assert cli(fake_github, "--issue", ISSUE_URL, "--open-pr").exit_code == 0
    again = cli(fake_github, "--issue", ISSUE_URL, "--open-pr")
    assert again.exit_code == 0, again.stderr
    assert "updated the open pull request: https://github.com/acme/hello/pull/1" in again.stdout
    assert len(fake_github.pulls) == 1


def test_an_empty_patch_opens_no_pull_request(fake_github, upstream, work, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    result = cli(fake_github, "--issue", ISSUE_URL, "--open-pr", script=NOTHING)
    assert result.exit_code == 3, result.stderr  # no patch
    assert "no pull request: the episode submitted an empty patch" in result.stdout
    assert not any(call.startswith("POST") for call in fake_github.calls())


def test_open_pr_without_a_token_fails_before_any_work(fake_github, upstream, work) -> None:
    result = cli(fake_github, "--issue", ISSUE_URL, "--open-pr")
    assert_one_line_error(result, "--open-pr needs a GitHub token: set GITHUB_TOKEN")
    assert fake_github.requests == []
    assert list(work.iterdir()) == []


def test_an_issue_that_does_not_exist(fake_github, upstream, work) -> None:
    result = cli(fake_github, "--issue", "https://github.com/acme/hello/issues/99")
    assert_one_line_error(result, "GitHub found no issue acme/hello#99 (404")
    assert list(work.iterdir()) == []


def test_a_private_repository_without_a_token(fake_github, upstream, work, monkeypatch) -> None:
    upstream.private = True
    result = cli(fake_github, "--issue", ISSUE_URL)
    assert_one_line_error(result, "acme/hello#7", "if it is private, set GITHUB_TOKEN")
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    assert cli(fake_github, "--issue", ISSUE_URL).exit_code == 0


def test_a_bad_token(fake_github, upstream, work, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_wrong_token_XYZ")
    result = cli(fake_github, "--issue", ISSUE_URL)
    line = assert_one_line_error(result, "GitHub refused the token (401 Bad credentials)")
    assert "ghp_wrong_token_XYZ" not in line


def test_an_unreachable_api(fake_github, upstream, work) -> None:
    result = cli(
        fake_github, "--issue", ISSUE_URL,
        "--set", "github.retries=1", "--set", "github.api_url=http://127.0.0.1:1",
    )  # fmt: skip
    assert_one_line_error(result, "cannot reach the GitHub API at http://127.0.0.1:1 (issue")
    assert list(work.iterdir()) == []


def test_an_exhausted_rate_limit_ends_at_once(fake_github, upstream, work) -> None:
    reset = int(time.time()) + 1800
    fake_github.rate_limited = [
        {"status": "403", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    ]
    result = cli(fake_github, "--issue", ISSUE_URL)
    assert_one_line_error(result, "GitHub's rate limit stops issue acme/hello#7", "resets at")
    assert len(fake_github.requests) == 1  # half an hour is past max_rate_limit_wait
    assert list(work.iterdir()) == []


def test_a_short_rate_limit_is_waited_out(fake_github, upstream, work) -> None:
    fake_github.rate_limited = [
        {"status": "429", "retry-after": "0"},
        {"status": "403", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()))},
    ]
    result = cli(fake_github, "--issue", ISSUE_URL)
    assert result.exit_code == 0, result.stderr
    assert fake_github.calls()[:3] == ["GET /repos/acme/hello/issues/7"] * 3


def test_retries_are_bounded(fake_github, upstream, work) -> None:
    fake_github.rate_limited = [{"status": "429", "retry-after": "0"} for _ in range(10)]
    result = cli(fake_github, "--issue", ISSUE_URL, "--set", "github.retries=2")
    assert_one_line_error(result, "rate limit", "retry after 0 s")
    assert len(fake_github.requests) == 3


def test_a_failed_push_keeps_the_patch(fake_github, upstream, work, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    upstream.bare.rename(upstream.bare.with_suffix(".gone"))
    clone = work.parent / "mine"
    git("clone", "-q", str(upstream.bare.with_suffix(".gone")), str(clone))
    result = cli(fake_github, "--issue", ISSUE_URL, "--repo", clone, "--open-pr")
    assert_one_line_error(result, "git push failed", "the patch is saved in trajectories/")
    patch = work / "trajectories/acme__hello-7/acme__hello-7.patch"
    assert "+print('hello, world')" in patch.read_text()


def test_apply_writes_the_patch_into_the_local_clone(fake_github, upstream, work) -> None:
    clone = work.parent / "mine"
    git("clone", "-q", str(upstream.bare), str(clone))
    result = cli(fake_github, "--issue", ISSUE_URL, "--repo", clone, "--apply")
    assert result.exit_code == 0, result.stderr
    assert f"applied the patch to {clone}" in result.stdout
    assert (clone / "hello.py").read_text() == "print('hello, world')\n"
    assert fake_github.calls() == ["GET /repos/acme/hello/issues/7"]  # no clone needed


def test_apply_that_does_not_fit_changes_nothing(fake_github, upstream, work) -> None:
    clone = work.parent / "mine"
    git("clone", "-q", str(upstream.bare), str(clone))
    result = cli(fake_github, "--issue", ISSUE_URL, "--repo", clone, "--apply", "--commit", "HEAD")
    assert result.exit_code == 0
    (clone / "hello.py").write_text("print('changed meanwhile')\n")
    again = cli(fake_github, "--issue", ISSUE_URL, "--repo", clone, "--apply",
                "--instance-id", "again")  # fmt: skip
    assert_one_line_error(again, "git apply failed", "the patch is saved in")
    assert (clone / "hello.py").read_text() == "print('changed meanwhile')\n"


def test_apply_needs_a_local_repository(fake_github, upstream, work) -> None:
    result = cli(fake_github, "--issue", ISSUE_URL, "--apply")
    assert_one_line_error(result, "--apply needs --repo naming a local clone")
    assert fake_github.requests == []


def test_open_pr_needs_an_issue_url(fake_github, work, make_repo) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    for flag in ("--open-pr", "--issue-comments"):
        result = cli(fake_github, "--issue", "Fix it.", "--repo", repo, flag)
        assert_one_line_error(result, f"{flag} needs a GitHub issue URL")


def test_issue_urls_and_the_api_they_go_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    public = parse_issue_url("https://github.com/acme/hello/issues/7")
    enterprise = parse_issue_url("https://git.example.com/team/tool/issues/12/")
    assert public is not None and enterprise is not None
    assert (str(public), public.branch, public.instance_id) == (
        "acme/hello#7", "swe-aci/issue-7", "acme__hello-7",
    )  # fmt: skip
    assert api_url_for(public, GitHubConfig()) == "https://api.github.com"
    assert api_url_for(enterprise, GitHubConfig()) == "https://git.example.com/api/v3"
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.local/api/v3")
    assert api_url_for(public, GitHubConfig()) == "https://ghe.local/api/v3"
    configured = GitHubConfig(api_url="https://other/api/v3")
    assert api_url_for(public, configured) == "https://other/api/v3"
    for text in (
        "https://github.com/acme/hello/pull/7",
        "https://github.com/acme/hello/issues/seven",
        "Fix https://github.com/acme/hello/issues/7 please",
    ):
        assert parse_issue_url(text) is None


def test_the_api_url_comes_from_the_environment(fake_github, upstream, work, monkeypatch) -> None:
    """GitHub Enterprise (and Actions) set GITHUB_API_URL; no config key needed."""
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    arguments = [
        "run", "--env", "local", "--model", "scripted",
        "--set", f"model.script={json.dumps(NOTHING)}", "--issue", ISSUE_URL,
    ]  # fmt: skip
    result = CliRunner(env=PLAIN).invoke(app, arguments)
    assert result.exit_code == 3, result.stderr  # ran; NOTHING makes no patch
    assert fake_github.calls()[0] == "GET /repos/acme/hello/issues/7"


def token_forms(token: str) -> dict[str, str]:
    basic = f"x-access-token:{token}"
    return {
        "bearer": f"Bearer {token}",
        "basic pair": basic,
        "basic base64": "Basic " + base64.b64encode(basic.encode()).decode(),
        "token base64": base64.b64encode(token.encode()).decode(),
    }


@pytest.mark.parametrize("form", ["bearer", "basic pair", "basic base64", "token base64"])
def test_a_token_quoted_by_the_api_is_redacted(fake_github, upstream, work, monkeypatch, form):
    """GitHub's 401 may quote the credentials it got; the error line shows none of their forms."""
    token = "ghp_wrong_token_quoted_0123456789"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    fake_github.bad_credentials = f"Bad credentials: {token_forms(token)[form]}"
    result = cli(fake_github, "--issue", ISSUE_URL)
    line = assert_one_line_error(result, "GitHub refused the token (401 Bad credentials: ")
    for secret in token_forms(token).values():
        assert secret.removeprefix("Bearer ").removeprefix("Basic ") not in line, line
    assert token not in result.stdout + result.stderr


def test_a_token_in_gits_error_is_redacted(fake_github, upstream, work, monkeypatch) -> None:
    """A clone URL from the API that holds the token's forms: git's complaint quotes it."""
    token = fake_github.token
    monkeypatch.setenv("GITHUB_TOKEN", token)
    forms = token_forms(token)
    upstream.clone_url = (
        f"file:///nonexistent/{token}/{forms['basic pair']}/{forms['basic base64'][6:]}"
    )
    result = cli(fake_github, "--issue", ISSUE_URL)
    line = assert_one_line_error(result, "git clone failed", "/nonexistent/***/***/***")
    assert token not in line and forms["basic base64"][6:] not in line


def test_comment_pages_are_followed_on_the_apis_origin_only(
    fake_github, upstream, work, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake_github.token)
    fake_github.comments_per_page_cap = 1
    fake_github.comments[("acme/hello", 7)] = ["first comment", "second comment", "third comment"]
    result = cli(fake_github, "--issue", ISSUE_URL, "--issue-comments")
    assert result.exit_code == 0, result.stderr
    trajectory = json.loads((work / "trajectories/acme__hello-7/acme__hello-7.traj").read_text())
    for text in ("first comment", "second comment", "third comment"):
        assert text in trajectory["problem_statement"]

    # the same host on another port: a link there is not followed, the token never goes there
    elsewhere = type(fake_github)(token="unused", root=tmp_path)
    try:
        fake_github.next_page_origin = elsewhere.url
        again = cli(fake_github, "--issue", ISSUE_URL, "--issue-comments",
                    "--instance-id", "again")  # fmt: skip
        assert_one_line_error(again, "is on another origin", elsewhere.url.split("//")[1])
        assert elsewhere.requests == []
    finally:
        elsewhere.httpd.shutdown()
        elsewhere.httpd.server_close()
