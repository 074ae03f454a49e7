"""PL4xx (part 5): what a route's filters ask of the data plane that HTTP itself forbids
(docs/semantics.md#the-cluster-model).

A header value is checked by a CRD pattern only in some releases' experimental channel (Gateway
API v1.5 on), so the schema rules cannot call every mistake an error; a value HTTP's grammar
refuses is one on every cluster, whatever its CRDs store: no data plane can send it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from policylint.findings import Issue, Severity
from policylint.input.positions import format_path
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import ObjectRule, Rule
from policylint.rules.refs import where

# The kinds whose filters modify headers, and the filters that do (HTTPRouteFilter and
# GRPCRouteFilter in apis/v1: RequestHeaderModifier and ResponseHeaderModifier, each with `set`
# and `add`, a list of {name, value}).
_KINDS = frozenset({"HTTPRoute", "GRPCRoute"})
_MODIFIERS = ("requestHeaderModifier", "responseHeaderModifier")

# RFC 7230 section 3.2: field-value is field-vchar (VCHAR or obs-text) separated by SP or HTAB; a
# control character other than HTAB (NUL, CR and LF among them) is never part of one. A CR or LF
# in a value would end the header line and start another (response splitting).
_FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


class HeaderValueInvalid(ObjectRule):
    """A route filter sets or adds a header whose value HTTP forbids: a control character (CR, LF, NUL, ...)."""

    id = "PL426"
    name = "header-value-invalid"
    severity = Severity.ERROR
    subjects = _KINDS

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        if obj.kind not in _KINDS or obj.group != GATEWAY_GROUP:
            return
        malformed = None
        for parts, value in _header_values(obj):
            bad = _FORBIDDEN.search(value) if isinstance(value, str) else None
            if bad is None:
                continue
            if malformed is None:
                malformed = project.index.malformed(obj)
            if malformed.tainted(*parts):
                continue
            path = format_path(parts)
            message = (
                f"{obj.kind} {where(obj)} sets a header to a value with the control character"
                f" {bad.group()!r} at {path}: HTTP forbids it in a header value (RFC 7230 section 3.2),"
                " so no data plane can send the header; the controller rejects the filter (Envoy Gateway:"
                " cannot add a header with an invalid value) and, from Gateway API v1.5, the experimental"
                " channel's CRD refuses the object"
            )
            yield self.issue(obj, path, message, hint="Remove the control characters (line breaks) from the value.")


def _header_values(obj: K8sObject) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path parts, value) of every header value a filter of the route sets or adds: the rules'
    filters and their backendRefs' filters. A path is written out only for a value found wrong:
    every route has its filters walked, by this rule and by PL703 (`forbidden_header_values`)."""
    rules = obj.spec.get("rules")
    for i, rule in enumerate(rules if isinstance(rules, list) else ()):
        if not isinstance(rule, dict):
            continue
        filters = rule.get("filters")
        if filters:
            yield from _in_filters(filters, ("spec", "rules", i, "filters"))
        refs = rule.get("backendRefs")
        for j, ref in enumerate(refs if isinstance(refs, list) else ()):
            if isinstance(ref, dict) and ref.get("filters"):
                yield from _in_filters(ref["filters"], ("spec", "rules", i, "backendRefs", j, "filters"))


def _in_filters(filters: Any, at: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    for k, item in enumerate(filters if isinstance(filters, list) else ()):
        if not isinstance(item, dict):
            continue
        for modifier in _MODIFIERS:
            headers = item.get(modifier)
            if not isinstance(headers, dict):
                continue
            for op in ("set", "add"):
                entries = headers.get(op)
                for n, entry in enumerate(entries if isinstance(entries, list) else ()):
                    if isinstance(entry, dict) and "value" in entry:
                        yield (*at, k, modifier, op, n, "value"), entry["value"]


def forbidden_header_values(obj: K8sObject) -> frozenset[str]:
    """The paths of the header values this rule reports on the object: the schema's header value
    pattern (PL703) says nothing more there (one finding per cause)."""
    if obj.kind not in _KINDS or obj.group != GATEWAY_GROUP:
        return frozenset()
    return frozenset(
        format_path(parts) for parts, value in _header_values(obj) if isinstance(value, str) and _FORBIDDEN.search(value)
    )


RULES: list[type[Rule]] = [HeaderValueInvalid]
