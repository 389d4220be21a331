"""Model clients: OpenAI-compatible chat completions (httpx) and Gemini (google-genai).

Both raise `RetryableError` for rate limits, server errors, timeouts,
refused or broken connections and garbled replies and `PermanentError` for
everything another attempt would repeat (a refused key, an unknown model, a
certificate that does not verify), each with the kind of failure it is
(`retry.FAILURE_KINDS`). `timeout` is a deadline for the whole request (connect to last
byte), not per read, and answers are size-limited. API keys come from the
caller (read from the environment by the command) and never appear in
messages or records: a server that echoes one has it replaced.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from itemshot.factorial.predict.messages import ModelRequest
from itemshot.factorial.predict.retry import (
    PermanentError,
    RetryableError,
    is_retryable_status,
    parse_retry_after,
    status_failure,
)
from itemshot.renderer.http_limits import ReplyTooLarge, limited_client
from itemshot.renderer.redact import Redactor

APIS = ("openai", "gemini")
GEMINI_DEFAULT_ENDPOINT = "https://generativelanguage.googleapis.com"
MAX_REPLY_BYTES = 32 * 1024 * 1024  # a text answer; far more is a broken or hostile server


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters recorded with every prediction."""

    temperature: float = 0.0
    max_tokens: int = 4096

    def as_dict(self) -> dict[str, Any]:
        """Return the parameters as a JSON-ready mapping."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class Completion:
    """A model's reply: the text, token usage as reported, and the finish reason."""

    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None


class ChatClient(Protocol):
    """Anything that turns a ModelRequest into a Completion."""

    async def complete(self, request: ModelRequest, params: GenerationParams) -> Completion:
        """Send one request and return the reply."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def _causes(error: BaseException) -> Iterator[BaseException]:
    """Yield an exception and what it was raised from, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def transport_failure(error: httpx.TransportError) -> RetryableError | PermanentError:
    """Return the failure a transport error stands for: timeout, refused, TLS or broken."""
    name = type(error).__name__
    if isinstance(error, httpx.TimeoutException):
        return RetryableError(f"timeout ({name}: {error})", kind="timeout")
    if isinstance(error, ReplyTooLarge):
        return RetryableError(str(error), kind="reply_too_large")
    for cause in _causes(error):
        if isinstance(cause, ssl.SSLCertVerificationError):
            # Another attempt meets the same certificate.
            detail = cause.verify_message or cause
            return PermanentError(f"TLS certificate refused ({detail})", kind="tls")
        if isinstance(cause, ssl.SSLError):
            return RetryableError(f"TLS handshake failed ({cause})", kind="tls")
        if isinstance(cause, ConnectionRefusedError):
            return RetryableError(f"connection refused ({cause})", kind="connection_refused")
    return RetryableError(f"connection failed ({name}: {error})", kind="connection_failed")


def chat_completions_url(endpoint: str) -> str:
    """Return the chat-completions URL for a base URL such as `http://host:8000/v1`."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


def openai_payload(model: str, request: ModelRequest, params: GenerationParams) -> dict[str, Any]:
    """Return the chat-completions body: one user message, text then images as data URLs."""
    content: list[dict[str, Any]] = [{"type": "text", "text": request.text}]
    for image in request.images:
        encoded = base64.b64encode(image.data).decode("ascii")
        content.append(
            {"type": "image_url", "image_url": {"url": f"data:{image.mime};base64,{encoded}"}}
        )
    return {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
    }


class OpenAIChatClient:
    """A client for OpenAI-compatible servers (OpenAI, vLLM, SGLang, Ollama)."""

    def __init__(self, endpoint: str, model: str, api_key: str | None, timeout: float) -> None:
        self.url = chat_completions_url(endpoint)
        self.model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = limited_client(timeout, MAX_REPLY_BYTES)
        self._redact = Redactor.of(api_key)

    async def complete(self, request: ModelRequest, params: GenerationParams) -> Completion:
        """Send one chat completion and return its first choice."""
        payload = openai_payload(self.model, request, params)
        try:
            response = await self._client.post(self.url, json=payload, headers=self._headers)
        except httpx.TransportError as error:
            raise transport_failure(error) from None
        if response.status_code != 200:
            message = f"HTTP {response.status_code}"
            if is_retryable_status(response.status_code):
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                raise status_failure(response.status_code, message, retry_after)
            detail = self._redact.text(response.text[:300])
            raise status_failure(response.status_code, f"{message}: {detail}")
        try:
            body = response.json()
            choice = body["choices"][0]
            message_body = choice["message"]
            text = message_body["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise RetryableError("malformed response body", kind="malformed_reply") from None
        if text is not None and not isinstance(text, str):
            raise RetryableError("malformed response body", kind="malformed_reply")
        refusal = message_body.get("refusal") if isinstance(message_body, dict) else None
        if not text and isinstance(refusal, str):
            text = refusal  # a refusal is the model's answer (content is null beside it)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return Completion(
            self._redact.text(text or ""),
            self._redact.value(dict(usage or {})),
            finish if isinstance(finish, str) else None,
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()


class GeminiChatClient:
    """A client for Gemini models through google-genai; the base URL is configurable."""

    def __init__(
        self, endpoint: str | None, model: str, api_key: str | None, timeout: float
    ) -> None:
        from google import genai
        from google.genai import types

        self._http = limited_client(timeout, MAX_REPLY_BYTES)
        options = types.HttpOptions(
            base_url=endpoint or GEMINI_DEFAULT_ENDPOINT,
            api_version="v1beta",
            timeout=int(timeout * 1000),
            httpx_async_client=self._http,
        )
        self.model = model
        self._types = types
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._redact = Redactor.of(api_key)

    async def complete(self, request: ModelRequest, params: GenerationParams) -> Completion:
        """Send one generateContent request and return the text parts of the first candidate."""
        from google.genai import errors

        types = self._types
        parts = [types.Part.from_text(text=request.text)]
        parts += [
            types.Part.from_bytes(data=image.data, mime_type=image.mime) for image in request.images
        ]
        config = types.GenerateContentConfig(
            temperature=params.temperature, max_output_tokens=params.max_tokens
        )
        try:
            response = await self._client.aio.models.generate_content(
                model=self.model, contents=[types.Content(role="user", parts=parts)], config=config
            )
        except errors.APIError as error:
            code = int(error.code or 0)
            if is_retryable_status(code):
                raise status_failure(code, f"HTTP {code}") from None
            detail = self._redact.text(str(error.message or "")[:300])
            raise status_failure(code, f"HTTP {code}: {detail}") from None
        except httpx.TransportError as error:
            raise transport_failure(error) from None
        except (ValueError, TypeError):  # not JSON, or not of the API's shape
            raise RetryableError("malformed response body", kind="malformed_reply") from None
        texts: list[str] = []
        finish: str | None = None
        if response.candidates:
            candidate = response.candidates[0]
            finish = str(candidate.finish_reason.value) if candidate.finish_reason else None
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.text and not part.thought:
                    texts.append(part.text)
        usage = (
            response.usage_metadata.model_dump(exclude_none=True) if response.usage_metadata else {}
        )
        return Completion(self._redact.text("".join(texts)), usage, finish)

    async def aclose(self) -> None:
        """Release the client's connections."""
        await self._client.aio.aclose()
        await self._http.aclose()


def make_client(
    api: str, endpoint: str | None, model: str, api_key: str | None, timeout: float
) -> ChatClient:
    """Return the client for `api` (openai or gemini)."""
    if api == "openai":
        if not endpoint:
            raise ValueError("--endpoint is required for --api openai")
        return OpenAIChatClient(endpoint, model, api_key, timeout)
    if api == "gemini":
        return GeminiChatClient(endpoint, model, api_key, timeout)
    raise ValueError(f"unknown api {api!r}; choose one of {', '.join(APIS)}")
