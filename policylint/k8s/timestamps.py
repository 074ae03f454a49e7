"""Kubernetes timestamps (`metav1.Time`): shared by the fast path and the pydantic models."""

from __future__ import annotations

from datetime import datetime


def parse_timestamp(value: str) -> datetime:
    """RFC 3339 as Kubernetes writes it (`2024-01-02T03:04:05Z`, optional fraction and offset)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None or "T" not in text.upper():
        raise ValueError("not an RFC 3339 date-time with a time zone")
    return parsed
