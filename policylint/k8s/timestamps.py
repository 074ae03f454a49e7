"""Kubernetes timestamps (`metav1.Time`): shared by the fast path and the pydantic models.

The API server reads them with Go's `time.Parse(time.RFC3339, ...)`: a date, `T`, a time with
seconds, an optional fraction of any length and a zone (`Z` or `±HH:MM`). Python's
`datetime.fromisoformat` is not the same on every supported version (3.10 rejects a fraction of
other than three or six digits, `.12Z`; 3.11 accepts forms RFC 3339 does not), so the grammar is
matched here and only the fields are handed to `datetime`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))")


def parse_timestamp(value: str) -> datetime:
    """RFC 3339 as Kubernetes writes it (`2024-01-02T03:04:05Z`, optional fraction and offset)."""
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        raise ValueError("not an RFC 3339 date-time with a time zone")
    year, month, day, hour, minute, second, fraction, utc, sign, off_h, off_m = match.groups()
    if utc:
        zone = timezone.utc
    else:
        offset = timedelta(hours=int(off_h), minutes=int(off_m))
        if offset >= timedelta(hours=24):
            raise ValueError("time zone offset out of range")
        zone = timezone(-offset if sign == "-" else offset)
    # Fractions beyond microseconds (Go keeps nanoseconds) are truncated, as ordering needs no more.
    micro = int((fraction or "").ljust(6, "0")[:6])
    # datetime checks the ranges (month 13, February 30, hour 24) and raises ValueError.
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=zone)
