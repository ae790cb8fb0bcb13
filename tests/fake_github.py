"""A fake GitHub REST API on 127.0.0.1: the endpoints `run --issue URL --open-pr` uses (issue,
comments, repository, forks, pulls), with GitHub's JSON shapes, its 404 for what a token
cannot see, and its rate-limit headers. Repositories are local bare git repositories: their
`clone_url` is a file:// URL, so git clones and pushes for real.

Use it with `pytest_plugins = ["fake_github"]` and the `fake_github` fixture.
PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class FakeRepository:
    owner: str
    name: str
    bare: Path
    private: bool = False
    push: bool = True  # whether the token's user may push
    default_branch: str = "main"
    clone_url: str | None = None  # what the API says instead of the bare repository's URL

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def json(self, authenticated: bool) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": abs(hash(self.full_name)) % 10**8,
            "name": self.name,
            "full_name": self.full_name,
            "owner": {"login": self.owner, "type": "User"},
            "private": self.private,
            "html_url": f"https://github.com/{self.full_name}",
            "clone_url": self.clone_url or self.bare.as_uri(),
            "default_branch": self.default_branch,
            "fork": False,
        }
        if authenticated:
            data["permissions"] = {"admin": False, "push": self.push, "pull": True}
        return data


@dataclass
class Recorded:
    method: str
    path: str  # with the query string
    authorization: str | None
    body: Any


@dataclass
class FakeGitHub:
    token: str
    login: str = "octo-user"
    root: Path = field(default_factory=Path)
    repositories: dict[str, FakeRepository] = field(default_factory=dict)
    issues: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    comments: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    pulls: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    rate_limited: list[dict[str, str]] = field(default_factory=list)  # headers, one per answer
    remaining: int = 4999
    bad_credentials: str = "Bad credentials"  # the message of a 401
    comments_per_page_cap: int = 100  # GitHub's maximum `per_page`
    next_page_origin: str | None = None  # where comment pages' next links point (default: here)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def add_repository(self, owner: str, name: str, source: Path, **kwargs: Any) -> FakeRepository:
        bare = self.root / f"{owner}__{name}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
        repository = FakeRepository(owner, name, bare, **kwargs)
        self.repositories[repository.full_name] = repository
        return repository

    def add_issue(self, full_name: str, number: int, title: str, body: str, comments=()) -> None:
        self.issues[(full_name, number)] = {"title": title, "body": body}
        self.comments[(full_name, number)] = list(comments)

    def calls(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    # the API

    def comment_page(self, key: tuple[str, int], query: dict[str, list[str]]) -> tuple:
        """One page of an issue's comments, with GitHub's `Link: <...>; rel="next"` header."""
        per_page = min(int(query.get("per_page", ["30"])[0]), self.comments_per_page_cap)
        page = int(query.get("page", ["1"])[0])
        everything = self.comments[key]
        start = (page - 1) * per_page
        items = [
            {"id": i, "body": text, "user": {"login": "someone"}}
            for i, text in enumerate(everything[start : start + per_page], start + 1)
        ]
        headers = {}
        if start + per_page < len(everything):
            origin = self.next_page_origin or self.url
            path = f"/repos/{key[0]}/issues/{key[1]}/comments"
            headers["link"] = f'<{origin}{path}?per_page={per_page}&page={page + 1}>; rel="next"'
        return 200, items, headers

    def answer(self, method: str, path: str, body: Any, auth: str | None) -> tuple[int, Any, dict]:
        authenticated = auth == f"Bearer {self.token}"
        if auth is not None and not authenticated:
            return 401, {"message": self.bad_credentials}, {}
        parts = [part for part in urlsplit(path).path.split("/") if part]
        query = parse_qs(urlsplit(path).query)
        if len(parts) < 3 or parts[0] != "repos":
            return 404, {"message": "Not Found"}, {}
        full_name = f"{parts[1]}/{parts[2]}"
        repository = self.repositories.get(full_name)
        if repository is None or (repository.private and not authenticated):
            return 404, {"message": "Not Found"}, {}
        rest = parts[3:]
        if rest == [] and method == "GET":
            return 200, repository.json(authenticated), {}
        if rest[:1] == ["issues"] and len(rest) >= 2 and method == "GET":
            key = (full_name, int(rest[1]))
            if key not in self.issues:
                return 404, {"message": "Not Found"}, {}
            if rest[2:] == ["comments"]:
                return self.comment_page(key, query)
            issue = self.issues[key]
            return (
                200,
                {
                    "number": key[1],
                    "title": issue["title"],
                    "body": issue["body"],
                    "state": "open",
                    "comments": len(self.comments[key]),
                    "html_url": f"https://github.com/{full_name}/issues/{key[1]}",
                    "user": {"login": "reporter"},
                },
                {},
            )
        if rest == ["forks"] and method == "POST":
            if not authenticated:
                return 401, {"message": "Requires authentication"}, {}
            fork = self.repositories.get(f"{self.login}/{repository.name}")
            if fork is None:
                bare = self.root / f"{self.login}__{repository.name}.git"
                shutil.copytree(repository.bare, bare)
                fork = FakeRepository(self.login, repository.name, bare)
                self.repositories[fork.full_name] = fork
            return 202, fork.json(True), {}
        if rest == ["pulls"] and method == "GET":
            head = query.get("head", [""])[0]
            return (
                200,
                [p for p in self.pulls if p["base_repo"] == full_name and p["head"] == head],
                {},
            )
        if rest == ["pulls"] and method == "POST":
            if not authenticated:
                return 401, {"message": "Requires authentication"}, {}
            number = len(self.pulls) + 1
            pull = {
                **body,
                "number": number,
                "base_repo": full_name,
                "html_url": f"https://github.com/{full_name}/pull/{number}",
                "state": "open",
            }
            self.pulls.append(pull)
            return 201, pull, {}
        return 404, {"message": "Not Found"}, {}


def _handler(server: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_request(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            auth = self.headers.get("authorization")
            with server.lock:
                server.requests.append(Recorded(method, self.path, auth, body))
                limited = server.rate_limited.pop(0) if server.rate_limited else None
                if limited is None:
                    status, payload, headers = server.answer(method, self.path, body, auth)
                    server.remaining -= 1
                    headers = {"x-ratelimit-remaining": str(server.remaining), **headers}
                else:
                    status = int(limited.pop("status", "403"))
                    payload = {"message": "API rate limit exceeded for user."}
                    headers = limited
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            headers = {
                "x-github-api-version-selected": "2022-11-28",
                "x-ratelimit-limit": "5000",
                "x-ratelimit-reset": str(int(time.time()) + 3600),
                "x-ratelimit-resource": "core",
                **headers,
            }
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.handle_request("GET")

        def do_POST(self) -> None:
            self.handle_request("POST")

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the per-request log lines."""

    return Handler


@pytest.fixture
def fake_github(tmp_path: Path) -> Any:
    root = tmp_path / "github-remotes"
    root.mkdir()
    server = FakeGitHub(token="ghp_faketoken0123456789SECRET", root=root)
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
