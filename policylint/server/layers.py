"""Navigation after an edit, answered from the part the edit's analysis covered.

Hover, definition, references and symbols read the topology and the effective policy of the
object asked about. After an edit the server analyses only the part of the workspace the edited
file reaches (policylint.incremental.workspace): its members are the objects whose findings it
computed as a whole analysis would, and every other object's findings are the analysis before's,
since nothing they depend on changed. Navigation follows the same rule: the navigation of the
workspace now is a stack of layers, the last whole analysis at the bottom and the part of each
edit since on top of it. An object belongs to the newest layer whose part holds it (or whose
edited file holds it: that file's text is that layer's); what a layer says of its own objects is
what a whole analysis would say, built over the part's project alone (its stages, a fraction of
the workspace's). A reference to an object from a layer below is left out when the object
making it belongs to a newer layer: it was made by a text since edited.

Each layer's navigation is built once, the first time a request needs it: the bottom one (the
whole workspace, the slow one) after the first analysis, the others from their parts. The stack is
bounded (`MAX_LAYERS`; a layer a newer one covers, the same file edited again, is dropped): past
it, the next analysis's whole project is the new bottom.
tests/editor/test_server_parts.py compares every answer with a whole analysis of the same texts over
random edits.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from policylint.input.positions import PositionResolver
from policylint.server.navigation import Navigator, Place, Reference

if TYPE_CHECKING:
    from policylint.findings import Issue
    from policylint.k8s.index import Section
    from policylint.k8s.objects import K8sObject, ObjectKey
    from policylint.project import Project
    from policylint.server.documents import Cursor

# Layers kept above the whole analysis at the bottom; one more and the stack starts again from the
# analysis then (its navigation built whole when asked for).
MAX_LAYERS = 8


def build_stages(project: Project) -> list[Issue]:
    """Build every stage of `project` (hover reads the effective policy, which no selected rule
    may have read), once, without the cyclic collector, as the pipeline builds them; the PL000
    issues of the stages that failed."""
    from policylint.pipeline import build_stages as build
    from policylint.stages import Stage

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return build(project, (Stage.SIMULATION,))
    finally:
        if was_enabled:
            gc.enable()


class Layer:
    """One analysis's navigation: of the whole workspace (`members` None), or of the part an edit
    of `edited` reached (`members`: the objects it computed as a whole analysis would)."""

    def __init__(
        self,
        project: Project,
        text: Callable[[str], str | None],
        members: frozenset[ObjectKey] | None = None,
        edited: frozenset[str] = frozenset(),
    ) -> None:
        self.project = project
        self.text = text
        self.members = members
        self.edited = edited
        self.navigator: Navigator | None = None
        self.failed = False

    def navigate(self) -> Navigator | None:
        """The layer's navigator, built once; None when a stage failed to build."""
        if self.navigator is None and not self.failed:
            if build_stages(self.project):
                self.failed = True
                return None
            # Tens of thousands of short-lived acyclic objects, as in a lint run
            # (policylint.pipeline): the cyclic collector would only rescan the project, for seconds.
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                self.navigator = Navigator(self.project, PositionResolver(self.text))
            finally:
                if was_enabled:
                    gc.enable()
        return self.navigator

    def holds(self, obj: K8sObject) -> bool:
        """Whether the object, as this layer's analysis read it, is one it speaks for."""
        return self.members is None or obj.key in self.members or obj.doc.file in self.edited


class Layers:
    """The workspace's navigation now: `layers`, the bottom (a whole analysis) first. It answers
    what `Navigator` answers, each question from the layer of the object it is about."""

    def __init__(self, layers: Sequence[Layer]) -> None:
        self.layers = tuple(layers)
        self._owners: dict[K8sObject, int] = {}  # an object answered -> the index of its layer
        self._navigators: list[Navigator] = []

    def prepare(self) -> bool:
        """Build every layer's navigation; False when a stage of one failed (nothing to navigate)."""
        if len(self._navigators) == len(self.layers):
            return True
        built = [layer.navigate() for layer in self.layers]
        if any(nav is None for nav in built):
            return False
        self._navigators = [nav for nav in built if nav is not None]
        return True

    def _current(self, obj: K8sObject, level: int) -> bool:
        """Whether no layer above `level` speaks for the object: what `level` says of it stands."""
        return not any(layer.holds(obj) for layer in self.layers[level + 1 :])

    def _own(self, obj: K8sObject, level: int) -> K8sObject:
        self._owners[obj] = level
        return obj

    def navigator(self, obj: K8sObject) -> Navigator:
        """The navigator of the layer an object answered belongs to."""
        return self._navigators[self._owners.get(obj, 0)]

    def project_of(self, obj: K8sObject) -> Project:
        return self.navigator(obj).project

    # -- what is under the cursor -------------------------------------------------------------

    def object_at(self, file: str, cursor: Cursor) -> K8sObject | None:
        for level in range(len(self.layers) - 1, -1, -1):
            layer, nav = self.layers[level], self._navigators[level]
            obj = nav.object_at(file, cursor)
            if obj is not None and layer.holds(obj):
                return self._own(obj, level)
            if file in layer.edited:
                return None  # the file's text is this layer's: nothing of it is under the cursor
        return None

    def reference_at(self, obj: K8sObject, cursor: Cursor) -> Reference | None:
        return self.navigator(obj).reference_at(obj, cursor)

    def section_at(self, obj: K8sObject, cursor: Cursor) -> Section | None:
        return self.navigator(obj).section_at(obj, cursor)

    # -- where things are ---------------------------------------------------------------------

    def place(self, obj: K8sObject, path: str = "") -> Place:
        return self.navigator(obj).place(obj, path)

    def definition(self, ref: Reference) -> Place | None:
        """Where the object a reference names is defined now: in the newest layer that speaks for
        it (a grant's namespace or a Gateway's class, which no part follows, may have been
        edited since the reference's layer)."""
        if ref.target is None:
            return None
        for level in range(len(self.layers) - 1, -1, -1):
            nav = self._navigators[level]
            target = nav.project.index.get(ref.target.key)
            if target is not None and self.layers[level].holds(target):
                return nav.place(target, ref.section.path) if ref.section is not None else nav.place(target)
        return self.navigator(ref.owner).definition(ref)

    def references_to(self, obj: K8sObject, section: Section | None = None) -> list[Reference]:
        """The references naming `obj` now: each layer's, from the objects it speaks for and no
        newer layer does (a reference that no part follows, a grant's namespace or a Gateway's
        class, may name an object of an older layer from a newer one)."""
        found: list[Reference] = []
        for level, (layer, nav) in enumerate(zip(self.layers, self._navigators)):
            target = obj if self._owners.get(obj) == level else nav.project.index.get(obj.key)
            if target is None:
                continue
            for r in nav.references_to(target, section):
                if layer.holds(r.owner) and self._current(r.owner, level):
                    found.append(r)
                    self._own(r.owner, level)
        return sorted(found, key=lambda r: (r.owner.doc.file, r.owner.doc.line, r.path))

    def objects_in(self, file: str) -> list[K8sObject]:
        """The file's objects, from the newest layer that read its text (the edit's, or the bottom)."""
        for level in range(len(self.layers) - 1, -1, -1):
            layer = self.layers[level]
            if layer.members is None or file in layer.edited:
                return [self._own(o, level) for o in self._navigators[level].objects_in(file)]
        return []
