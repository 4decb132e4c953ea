"""Secrets out of logs: what `gpurent run --log` (and its terminal echo) writes is redacted, and
log files are private (0600).

Redacted (the value becomes `***`, the name stays so the log still says what was given):
- URLs: credentials (`https://user:pw@host` -> `https://***@host`) and the query string and
  fragment (`?sig=...` -> `?***`), wherever a URL appears in a string.
- Flags whose name contains `key`, `token`, `password`, `passwd` or `secret` (any case; the words
  `tokens` and `tokenizer` do not count, so `--max-tokens 512` stays): both `--api-key=v` and
  `--api-key v` (in an argument list and in a shell command string).
- Environment assignments `NAME=value` (in arguments, shell strings, or as a mapping's key) where
  NAME is a known secret (AWS_SECRET_ACCESS_KEY, HF_TOKEN, WANDB_API_KEY, ...) or ends with
  `_TOKEN`, `_KEY`, `_PASSWORD`, `_PASSWD`, `_SECRET`, `_CREDENTIALS`.

This is a best effort over text, not a guarantee: a secret passed positionally is not recognised.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

MASK = "***"

KNOWN_SECRET_ENV = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HUGGINGFACE_TOKEN",
        "WANDB_API_KEY",
        "OPENAI_API_KEY",
        "GPURENT_EXPORTER_TOKEN",
        "PGPASSWORD",
    }
)
_SECRET_ENV_SUFFIXES = ("_TOKEN", "_KEY", "_PASSWORD", "_PASSWD", "_SECRET", "_CREDENTIALS")
_SECRET_WORDS = ("key", "token", "password", "passwd", "secret")
_HARMLESS_WORDS = re.compile(r"tokeni[sz]er|tokens", re.IGNORECASE)

_URL = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/?#@]*@)?(?P<rest>[^\s?#]*)"
    r"(?P<query>[?#][^\s]*)?"
)
_FLAG_EQ = re.compile(r"(?P<flag>(?<![\w-])--?[A-Za-z][\w-]*)=(?P<value>\S+)")
_FLAG_SPACE = re.compile(r"(?P<flag>(?<![\w-])--?[A-Za-z][\w-]*)(?P<gap>\s+)(?P<value>[^\s-]\S*)")
_ENV_ASSIGN = re.compile(r"(?P<name>(?<![\w-])[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\S+)")


def is_secret_flag(flag: str) -> bool:
    """`--api-key`, `--hf_token`, `--db-password`...: a flag whose value is a secret."""
    name = _HARMLESS_WORDS.sub("", flag.lstrip("-").lower())
    return any(word in name for word in _SECRET_WORDS)


def is_secret_env(name: str) -> bool:
    """Whether an environment variable's name marks a secret (known names, secret suffixes)."""
    upper = name.upper()
    return upper in KNOWN_SECRET_ENV or upper.endswith(_SECRET_ENV_SUFFIXES)


def _url(match: re.Match[str]) -> str:
    user = f"{MASK}@" if match["user"] else ""
    query = f"{match['query'][0]}{MASK}" if match["query"] else ""
    return f"{match['scheme']}{user}{match['rest']}{query}"


def redact_text(text: str) -> str:
    """`text` with URL credentials and queries, secret flag values and secret env values masked."""
    text = _URL.sub(_url, text)
    text = _FLAG_EQ.sub(
        lambda m: f"{m['flag']}={MASK}" if is_secret_flag(m["flag"]) else m[0], text
    )
    text = _FLAG_SPACE.sub(
        lambda m: f"{m['flag']}{m['gap']}{MASK}" if is_secret_flag(m["flag"]) else m[0], text
    )
    return _ENV_ASSIGN.sub(
        lambda m: f"{m['name']}={MASK}" if is_secret_env(m["name"]) else m[0], text
    )


def redact_argv(argv: Sequence[str]) -> list[str]:
    """An argument list with secrets masked; `--api-key VALUE` masks the next argument too."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next and not arg.startswith("-"):
            out.append(MASK)
            mask_next = False
            continue
        mask_next = arg.startswith("-") and "=" not in arg and is_secret_flag(arg)
        out.append(redact_text(arg))
    return out


def redact(value: Any) -> Any:
    """A copy of a log record (dicts, lists, strings) with every secret masked."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {
            k: MASK if isinstance(k, str) and is_secret_env(k) and v is not None else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, str) for v in value):
            return redact_argv(value)
        return [redact(v) for v in value]
    return value


def open_private_log(path: str | Path) -> IO[str]:
    """Open `path` for appending as a file only its owner can read (0600, also when it already
    existed with wider permissions); the folder is created when missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
