"""The rule registry: an explicit list, one module per family, sorted by id.

PL0xx input · PL1xx policy boilerplate · PL2xx targetRef · PL3xx sectionName ·
PL4xx cross-namespace handshakes and route attachment · PL5xx label conventions ·
PL6xx effective policy and conflicts · PL9xx suppressions and the baseline. (PL000 is the engine's internal-error finding.)
"""

from __future__ import annotations

from policylint.rules import (
    attachment,
    backends,
    boilerplate,
    cel,
    effective_policy,
    filters,
    gateways,
    handshakes,
    input,
    labels,
    listeners,
    malformed,
    schema,
    section_name,
    suppressions,
    targetref,
)
from policylint.rules.base import Rule

REGISTRY: tuple[type[Rule], ...] = tuple(
    sorted(
        [
            *input.RULES,
            *malformed.RULES,
            *boilerplate.RULES,
            *targetref.RULES,
            *section_name.RULES,
            *handshakes.RULES,
            *attachment.RULES,
            *backends.RULES,
            *listeners.RULES,
            *gateways.RULES,
            *filters.RULES,
            *labels.RULES,
            *schema.RULES,
            *cel.RULES,
            *effective_policy.RULES,
            *suppressions.RULES,
        ],
        key=lambda r: r.id,
    )
)

BY_ID: dict[str, type[Rule]] = {r.id: r for r in REGISTRY}
