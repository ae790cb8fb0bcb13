"""The `github` section of the episode config: where the REST API is and how long to wait on it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

API_URL_VARIABLE = "GITHUB_API_URL"  # the variable GitHub Actions sets; GitHub Enterprise's base
PUBLIC_API_URL = "https://api.github.com"


class GitHubConfig(BaseModel):
    """GitHub's REST API as `run --issue URL` and `--open-pr` use it."""

    model_config = ConfigDict(extra="forbid")

    api_url: str | None = Field(
        None,
        description="REST API base (GitHub Enterprise: https://HOST/api/v3); default: "
        "$GITHUB_API_URL, else api.github.com for github.com issues, https://HOST/api/v3 otherwise",
    )
    timeout: float = Field(30.0, gt=0, description="seconds one API request may take")
    retries: int = Field(3, ge=0, description="retries of a rate-limited or failed request")
    max_rate_limit_wait: float = Field(
        60.0, ge=0, description="longest wait (seconds) for a rate limit to reset; else an error"
    )
    max_comment_pages: int = Field(5, ge=1, description="pages of 100 comments read at most")
    fork_wait: float = Field(60.0, ge=0, description="seconds to wait for a new fork to appear")
