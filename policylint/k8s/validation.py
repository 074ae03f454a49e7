"""Pydantic models of the input boundary: object metadata and policy target references.

Pydantic is lenient toward unknown fields, because newer API versions add
fields and must not crash us (Gateway API API Design Guide, "Gracefully
Handling Future API Versions"), and strict about types the API server would reject (a
label value that is a number); its errors name the field and the type.

Importing pydantic and building these models costs about 50 ms, more than
linting a few files. Well-typed input, nearly all of it, is recognised by the
plain checks in `policylint.k8s.objects` and `policylint.k8s.index`, which accept only
what these models accept; this module is imported when input needs explaining.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError, field_validator

from policylint.k8s.timestamps import parse_timestamp

__all__ = ["ObjectMeta", "TargetReferenceModel", "ValidationError"]


class ObjectMeta(BaseModel):
    """`metadata` as far as policylint needs it; every other field is ignored."""

    model_config = ConfigDict(extra="ignore")

    name: StrictStr | None = None
    generateName: StrictStr | None = None
    namespace: StrictStr | None = None
    labels: dict[StrictStr, StrictStr] | None = None
    annotations: dict[StrictStr, StrictStr] | None = None
    creationTimestamp: datetime | None = None

    @field_validator("creationTimestamp", mode="before")
    @classmethod
    def _rfc3339(cls, value: Any) -> Any:
        if value is None or isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            raise ValueError("must be an RFC 3339 date-time string")
        try:
            return parse_timestamp(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an RFC 3339 date-time (like 2024-01-02T03:04:05Z)") from None


class TargetReferenceModel(BaseModel):
    """A policy target reference at the input boundary (LocalPolicyTargetReference[WithSectionName],
    NamespacedPolicyTargetReference in apis/v1/policy_types.go). Every field is optional here so
    that a missing one is a finding, not an exception; types are strict."""

    model_config = ConfigDict(extra="allow")

    group: StrictStr | None = None
    kind: StrictStr | None = None
    name: StrictStr | None = None
    namespace: StrictStr | None = None
    sectionName: StrictStr | None = None
