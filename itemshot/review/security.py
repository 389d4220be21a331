"""The review server's guard: known Host only, an access token off loopback, CSRF on writes.

One ASGI middleware in front of every route:

- the `Host` header must name this server (127.0.0.1, localhost, [::1] or
  the bind address, with its port), so a page on another site whose name
  was rebound to 127.0.0.1 cannot read the app (DNS rebinding);
- when a token is required (always off loopback), a request needs it as the
  `itemshot_token` cookie, an `Authorization: Bearer` header, or once as
  `?token=` (which sets the cookie and redirects to the clean URL);
- every state change (POST, PUT, PATCH, DELETE) needs the server's CSRF token
  in `X-CSRF-Token` and, when the browser sends one, a same-origin `Origin`;
- every answer carries a strict content security policy (scripts and styles
  from the app's own static files only, no inline script, no framing).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "itemshot_token"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def is_loopback(host: str) -> bool:
    """Return whether a bind address is a loopback address (or `localhost`)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    """Who may talk to the server: allowed Host names, the access token, the CSRF token."""

    hosts: frozenset[str]
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @classmethod
    def for_bind(cls, host: str, port: int, token: str | None) -> Access:
        """Return the access rules of a server bound to host:port (token None: loopback only)."""
        if not is_loopback(host) and not token:
            raise ValueError(
                f"binding {host} exposes the review app beyond this machine: "
                "give --token (or ITEMSHOT_REVIEW_TOKEN)"
            )
        names = {*LOOPBACK_NAMES, host if ":" not in host else f"[{host}]"}
        hosts = frozenset(f"{name}:{port}" for name in names)
        return cls(hosts=hosts, token=token or None)


class Guard:
    """ASGI middleware enforcing `Access` in front of the review app."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host not in self.access.hosts:
            await _plain(send, 400, "unknown Host header")
            return
        if self.access.token is not None:
            passed = await self._check_token(scope, headers, send)
            if not passed:
                return
        if scope["method"] not in SAFE_METHODS:
            sent = headers.get(CSRF_HEADER, "")
            origin = headers.get("origin")
            if not sent or not hmac.compare_digest(sent, self.access.csrf):
                await _plain(send, 403, "missing or wrong CSRF token")
                return
            if origin is not None and urlsplit(origin).netloc != host:
                await _plain(send, 403, "cross-origin request refused")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _check_token(self, scope: Scope, headers: dict[str, str], send: Send) -> bool:
        token = self.access.token
        assert token is not None
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is just no cookie
            cookie = SimpleCookie()
        offered = [
            cookie[TOKEN_COOKIE].value if TOKEN_COOKIE in cookie else "",
            headers.get("authorization", "").removeprefix("Bearer ").strip(),
        ]
        if any(o and hmac.compare_digest(o, token) for o in offered):
            return True
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        given = query.pop("token", "")
        if given and hmac.compare_digest(given, token) and scope["method"] in SAFE_METHODS:
            # Trade the token in the URL for a cookie, and drop it from the address bar.
            location = scope["path"] + (f"?{urlencode(query)}" if query else "")
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", location.encode("latin-1")),
                        (
                            b"set-cookie",
                            f"{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/".encode(),
                        ),
                        *SECURITY_HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return False
        await _plain(send, 401, "this review server needs its access token")
        return False


async def _plain(send: Send, status: int, text: str) -> None:
    body = f"{status}: {text}\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
