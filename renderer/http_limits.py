"""HTTP clients with a real deadline and a size limit for every answer.

httpx's timeouts bound each network operation, so a server that sends one
byte a second never times out. The transport here bounds the whole request
instead — connect, send, wait and read the last byte — and reads at most
`max_bytes` of the (decoded) answer. Both the generative backend (through
google-genai's `httpx_async_client`) and the prediction clients use it.
"""

from __future__ import annotations

import asyncio

import httpx

_HOP_HEADERS = (b"content-encoding", b"content-length", b"transfer-encoding")


class ReplyTooLarge(httpx.TransportError):
    """The server's answer was larger than the client accepts."""


class DeadlineTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose requests end by a deadline and whose answers are size-capped."""

    def __init__(
        self, deadline: float, max_bytes: int, inner: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request and read its whole answer within the deadline; raise otherwise."""
        try:
            async with asyncio.timeout(self.deadline):
                response = await self.inner.handle_async_request(request)
                try:
                    body = await self._read(response, request)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise httpx.ReadTimeout(
                f"no complete answer within the {self.deadline:g} s deadline", request=request
            ) from None
        # The body is already decoded: drop the headers that described the wire form.
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _HOP_HEADERS]
        return httpx.Response(response.status_code, headers=headers, content=body, request=request)

    async def _read(self, response: httpx.Response, request: httpx.Request) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise ReplyTooLarge(
                    f"the answer is larger than {self.max_bytes:,} bytes", request=request
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        """Close the connections of the inner transport."""
        await self.inner.aclose()


def limited_client(deadline: float, max_bytes: int) -> httpx.AsyncClient:
    """Return an async httpx client: `deadline` seconds per request, answers up to `max_bytes`."""
    return httpx.AsyncClient(
        transport=DeadlineTransport(deadline, max_bytes), timeout=httpx.Timeout(deadline)
    )
