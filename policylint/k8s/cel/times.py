"""CEL timestamps (cel-spec langdef.md, cel-go common/types/timestamp.go): `timestamp()` from an
RFC 3339 string or Unix seconds, their text, their fields in UTC or a time zone (`getFullYear`,
`getHours`, ...), and the fields of durations (`getHours`, `getMinutes`, `getSeconds`,
`getMilliseconds`).
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable
from typing import Any

from policylint.k8s.cel.values import Duration, EvalError, Timestamp, TooLarge, _overload

_NS = 10**9
# google.protobuf.Timestamp's range: the years 1 to 9999.
MIN_NS = -62_135_596_800 * _NS
MAX_NS = 253_402_300_799 * _NS + _NS - 1
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

# Go's time.RFC3339 as time.Parse reads it: a fraction of any length, Z or a numeric offset.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})\Z"
)
_OFFSET = re.compile(r"([+-]?)([0-9]{2}):([0-9]{2})\Z")


def checked_timestamp(ns: int) -> Timestamp:
    if ns < MIN_NS or ns > MAX_NS:
        raise EvalError("timestamp out of range")
    return Timestamp(ns)


def parse_timestamp(text: str) -> Timestamp:
    m = _RFC3339.match(text)
    if m is None:
        raise EvalError(f'cannot parse "{text}" as a timestamp (RFC 3339)')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7) or "", m.group(8)
    try:
        # year 0 is not a datetime's: take year 1 and move back the days of year 0 (a leap year)
        moved = 366 if year == 0 else 0
        when = datetime.datetime(year or 1, month, day, hour, minute, second, tzinfo=datetime.timezone.utc)
    except ValueError:
        raise EvalError(f'cannot parse "{text}" as a timestamp: a field is out of range') from None
    seconds = (when - _EPOCH) // datetime.timedelta(seconds=1) - moved * 86400
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    nanos = int((fraction + "000000000")[:9]) if fraction else 0  # Go reads at most nanoseconds
    return checked_timestamp(seconds * _NS + nanos)


def to_timestamp(x: Any) -> Timestamp:
    t = type(x)
    if t is Timestamp:
        return x  # type: ignore[no-any-return]
    if t is str:
        return parse_timestamp(x)
    if t is int:
        return checked_timestamp(x * _NS)
    raise _overload("timestamp", x)


def format_timestamp(ts: Timestamp) -> str:
    """Go's time.RFC3339Nano in UTC: the fraction without its trailing zeros."""
    seconds, nanos = divmod(ts.ns, _NS)
    when = _EPOCH + datetime.timedelta(seconds=seconds)
    fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
    return f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}{fraction}Z"


def timestamp_seconds(ts: Timestamp) -> int:
    """`int(timestamp)`: Unix seconds, rounded down as Go's Time.Unix does."""
    return ts.ns // _NS


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> datetime.tzinfo:
    """A time zone argument: `+05:30`, `-02:30`, `02:00` (an offset), or an IANA name."""
    m = _OFFSET.match(name)
    if m is not None:
        minutes = int(m.group(2)) * 60 + int(m.group(3))
        return datetime.timezone(datetime.timedelta(minutes=-minutes if m.group(1) == "-" else minutes))
    if name == "UTC":
        return datetime.timezone.utc
    # Imported here: an IANA name is rare in a rule, and zoneinfo (with sysconfig) is a couple of
    # milliseconds of every process that evaluates CEL.
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        if not _have_zones():
            # no time zone database on this machine: the API server has one
            raise TooLarge(f"no time zone database here to read the time zone {name!r}") from None
        raise EvalError(f"unknown time zone {name!r}") from None


@functools.cache
def _have_zones() -> bool:
    """Whether this machine has a time zone database (worked out once: it walks the database)."""
    import zoneinfo

    return bool(zoneinfo.available_timezones())


def _local(ts: Timestamp, zone: str | None) -> datetime.datetime:
    when = _EPOCH + datetime.timedelta(microseconds=ts.ns // 1000)
    if zone is None:
        return when
    try:
        return when.astimezone(_zone(zone))
    except (OverflowError, ValueError):
        # cel-go reads year 0 or 10000 there; Python's datetime holds neither
        raise TooLarge(f"the time falls outside the years 1 to 9999 in the time zone {zone!r}") from None


_FIELDS: dict[str, Callable[[datetime.datetime, Timestamp], int]] = {
    "getFullYear": lambda d, ts: d.year,
    "getMonth": lambda d, ts: d.month - 1,  # 0-based, as are the day of the year and of the month
    "getDayOfYear": lambda d, ts: d.timetuple().tm_yday - 1,
    "getDayOfMonth": lambda d, ts: d.day - 1,
    "getDate": lambda d, ts: d.day,  # 1-based
    "getDayOfWeek": lambda d, ts: (d.weekday() + 1) % 7,  # Sunday is 0
    "getHours": lambda d, ts: d.hour,
    "getMinutes": lambda d, ts: d.minute,
    "getSeconds": lambda d, ts: d.second,
    "getMilliseconds": lambda d, ts: (ts.ns % _NS) // 1_000_000,
}


def _truncated(ns: int, unit: int) -> int:
    """Go's integer division: toward zero."""
    return ns // unit if ns >= 0 else -((-ns) // unit)


_DURATION_FIELDS: dict[str, Callable[[int], int]] = {
    "getHours": lambda ns: _truncated(ns, 3600 * _NS),
    "getMinutes": lambda ns: _truncated(ns, 60 * _NS),
    "getSeconds": lambda ns: _truncated(ns, _NS),
    "getMilliseconds": lambda ns: _truncated(ns, 1_000_000) % 1000 if ns >= 0 else -((-_truncated(ns, 1_000_000)) % 1000),
}


def accessor(name: str) -> Callable[..., int]:
    """The method `name` of timestamps (with an optional time zone) and, for the four that
    durations have too, of durations (the whole duration in that unit; milliseconds are the
    part below a second)."""
    field = _FIELDS[name]
    of_duration = _DURATION_FIELDS.get(name)

    def get(x: Any, *zone: Any) -> int:
        if type(x) is Timestamp and (not zone or type(zone[0]) is str):
            return field(_local(x, zone[0] if zone else None), x)
        if of_duration is not None and type(x) is Duration and not zone:
            return of_duration(x.ns)
        raise _overload(name, x, *zone)

    return get


TIME_FUNCTIONS: dict[str, tuple[Callable[..., Any], bool | None, tuple[int, ...]]] = {
    "timestamp": (to_timestamp, False, (1,)),
    **{name: (accessor(name), True, (1, 2)) for name in _FIELDS},
}
