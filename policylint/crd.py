"""Deriving policy profiles from CustomResourceDefinitions (being written)."""

from __future__ import annotations

from collections.abc import Iterable

from policylint.model import K8sObject
from policylint.profiles import PolicyProfile


def profiles_from_crds(crds: Iterable[K8sObject]) -> list[PolicyProfile]:
    return []
