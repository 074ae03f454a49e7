"""The rule unit: a small typed check over the whole project index."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar, Generic, Literal, TypeVar, final

from policylint.findings import Fix, Issue, Related, Severity
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rulecodes import RuleOptionError as RuleOptionError  # out of the rules' package: caught by commands
from policylint.stages import Stage
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy

U = TypeVar("U")

# Subjects besides kind names (Rule.subjects).
POLICY = "policy"
FILE = "file"
ANY = "*"
ROUTES = frozenset({"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"})


@frozen
class RuleOption:
    """One option a rule declares (yamllint's `CONF`/`DEFAULT`): configuration sets it per rule."""

    name: str  # kebab-case, as written in configuration (`max-affected`)
    type: type[int] | type[str] | type[bool]
    default: int | str | bool | None
    help: str
    minimum: int | None = None
    # Which way of an int value makes the rule report less: "higher" for a maximum it reports
    # above, "lower" for a minimum it reports below; an unset value (None) is no threshold at
    # all. None: not declared, so whether a change of it loosens the gate cannot be told
    # (policylint.commands.trust lists such a change without failing the run).
    fewer: Literal["higher", "lower"] | None = None

    def reports_less(self, old: object, new: object) -> bool | None:
        """Whether the change of this option from `old` to `new` makes the rule report less
        (True), not less (False), or cannot be told from its declaration (None)."""
        if self.fewer is None or self.type is not int:
            return None
        if new is None or old is None:
            return new is None and old is not None  # unset: no threshold at all
        assert isinstance(old, int) and isinstance(new, int)
        return new > old if self.fewer == "higher" else new < old

    def check(self, value: object) -> int | str | bool | None:
        # bool is an int in Python: accept it only where a bool is declared.
        if value is None or (type(value) is self.type) or (self.type is int and type(value) is int):
            if isinstance(value, int) and self.minimum is not None and value < self.minimum:
                raise RuleOptionError(f"option {self.name} must be at least {self.minimum}, not {value}")
            return value
        raise RuleOptionError(f"option {self.name} takes {self.type.__name__}, not {type(value).__name__}")


class Rule:
    """Base class. Subclasses set `id`, `name`, `severity` and implement `check`.

    The first line of the class docstring is the rule's one-line summary (SARIF
    shortDescription, `policylint rules`). A rule never reads files and never
    formats output: it yields `Issue`s naming an object and a field path.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    # The semantic stages the rule reads besides the index (policylint.stages): the pipeline
    # builds only what the selected rules read, and tests/rules/test_rule_inputs.py runs every rule
    # with exactly these built.
    reads: ClassVar[frozenset[Stage]] = frozenset()
    # Stages that work out, for themselves, what the rule works out, though it reads none of them:
    # with `--jobs`, the rule starts in another process only once they are built, so that its
    # process inherits that work rather than doing it again (policylint.rules.workers). One
    # process runs it where it always did; a run that builds none of them runs it here.
    after: ClassVar[frozenset[Stage]] = frozenset()
    # The options the rule reads, with their defaults: `self.option(name)`.
    options: ClassVar[tuple[RuleOption, ...]] = ()
    # What its findings sit on: kinds (`HTTPRoute`), POLICY (any policy kind), FILE (a place in
    # a file, no object) or ANY. A narrower report scope (changed files only) skips a rule none
    # of whose subjects is in scope; tests/rules/test_rule_inputs.py checks every finding against it.
    subjects: ClassVar[frozenset[str]] = frozenset({ANY})
    # Whether its findings carry a fix (policylint.autofix): "safe" (applied by `--fix`),
    # "unsafe" (only with `--unsafe-fixes`: it changes what the controller does), or None.
    fixable: ClassVar[Literal["safe", "unsafe"] | None] = None
    # The messages of CRD CEL validation rules whose failure this rule reports itself, at the
    # failing node or under it: PL704 leaves such a failure to it (one finding per problem).
    covers_cel: ClassVar[frozenset[str]] = frozenset()
    # Whether it is a per-object rule (`ObjectRule`, `PolicyRule`): set by those classes, never
    # by a rule; the engine reads it to cut the rule's work into shares of the objects.
    per_object: ClassVar[bool] = False

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        declared = {o.name: o for o in self.options}
        values: dict[str, object] = {o.name: o.default for o in self.options}
        for name, value in (config or {}).items():
            if name not in declared:
                known = ", ".join(declared) or "none"
                raise RuleOptionError(f"{self.id} has no option {name!r} (options: {known})")
            values[name] = declared[name].check(value)
        self.config: Mapping[str, object] = values

    def option(self, name: str) -> object:
        return self.config[name]

    def counts_blast_radii(self) -> bool:
        """Whether the rule, as configured, asks the simulation for blast radii (`Simulation.affects`):
        a run none of whose rules or reports does lets go of what counting them reads before its rules."""
        return False

    @classmethod
    def reports_on(cls, kind: str | None, *, policy: bool) -> bool:
        """Whether a finding of this rule may sit on an object of `kind` (None: no object)."""
        if kind is None:
            return FILE in cls.subjects
        return ANY in cls.subjects or kind in cls.subjects or (policy and POLICY in cls.subjects)

    @classmethod
    def summary(cls) -> str:
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else cls.name

    def check(self, project: Project) -> Iterable[Issue]:
        raise NotImplementedError

    def issue(
        self,
        obj: K8sObject,
        path: str,
        message: str,
        *,
        related: Iterable[Related] = (),
        severity: Severity | None = None,
        hint: str | None = None,
        fix: Fix | None = None,
    ) -> Issue:
        return Issue(
            rule_id=self.id,
            message=message,
            object=obj,
            path=path,
            related=tuple(related),
            severity=severity,
            hint=hint,
            fix=fix,
        )


class ObjectRule(Rule):
    """A rule each of whose findings depends only on the object it sits on (and on the stages built
    before the rules, which every process shares). It implements `check_object`, and the engine
    decides which objects it runs on: all of them in one process, or, with `--jobs`, each process
    its share of them (policylint.rules.workers). A lookup it builds over the whole project (names,
    sections) goes through `project.derived`, so that it is built once per process, not per object
    or per share. tests/input/test_processes.py checks that the shares find, together, what one run finds.
    What it finds on an object is kept between runs while the object and the run's context are the
    same (policylint.incremental.rulecache), unless the check read more than the object: the
    resolution, a later stage, or a lookup not marked `project.object_local`."""

    per_object = True

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        raise NotImplementedError

    @final
    def check(self, project: Project) -> Iterator[Issue]:
        """Every object's findings, in index order: what the engine gathers from the shares."""
        for obj in project.index.objects:
            yield from self.check_object(project, obj)


class UnitRule(Rule, Generic[U]):
    """A rule over the whole project whose work splits into units (a policy, a route, a Gateway:
    whatever it iterates), each unit's findings found by `check_unit` from the unit and what it
    asks of the project, independently of the other units and of the order they come in. `units`
    lists them, in the order their findings are given. The objects and policies a run builds of
    an unchanged file are the last run's instances, and the stages hand back what an edit did not
    reach as the same objects: a long-lived process keeps each unit's findings with the answers it
    read, and takes them while the unit and every answer are the same objects
    (policylint.incremental.units). A unit is an object compared by identity; a check of a unit
    must read the project only through `project` (never a lookup it kept from another unit)."""

    def units(self, project: Project) -> Iterable[U]:
        raise NotImplementedError

    def check_unit(self, project: Project, unit: U) -> Iterable[Issue]:
        raise NotImplementedError

    @final
    def check(self, project: Project) -> Iterator[Issue]:
        """Every unit's findings, in the units' order."""
        for unit in self.units(project):
            yield from self.check_unit(project, unit)


class PerPolicy(UnitRule["Policy"]):
    """A `UnitRule` whose unit is the policy: `check_unit` finds what one policy holds. Unlike a
    `PolicyRule`, its work is not shared out with `--jobs`."""

    @final
    def units(self, project: Project) -> Iterable[Policy]:
        """Every policy, in index order."""
        return project.resolution.policies()


class PolicyRule(Rule):
    """An `ObjectRule` over the policies: each finding depends only on the policy it sits on. It
    implements `check_policy`, and the engine runs it on every policy, or on each share's."""

    per_object = True

    def check_policy(self, project: Project, policy: Policy) -> Iterable[Issue]:
        raise NotImplementedError

    @final
    def check(self, project: Project) -> Iterator[Issue]:
        """Every policy's findings, in index order: what the engine gathers from the shares."""
        for policy in project.resolution.policies():
            yield from self.check_policy(project, policy)


class InputRule(Rule):
    """Input problems are found while loading (policylint.input.load, policylint.k8s.objects);
    the rule only hands them to the engine so that select/ignore apply uniformly."""

    subjects = frozenset({FILE})

    def check(self, project: Project) -> Iterable[Issue]:
        return (issue for issue in project.index.input_issues if issue.rule_id == self.id)
