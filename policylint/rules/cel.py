"""PL704: the CRDs' CEL validation rules (`x-kubernetes-validations`), evaluated offline.

The verdict is the index's (policylint.k8s.admission: the schemas PL702 and PL703 read, the rules
evaluated by policylint.k8s.cel, compiled once per rule text and run only on the schema nodes an
object actually has); this rule reports its CEL rejections, less those another rule reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from policylint.findings import Issue, Severity
from policylint.k8s.admission import VALIDATIONS, Admission, Rejection
from policylint.k8s.dissent import Dissent
from policylint.k8s.dissent import dissent as dissent_of
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import POLICY, ObjectRule, Rule
from policylint.rules.releases import disputed, dissent_origin, judged
from policylint.rules.schema import GATEWAY_API_KINDS, _admitting, _under
from policylint.stages import Stage

# The policy rules that check, without the cluster, what the CRDs' CEL rules on target references
# and merge strategies check too: where one of them reports a field a failing CEL rule reads,
# that finding is the one to fix, and PL704 says nothing more (see `_covered`).
_STATIC_POLICY_RULES = ("PL101", "PL102", "PL103", "PL104", "PL105", "PL106", "PL107", "PL108", "PL202", "PL203", "PL205")


class CelViolation(ObjectRule):
    """A value its CRD's CEL validation rules (`x-kubernetes-validations`) reject: the API server refuses the object with the rule's message."""

    id = "PL704"
    name = "cel-violation"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}
    # The rules that report some CEL rules' problems themselves (`Rule.covers_cel`) read the topology.
    reads = frozenset({Stage.TOPOLOGY})

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        verdict = project.admissions().verdict(obj)
        # Admitted by the first plausible schema: another the cluster may run may refuse it.
        dissent = dissent_of(project.admissions(), obj) if verdict is not None and not verdict.rejected else None
        if dissent is not None:
            verdict = dissent.verdict
        if verdict is None or not verdict.cel:
            return
        # What the other rules report runs them over the whole project: built only once a CEL rule
        # fails, and once per process (`derived`), whatever share of the objects it checks.
        others, claimed = project.derived(_reported_by_others)
        for rejection in verdict.cel:
            failure = rejection.cel
            assert failure is not None
            if _covered(others.get(obj, ()), failure.node_path, failure.compiled, failure.value):
                continue
            said = failure.validation.get("message")
            if said in claimed and _under_any(claimed[said].get(obj, ()), failure.node_path):
                continue  # a rule that declares this CEL rule's problem (`Rule.covers_cel`) reports it
            yield self._finding(project, obj, rejection, verdict, dissent)

    def _finding(
        self, project: Project, obj: K8sObject, rejection: Rejection, verdict: Admission, dissent: Dissent | None
    ) -> Issue:
        failure = rejection.cel
        assert failure is not None
        source = verdict.source
        at = rejection.path
        origin = dissent_origin(dissent, verdict) if source else "its CRD in the input"
        where = at or "the object"
        reason = failure.validation.get("reason")
        because = f" ({reason})" if isinstance(reason, str) and reason else ""
        compiled, error = failure.compiled, failure.error
        if rejection.undecided:
            assert error is not None
            message = (
                f"{where}: the CEL rule `{compiled.text}` of {origin} was not evaluated to the end: {error.message}"
                " (policylint's offline budget; the API server has its own cost limit)"
            )
            return self.issue(obj, at, message, severity=Severity.WARNING)
        said = rejection.message
        rejects = "the API server rejects the object" if dissent is None else "a cluster that runs it rejects the object"
        message = f"{where}: {said}{because} (a CEL rule of {origin}): {rejects}"
        severity: Severity | None
        if dissent is not None:
            severity, words = disputed(project, obj, dissent)
        else:
            severity, words = judged(project, obj, source, _admitting(project.admissions(), obj), "the object")
        message += words
        hint = None if error is not None or said.startswith("failed rule:") else f"The rule: `{compiled.text}`"
        return self.issue(obj, at, message, severity=severity, hint=hint)


def _reported_by_others(project: Project) -> tuple[dict[K8sObject, list[str]], dict[str, dict[K8sObject, list[str]]]]:
    """Object -> the paths the static policy rules report on it; and per CEL rule message a
    rule declares it covers (`Rule.covers_cel`), object -> the paths that rule reports."""
    from policylint.rules.attachment import RULES as ATTACHMENT
    from policylint.rules.backends import RULES as BACKENDS
    from policylint.rules.boilerplate import RULES as BOILERPLATE
    from policylint.rules.listeners import RULES as LISTENERS
    from policylint.rules.targetref import RULES as TARGETREF

    out: dict[K8sObject, list[str]] = {}
    claimed: dict[str, dict[K8sObject, list[str]]] = {}
    for rule in (*BOILERPLATE, *TARGETREF, *ATTACHMENT, *BACKENDS, *LISTENERS):
        static = rule.id in _STATIC_POLICY_RULES
        if not static and not rule.covers_cel:
            continue
        for issue in rule().check(project):
            if issue.object is None:
                continue
            if static:
                out.setdefault(issue.object, []).append(issue.path)
            for message in rule.covers_cel:
                claimed.setdefault(message, {}).setdefault(issue.object, []).append(issue.path)
    return out, claimed


def _under_any(paths: Iterable[str], path: str) -> bool:
    """Whether a finding sits at `path` or under it."""
    return any(other == path or _under(other, (path,)) or not path for other in paths)


def _covered(paths: Iterable[str], path: str, compiled: Any, value: Any) -> bool:
    """Whether a finding of a static policy rule (PL1xx, PL2xx) already names what this failing
    CEL rule at `path` reads: a finding at the node itself, or under it in a field the rule reads
    (`self.targetRefs`, `self.defaults`; anything when the rule reads `self` whole)."""
    fields = compiled.self_fields
    for other in paths:
        if other == path:
            return True
        if not _under(other, (path,)) and path:
            continue
        rest = other[len(path) :].lstrip(".") if path else other
        if fields is None:
            return True
        head = rest.split(".", 1)[0].split("[", 1)[0]
        if head in fields or _escaped_in(head, fields):
            return True
    return False


def _escaped_in(name: str, fields: frozenset[str]) -> bool:
    from policylint.k8s.cel import escape

    return escape(name) in fields


class CelCostExceeded(Rule):
    """A CRD whose CEL validation rules the API server estimates too costly: it refuses the CRD."""

    id = "PL708"
    name = "cel-cost-exceeded"
    severity = Severity.ERROR
    subjects = frozenset({"CustomResourceDefinition"})

    def check(self, project: Project) -> Iterable[Issue]:
        index = project.index
        # The CRDs in the input and those given with --crd: the API server would refuse either.
        for crd in (*index.crds(), *index.options.context_crds):
            from policylint.input.positions import format_path
            from policylint.k8s.cel.estimate import refusals

            spec = crd.data.get("spec") if isinstance(crd.data, dict) else None
            versions = spec.get("versions") if isinstance(spec, dict) else None
            for i, version in enumerate(versions if isinstance(versions, list) else ()):
                schema = version.get("schema") if isinstance(version, dict) else None
                root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
                if not isinstance(root, dict):
                    continue
                for costly in refusals(root):
                    at = format_path(("spec", "versions", i, "schema", "openAPIV3Schema", *costly.parts))
                    yield self.issue(
                        crd,
                        at,
                        f"Forbidden: {costly.message}; the API server refuses the CRD",
                        hint="The API server's static estimate (x-kubernetes-validations cost limits):"
                        " bound the lists, maps and strings the rule reads, or make it cheaper",
                    )


RULES: list[type[Rule]] = [CelViolation, CelCostExceeded]


# -- coverage: which of the bundled CRDs' rules PL704 evaluates (`policylint rules --cel-coverage`) --


def _rules_in(node: Mapping[str, Any], where: str, out: list[tuple[str, str]]) -> None:
    """(rule text, where it sits: "" for a node PL704 walks, else why it does not) for every CEL
    rule of a schema, in schema order."""
    for validation in node.get(VALIDATIONS) or ():
        if isinstance(validation, dict):
            out.append((str(validation.get("rule", "")), where))
    for key, child in (node.get("properties") or {}).items():
        if isinstance(child, dict):
            inner = where
            if not where and node.get("_root") and key in ("status", "metadata"):
                inner = f"on {key} (not linted)"
            _rules_in(child, inner, out)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            _rules_in(child, where, out)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in node.get(key) or ():
            if isinstance(child, dict):
                _rules_in(child, where or f"inside {key} (not a structural node)", out)


def skip_reason(rule: str) -> str | None:
    """Why PL704 does not evaluate a rule (None: it does)."""
    from policylint.k8s import cel

    compiled = cel.compile_rule(rule)
    if compiled.skip == "transition":
        return "transition rule (oldSelf)"
    if compiled.skip == "unsupported":
        return f"unsupported: {compiled.error}"
    if compiled.skip == "compile":
        return "does not compile"
    return None


def coverage(given: Sequence[tuple[str, Mapping[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Per bundled CRD schema and channel, or per served version of the CRDs `given` ((file,
    CRD object data)): its rules, how many PL704 evaluates, and why the others are not (reason
    -> count). Rows in the data's order, one per channel (a given CRD's row has channel "")."""
    if given is None:
        from policylint.k8s.schemas import bundled_entries

        # The newest Gateway API release's, as the run without a cluster description reads first.
        entries = bundled_entries()
    else:
        from policylint.k8s.schemas import crd_schemas

        entries = [
            {"group": group, "kind": kind, "version": version, "channels": [""], "source": file, "schema": schema}
            for file, crd in given
            for (group, kind, version), schema in crd_schemas(crd).items()
        ]
    rows = []
    for entry in entries:
        found: list[tuple[str, str]] = []
        _rules_in({**entry["schema"], "_root": True}, "", found)
        skipped: dict[str, int] = {}
        for rule, where in found:
            reason = where or skip_reason(rule)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
        for channel in entry["channels"]:
            rows.append(
                {
                    "group": entry["group"],
                    "kind": entry["kind"],
                    "version": entry["version"],
                    "channel": channel,
                    "source": entry["source"] if given is not None else " ".join(entry["source"].split("/")[:2]),
                    "rules": len(found),
                    "evaluated": len(found) - sum(skipped.values()),
                    "skipped": dict(sorted(skipped.items())),
                    "schemas": 1 if channel == entry["channels"][0] else 0,  # counts each bundled schema once
                }
            )
    return rows
