"""The inspector's HTTP server: the standard library's ThreadingHTTPServer, read-only.

Only GET and HEAD are answered (every other method gets 405 and touches nothing); every response
carries the Content-Security-Policy, `nosniff`, no-referrer and no-store headers. The server
binds 127.0.0.1 unless told otherwise, on a free port when none is given. Bound to a loopback
address, it answers only requests addressed to it by a loopback name (`Host: 127.0.0.1:<port>`,
`localhost:<port>`), so a web page in the user's browser cannot read the runs through DNS
rebinding (a hostile name resolved to 127.0.0.1).
"""

from __future__ import annotations

import ipaddress
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from swe_aci.inspector.site import NOT_FOUND, Page, Site

logger = logging.getLogger("swe_aci.inspector")
MAX_QUERY = 4096  # characters of a request's query string
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class ReadOnlyHandler(BaseHTTPRequestHandler):
    """GET/HEAD through the site; anything else refused."""

    site: Site  # set on the subclass `serve` makes
    server_version = "swe-aci-inspect"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = 60  # seconds an idle or slow connection may hold its thread

    def do_GET(self) -> None:
        self.respond(self.page(), body=True)

    def do_HEAD(self) -> None:
        self.respond(self.page(), body=False)

    def refuse(self) -> None:
        self.respond(Page(405, "text/plain; charset=utf-8", b"read-only\n"), body=True)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = refuse

    def page(self) -> Page:
        if not self.addressed_to_us():
            return Page(403, "text/plain; charset=utf-8", b"wrong Host\n")
        parts = urlsplit(self.path)
        if len(parts.query) > MAX_QUERY:
            return NOT_FOUND
        try:
            return self.site.get(parts.path, parse_qs(parts.query))
        except Exception:  # a bug or an unreadable file must not take the server down
            logger.exception("inspect: %s failed", self.path)
            return Page(500, "text/plain; charset=utf-8", b"internal error\n")

    def addressed_to_us(self) -> bool:
        """Any Host on a non-loopback bind (`--host` was given); a loopback name otherwise."""
        host, port = self.server.server_address[:2]
        if not ipaddress.ip_address(host).is_loopback:
            return True
        return self.headers.get("Host", "") in {f"{name}:{port}" for name in LOOPBACK_NAMES}

    def respond(self, page: Page, body: bool) -> None:
        self.send_response(page.status)
        self.send_header("Content-Type", page.content_type)
        self.send_header("Content-Length", str(len(page.body)))
        self.send_header("Content-Security-Policy", self.site.csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        if page.status == 405:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if body:
            self.wfile.write(page.body)

    def log_message(self, format: str, *args: object) -> None:
        logger.debug("inspect: " + format, *args)


def make_server(site: Site, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server for `site` bound to host:port (port 0: a free one); not yet serving."""
    handler = type("Handler", (ReadOnlyHandler,), {"site": site})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
