"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), as GitHub code scanning reads it.

One run. `tool.driver` names policylint and lists, in `rules[]`, every rule with a result (help
as text and as markdown: GitHub shows `help.markdown`, not `helpUri`). Each result has one
location, relative to the repository root (`%SRCROOT%`), with its region; the finding's
fingerprint as `partialFingerprints`, so an alert survives edits that move lines; the notes as
`relatedLocations`, linked from the message text (`[first definition](1)`); for a finding on a
policy, a `codeFlows` entry walking its attachment chain (policylint.attachment_chain).
Suppressed and baselined findings are results too, with `suppressions[]`: code scanning then
closes their alerts instead of leaving them open. Columns count code points
(`columnKind: unicodeCodePoints`), as policylint's do.

References: the SARIF 2.1.0 specification (OASIS, errata 01) and GitHub's "SARIF support for
code scanning".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from policylint import HOMEPAGE, __version__
from policylint.findings import Finding, Severity, SuppressionKind
from policylint.textsafe import json_dumps

if TYPE_CHECKING:
    from policylint.attachment_chain import Chain
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions
    from policylint.rules.base import Rule

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "policylintFingerprint/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SUPPRESSION_KINDS = {
    SuppressionKind.COMMENT: "inSource",
    SuppressionKind.ANNOTATION: "inSource",
    SuppressionKind.BASELINE: "external",
}
# In a message with embedded links, a literal bracket or backslash is escaped (SARIF 2.1.0
# §3.11.6 "Messages with embedded links").
_LINK_SYNTAX = re.compile(r"([\\\[\]])")


def _uri(file: str, options: RenderOptions) -> dict[str, Any]:
    path = options.repo_path(file)
    # Lone surrogates (undecodable file names) become the bytes they stand for, percent-encoded.
    encoded = quote(path.encode("utf-8", "surrogateescape"), safe="/")
    if path.startswith("/"):
        return {"uri": f"file://{encoded}"}
    return {"uri": encoded, "uriBaseId": SRCROOT}


def _physical(file: str, region: tuple[int, int, int, int], options: RenderOptions) -> dict[str, Any]:
    line, column, end_line, end_column = region
    return {
        "artifactLocation": _uri(file, options),
        "region": {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column},
    }


def _rule_entry(rule_id: str, name: str, rule: type[Rule] | None) -> dict[str, Any]:
    from policylint.rules.docs import family, metadata

    if rule is None:  # PL000: policylint's own failure, not a rule with a doc
        text = "policylint failed on part of the input; the message says where. Please report it."
        return {
            "id": rule_id,
            "name": name,
            "shortDescription": {"text": "policylint failed on part of the input"},
            "fullDescription": {"text": text},
            "help": {"text": text, "markdown": text},
            "helpUri": f"{HOMEPAGE}/issues",
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["policylint", "internal"]},
        }
    meta = metadata(rule)
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": meta["summary"]},
        "fullDescription": {"text": meta["description"]},
        "help": {"text": meta["text"], "markdown": meta["markdown"]},
        "helpUri": meta["helpUri"],
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["policylint", "gateway-api", family(rule)]},
    }


def _literal(text: str) -> str:
    return _LINK_SYNTAX.sub(r"\\\1", text)


def _message(f: Finding) -> str:
    if not f.related:
        text = f.message
    else:
        links = ", ".join(f"[{_literal(r.message)}]({i})" for i, r in enumerate(f.related, 1))
        text = f"{_literal(f.message)} (see {links})"
    return f"{text}\nHint: {f.hint}" if f.hint else text


def _code_flow(chains: tuple[Chain, ...], options: RenderOptions) -> dict[str, Any]:
    return {
        "message": {"text": "attachment chain: policy, targetRef, target, section, ReferenceGrant"},
        "threadFlows": [
            {
                "locations": [
                    {
                        "location": {
                            "physicalLocation": _physical(
                                step.file, (step.line, step.column, step.end_line, step.end_column), options
                            ),
                            "message": {"text": step.message},
                        },
                        "executionOrder": order,
                    }
                    for order, step in enumerate(chain, 1)
                ]
            }
            for chain in chains
        ],
    }


def _result(f: Finding, index: int, result: Reported, options: RenderOptions) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVELS[f.severity],
        "message": {"text": _message(f)},
        "locations": [{"physicalLocation": _physical(f.file, f.region, options)}],
    }
    if f.object is not None:
        out["locations"][0]["logicalLocations"] = [{"name": f.object.name, "fullyQualifiedName": str(f.object), "kind": "object"}]
    if f.fingerprint:
        out["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
    if f.related:
        out["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": _physical(r.file, (r.line, r.column, r.line, r.column), options),
                "message": {"text": r.message},
            }
            for i, r in enumerate(f.related, 1)
        ]
    chains = result.chains.get(f.fingerprint) if f.fingerprint else None
    if chains:
        out["codeFlows"] = [_code_flow(chains, options)]
    if f.suppression is not None:
        suppression: dict[str, Any] = {"kind": _SUPPRESSION_KINDS[f.suppression.kind], "status": "accepted"}
        if f.suppression.reason:
            suppression["justification"] = f.suppression.reason
        out["suppressions"] = [suppression]
    # SARIF 2.1.0 section 3.27.24 (baselineState): `new` or `unchanged` against the base the change is measured from
    # (`--diff`, `--staged`; policylint.commands.change).
    introduced = result.introduced_by_change(f)
    if introduced is not None:
        out["baselineState"] = "new" if introduced else "unchanged"
    properties: dict[str, Any] = {}
    if f.path:
        properties["fieldPath"] = f.path
    if f.hint:
        properties["hint"] = f.hint
    if properties:
        out["properties"] = properties
    return out


def document(result: Reported, options: RenderOptions | None = None) -> dict[str, Any]:
    from policylint.reporters import RenderOptions
    from policylint.rules import REGISTRY

    options = options or RenderOptions()
    findings = [*result.findings, *result.suppressed]
    catalogue = {r.id: r for r in REGISTRY}
    names = {f.rule: f.name for f in findings}
    rule_ids = sorted(names)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "policylint",
                        "semanticVersion": __version__,
                        "version": __version__,
                        "informationUri": HOMEPAGE,
                        "rules": [_rule_entry(r, names[r], catalogue.get(r)) for r in rule_ids],
                    }
                },
                "invocations": [{"executionSuccessful": not result.internal_error}],
                "originalUriBaseIds": {SRCROOT: {"description": {"text": "The root of the repository"}}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.rule], result, options) for f in findings],
                # What the configuration relaxed and what the change did to it (policylint.gate).
                **({"properties": {"policylintGate": result.gate.as_dict()}} if result.gate else {}),
            }
        ],
    }


def render(result: Reported, options: RenderOptions | None = None) -> str:
    # ASCII JSON, lone surrogates replaced: valid UTF-8 whatever the input's file names.
    return json_dumps(document(result, options), indent=2, ensure_ascii=True, fast=True, newline=True)
