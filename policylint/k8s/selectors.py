"""Kubernetes label selectors (`metav1.LabelSelector`), evaluated offline.

Used by `allowedRoutes.namespaces.selector`, `allowedListeners.namespaces.selector`
(docs/semantics.md#listenersets, #listener-admission) and Envoy Gateway's
`targetSelectors` (GEP-713 "Label selectors"; docs/semantics.md#label-selectors). `matchLabels` and `matchExpressions` are
ANDed; operators In, NotIn, Exists, DoesNotExist (apimachinery
`LabelSelectorAsSelector`). An empty selector matches everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policylint.values import frozen

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@frozen
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            # apimachinery: NotIn matches objects without the key too.
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return self.key if self.operator == "Exists" else f"!{self.key}"
        op = "in" if self.operator == "In" else "notin"
        return f"{self.key} {op} ({', '.join(self.values)})"


@frozen
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def failing(self, labels: Mapping[str, str]) -> list[Requirement]:
        return [r for r in self.requirements if not r.matches(labels)]

    @property
    def keys(self) -> set[str]:
        return {r.key for r in self.requirements}

    def __str__(self) -> str:
        return ", ".join(str(r) for r in self.requirements) or "(everything)"


class SelectorError(ValueError):
    """A selector the API server would reject (wrong types, unknown operator, values on Exists)."""


def parse_selector(raw: Any) -> LabelSelector:
    """Parse a LabelSelector mapping; raises SelectorError with a message naming the field."""
    if raw is None:
        return LabelSelector()
    if not isinstance(raw, dict):
        raise SelectorError("a label selector must be a mapping")
    requirements: list[Requirement] = []
    match_labels = raw.get("matchLabels")
    if match_labels is not None:
        if not isinstance(match_labels, dict):
            raise SelectorError("matchLabels must be a mapping")
        for key, value in sorted(match_labels.items(), key=lambda kv: str(kv[0])):
            if not isinstance(key, str) or not isinstance(value, str):
                raise SelectorError(f"matchLabels[{key!r}] must be a string")
            requirements.append(Requirement(key, "In", (value,)))
    expressions = raw.get("matchExpressions")
    if expressions is not None:
        if not isinstance(expressions, list):
            raise SelectorError("matchExpressions must be a list")
        for i, expr in enumerate(expressions):
            requirements.append(_parse_expression(expr, i))
    return LabelSelector(tuple(requirements))


def _parse_expression(expr: Any, i: int) -> Requirement:
    where = f"matchExpressions[{i}]"
    if not isinstance(expr, dict):
        raise SelectorError(f"{where} must be a mapping")
    key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values")
    if not isinstance(key, str) or not key:
        raise SelectorError(f"{where}.key must be a non-empty string")
    if operator not in OPERATORS:
        raise SelectorError(f"{where}.operator must be one of {', '.join(OPERATORS)}, not {operator!r}")
    if values is None:
        values = []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError(f"{where}.values must be a list of strings")
    if operator in ("In", "NotIn") and not values:
        raise SelectorError(f"{where}: operator {operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorError(f"{where}: operator {operator} takes no values")
    return Requirement(key, operator, tuple(values))
