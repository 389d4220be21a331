"""The body of a chat-completions answer, as the loopback stand-ins send it."""

from __future__ import annotations

from typing import Any


def chat_completion(
    model: str, content: str | None, prompt_tokens: int, completion_tokens: int
) -> dict[str, Any]:
    """Return an OpenAI-style `chat.completion` body with one stopped choice holding `content`."""
    return {
        "id": "x",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
