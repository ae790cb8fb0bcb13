"""A small client of GitHub's REST API over httpx: the token as a bearer header (never logged),
rate-limit headers honoured (`retry-after`, `x-ratelimit-remaining` / `x-ratelimit-reset`) with
bounded retries, and every failure a `GitHubError` of one line."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from swe_aci.github.config import GitHubConfig
from swe_aci.github.redaction import Redactor
from swe_aci.retry import retrying

API_VERSION = "2022-11-28"
RETRIED_STATUSES = frozenset({500, 502, 503, 504})


class GitHubError(Exception):
    """A failed GitHub operation, as one line for the user (never holding the token)."""


class _Refused(Exception):
    """An unsuccessful answer, as the retry loop sees it."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


class GitHubNotFound(GitHubError):
    """404: absent, or private and the token (if any) cannot see it."""


class GitHubClient:
    """JSON requests against one API base URL."""

    def __init__(
        self,
        api_url: str,
        token: str | None,
        config: GitHubConfig,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "swe-aci",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.api_url = api_url.rstrip("/")
        self.has_token = bool(token)
        self.redact = Redactor(token)
        self.config = config
        self.sleep = sleep
        self.http = httpx.Client(
            base_url=self.api_url, headers=headers, timeout=config.timeout, follow_redirects=True
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, what: str, **params: Any) -> Any:
        return self.request("GET", path, what, params=params or None).json()

    def post(self, path: str, what: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, what, json=body).json()

    def get_pages(self, path: str, what: str, max_pages: int) -> list[Any]:
        """A list endpoint's items, following `Link: rel="next"` for at most `max_pages` pages.

        A next link is followed only on the API's own scheme, host and port: the token goes with
        every request, and a reply must not send it to another origin."""
        items: list[Any] = []
        url: str | None = path
        params: dict[str, Any] | None = {"per_page": 100}
        for _ in range(max_pages):
            if url is None:
                break
            response = self.request("GET", url, what, params=params)
            items.extend(response.json())
            url = response.links.get("next", {}).get("url")
            if url is not None and not self.same_origin(url):
                raise GitHubError(
                    self.redact(
                        f"GitHub's next page of {what} is on another origin "
                        f"({origin_text(url)}, not {origin_text(self.api_url)}): "
                        "not followed"
                    )
                )
            params = None  # the next link carries them
        return items

    def same_origin(self, url: str) -> bool:
        """Whether `url` (absolute, or relative to the API) is on the API's scheme, host and port."""
        try:
            target = self.http.base_url.join(url)
        except httpx.InvalidURL:
            return False
        return origin_of(target) == origin_of(self.http.base_url)

    def request(self, method: str, path: str, what: str, **kwargs: Any) -> httpx.Response:
        """The response of a successful request; rate limits and 5xx are retried, at most
        `config.retries` times, waiting what the headers ask (within `max_rate_limit_wait`)."""

        def send() -> httpx.Response:
            response = self.http.request(method, path, **kwargs)
            if not response.is_success:
                raise _Refused(response)
            return response

        def wait(error: Exception, attempt: int) -> float | None:
            if isinstance(error, httpx.HTTPError):
                return 2.0 ** (attempt - 1)
            if isinstance(error, _Refused):
                return self._retry_wait(error.response, attempt - 1)
            return None

        try:
            return retrying(send, wait, attempts=self.config.retries + 1, sleep=self.sleep)
        except httpx.HTTPError as exc:
            raise GitHubError(
                self.redact(
                    f"cannot reach the GitHub API at {self.api_url} ({what}): {type(exc).__name__}"
                )
            ) from None
        except _Refused as refused:
            raise self._error(refused.response, what) from None

    def _retry_wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, None when the answer is final."""
        if response.status_code in RETRIED_STATUSES:
            return 2.0**attempt
        limited = rate_limit_wait(response)
        if limited is None or limited > self.config.max_rate_limit_wait:
            return None
        return limited

    def _error(self, response: httpx.Response, what: str) -> GitHubError:
        error = self._unredacted_error(response, what)
        return type(error)(self.redact(str(error)))

    def _unredacted_error(self, response: httpx.Response, what: str) -> GitHubError:
        status = response.status_code
        message = api_message(response)
        if rate_limit_wait(response) is not None:
            return GitHubError(f"GitHub's rate limit stops {what}: {rate_limit_note(response)}")
        if status == 404:
            hint = "" if self.has_token else "; if it is private, set GITHUB_TOKEN"
            return GitHubNotFound(f"GitHub found no {what} (404: not there, or not visible{hint})")
        if status == 401:
            return GitHubError(f"GitHub refused the token (401 {message}) for {what}")
        return GitHubError(f"GitHub answered {status} for {what}: {message}")


def origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return (url.scheme, url.host, url.port or default)


def origin_text(url: str) -> str:
    try:
        scheme, host, port = origin_of(httpx.URL(url))
    except httpx.InvalidURL:
        return "an invalid URL"
    return f"{scheme}://{host}:{port}"


def rate_limit_wait(response: httpx.Response) -> float | None:
    """Seconds until a rate-limited request may be sent again; None if it is not rate limited."""
    if response.status_code not in (403, 429):
        return None
    retry_after = response.headers.get("retry-after")
    if retry_after is not None and retry_after.strip().isdigit():
        return float(retry_after)
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return max(0.0, float(reset) - time.time()) + 1.0
        return 60.0
    if response.status_code == 429:
        return 60.0
    return None


def rate_limit_note(response: httpx.Response) -> str:
    reset = response.headers.get("x-ratelimit-reset", "")
    retry_after = response.headers.get("retry-after", "")
    if retry_after.strip().isdigit():
        return f"retry after {retry_after.strip()} s"
    if reset.isdigit():
        when = datetime.fromtimestamp(int(reset), UTC).strftime("%H:%M:%S UTC")
        return f"it resets at {when}; set GITHUB_TOKEN for a higher limit"
    return "try again later"


def api_message(response: httpx.Response) -> str:
    """GitHub's `message` field, one line, short; the status phrase when there is none."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message) if message else response.reason_phrase
    return " ".join(text.split())[:200]
