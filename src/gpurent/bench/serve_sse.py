"""Reading an OpenAI streaming response, one server-sent-events line at a time (pure).

OpenAI-compatible servers (vLLM, SGLang, TensorRT-LLM's trtllm-serve, TGI's /v1 routes) stream
`data: {json}` lines separated by blank lines and end with `data: [DONE]`. A completions chunk
carries `choices[0].text`, a chat chunk `choices[0].delta.content` (a first chat chunk may carry
only the role); with `stream_options.include_usage` the last chunk has `usage` and no choices.
An in-stream failure is a chunk with `error`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Chunk:
    """What one `data:` line said. `done`: the `[DONE]` sentinel; `text`: generated text in it
    ("" when none); `completion_tokens`: from `usage`, when the chunk carries it; `error`: the
    server's in-stream error message; `bad`: the line was not an OpenAI chunk."""

    done: bool = False
    text: str = ""
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    error: str | None = None
    bad: bool = False


DONE = Chunk(done=True)
SKIP = None  # a line that says nothing (blank, comment, `event:`/`id:` field)
BAD = Chunk(bad=True)


def _text_of(choice: Any) -> str:
    if not isinstance(choice, dict):
        return ""
    text = choice.get("text")
    if isinstance(text, str):
        return text
    delta = choice.get("delta")
    if isinstance(delta, dict):
        for key in ("content", "reasoning_content"):
            part = delta.get(key)
            if isinstance(part, str) and part:
                return part
    return ""


def _usage(doc: dict[str, Any]) -> tuple[int | None, int | None]:
    usage = doc.get("usage")
    if not isinstance(usage, dict):
        return None, None
    out = usage.get("completion_tokens")
    prompt = usage.get("prompt_tokens")
    return (
        out if isinstance(out, int) and not isinstance(out, bool) and out >= 0 else None,
        prompt
        if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt >= 0
        else None,
    )


def parse_line(raw: bytes) -> Chunk | None:
    """One line of the stream (with or without its newline) -> a `Chunk`, or None when the
    line carries no data (blank, an SSE comment, another SSE field)."""
    line = raw.strip()
    if not line or line.startswith(b":"):
        return SKIP
    if not line.startswith(b"data:"):
        if line.startswith((b"event:", b"id:", b"retry:")):
            return SKIP
        return BAD
    payload = line[5:].strip()
    if payload == b"[DONE]":
        return DONE
    try:
        doc = json.loads(payload.decode("utf-8", "replace"))
    except ValueError:
        return BAD
    if not isinstance(doc, dict):
        return BAD
    if doc.get("error"):
        err = doc["error"]
        message = err.get("message") if isinstance(err, dict) else err
        return Chunk(error=str(message)[:200])
    choices = doc.get("choices")
    out, prompt = _usage(doc)
    if not isinstance(choices, list):
        return Chunk(completion_tokens=out, prompt_tokens=prompt) if out is not None else BAD
    text = _text_of(choices[0]) if choices else ""
    return Chunk(text=text, completion_tokens=out, prompt_tokens=prompt)
