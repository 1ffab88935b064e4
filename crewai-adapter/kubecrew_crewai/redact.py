"""Secrets (the API key, MCP header values, the apps credential) replaced before any text leaves the process."""

from __future__ import annotations

import logging
from typing import Any

REDACTED = "[redacted]"
#: Shorter values are not searched for: they would match ordinary text and say nothing about a secret.
MIN_SECRET_LENGTH = 6


class Redactor:
    def __init__(self, secrets: list[str]) -> None:
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def value(self, value: Any) -> Any:
        """`value` with every string in it redacted (dicts and lists walked)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """Redacts the message of every log record that passes through a handler (the adapter's log on stderr)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._redactor.text(record.getMessage())
        record.args = None
        return True
