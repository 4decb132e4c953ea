"""What `gpurent run` logs never holds a secret: the redaction rules one by one."""

from __future__ import annotations

import pytest

from gpurent.runtime.redact import redact, redact_argv, redact_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("https://user:pw@hooks.example.com/x?sig=abc", "https://***@hooks.example.com/x?***"),
        ("http://h:8080/path#token=abc", "http://h:8080/path#***"),
        ("see https://example.com/docs for more", "see https://example.com/docs for more"),
        ("--api-key=abc --verbose", "--api-key=*** --verbose"),
        ("--API_KEY abc", "--API_KEY ***"),
        ("--db-password hunter2 --port 5", "--db-password *** --port 5"),
        ("--client-secret=s", "--client-secret=***"),
        ("--max-tokens 512 --tokenizer gpt2", "--max-tokens 512 --tokenizer gpt2"),
        ("AWS_SECRET_ACCESS_KEY=abc python t.py", "AWS_SECRET_ACCESS_KEY=*** python t.py"),
        (
            "HF_TOKEN=hf_x WANDB_API_KEY=w MY_PASSWORD=p",
            "HF_TOKEN=*** WANDB_API_KEY=*** MY_PASSWORD=***",
        ),
        ("BATCH=8 LR=0.1", "BATCH=8 LR=0.1"),
    ],
)
def test_redact_text(raw: str, shown: str) -> None:
    assert redact_text(raw) == shown


def test_redact_argv_masks_the_value_after_a_secret_flag() -> None:
    argv = ["python", "t.py", "--token", "abc", "--steps", "10", "--hf_token", "x", "--key", "-v"]
    assert redact_argv(argv) == [
        "python", "t.py", "--token", "***", "--steps", "10", "--hf_token", "***", "--key", "-v",
    ]  # fmt: skip


def test_redact_a_record() -> None:
    record = {
        "event": "start",
        "command": ["python", "--api-key", "k"],
        "env": {"HF_TOKEN": "x", "PATH": "/bin"},
        "url": "https://u:p@h/?q=1",
        "attempt": 2,
    }
    assert redact(record) == {
        "event": "start",
        "command": ["python", "--api-key", "***"],
        "env": {"HF_TOKEN": "***", "PATH": "/bin"},
        "url": "https://***@h/?***",
        "attempt": 2,
    }
    assert record["command"] == ["python", "--api-key", "k"]  # a copy: the job gets its argv
