"""The order the project index holds its objects in, and its two lookups by key and by kind,
worked out from nothing or from the index of the run before.

The index sorts every object by (group, kind, namespace, name, file, line, column, place in a
List) and files each under its key and its kind (policylint.k8s.index). A language server builds
the index of every object of the workspace on each update, where all but the edited file's
objects are the same instances as the update before (policylint.incremental.resident): sorting
and filing 10,000 objects again cost an update 20 ms. `rearranged` takes the order and the
lookups of the index before and moves only the objects that came and went. It answers what
sorting from nothing does, or nothing where it could not tell: two objects with the same place
in the order (a sort keeps such ties in the order given, which the index before may not have had)
or more changed than moving them is worth. A key or a kind the index before did not hold changes
where its entry sits in a lookup, whose order `duplicate_groups` and `kinds_in_input` follow: the
lookups are then filed again from the order, which is still not sorted again.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject, ObjectKey

Order = tuple[str, str, str, str, tuple[str, int, int, str]]
Arranged = tuple[list["K8sObject"], dict["ObjectKey", list["K8sObject"]], dict[tuple[str, str], list["K8sObject"]]]


def order_key(obj: K8sObject) -> Order:
    """Where an object sits in the index: by key, then by where it is written (several objects
    of one key, PL005, in file order)."""
    key = obj.key
    return (key.group, key.kind, key.namespace or "", key.name, obj.sort_key())


def _kind_of(obj: K8sObject) -> tuple[str, str]:
    return (obj.key.group, obj.key.kind)


def _twin(key: ObjectKey, keys: set[ObjectKey], last: dict[ObjectKey, list[K8sObject]]) -> bool:
    """Whether another key sorts as `key` does: a namespace written "" sorts as a cluster-scoped
    key's None, and then where each key's first object falls decides which entry comes first."""
    if key.namespace not in ("", None):
        return False
    twin = key._replace(namespace=None if key.namespace == "" else "")
    return twin in keys or twin in last


def _tied(by_key: dict[ObjectKey, list[K8sObject]]) -> bool:
    """Whether two objects of `by_key` have one place in the order (their key's, or their twin
    keys', `_twin`)."""
    for key, same in by_key.items():
        if key.namespace == "":
            same = [*same, *by_key.get(key._replace(namespace=None), ())]
        if len(same) > 1 and len({o.sort_key() for o in same}) < len(same):
            return True
    return False


def arranged(objects: Sequence[K8sObject]) -> Arranged:
    """The objects in the index's order, and the lookups by key and by kind filed from it."""
    ordered = sorted(objects, key=order_key)
    return (ordered, *_lookups(ordered))


def _lookups(ordered: list[K8sObject]) -> tuple[dict[ObjectKey, list[K8sObject]], dict[tuple[str, str], list[K8sObject]]]:
    by_key: dict[ObjectKey, list[K8sObject]] = defaultdict(list)
    by_kind: dict[tuple[str, str], list[K8sObject]] = defaultdict(list)
    for obj in ordered:
        by_key[obj.key].append(obj)
        by_kind[(obj.key.group, obj.key.kind)].append(obj)
    return dict(by_key), dict(by_kind)


def rearranged(
    before: tuple[Sequence[K8sObject], dict[ObjectKey, list[K8sObject]], dict[tuple[str, str], list[K8sObject]]],
    objects: Sequence[K8sObject],
) -> Arranged | None:
    """What `arranged(objects)` answers, worked out from `before`, the arrangement of the index
    before, whose objects are mostly these very instances; None where it cannot be told so (the
    module's docstring). A lookup's list no object came to or left is the same list as before."""
    last, last_by_key, last_by_kind = before
    had = set(last)  # objects hash by identity
    now = set(objects)
    if len(now) != len(objects):
        return None  # an instance given twice: sorting keeps both, in the order given
    came = sorted((o for o in objects if o not in had), key=order_key)
    went = [o for o in last if o not in now]
    if 4 * (len(came) + len(went)) > len(objects):
        return None
    ordered = [o for o in last if o in now] if went else list(last)
    for obj in came:
        at = bisect.bisect_right(ordered, order_key(obj), key=order_key)
        if at and order_key(ordered[at - 1]) == order_key(obj):
            return None  # a tie: its order is the order given
        ordered.insert(at, obj)
    if _tied(last_by_key):
        return None  # a tie among the objects kept
    keys = {o.key for o in came} | {o.key for o in went}
    kinds = {_kind_of(o) for o in came} | {_kind_of(o) for o in went}
    if not keys <= last_by_key.keys() or not kinds <= last_by_kind.keys() or any(_twin(k, keys, last_by_key) for k in keys):
        return (ordered, *_lookups(ordered))
    by_key = dict(last_by_key)
    gone = set(went)
    for key in keys:
        listed = [o for o in last_by_key[key] if o not in gone] + [o for o in came if o.key == key]
        if listed:
            by_key[key] = sorted(listed, key=order_key)
        else:
            del by_key[key]
    by_kind = dict(last_by_kind)
    for kind in kinds:
        # The kind's objects sit together in the order: its first place in it and its last.
        start = bisect.bisect_left(ordered, kind, key=_kind_of)
        end = bisect.bisect_right(ordered, kind, key=_kind_of)
        if start < end:
            by_kind[kind] = ordered[start:end]
        else:
            del by_kind[kind]
    return ordered, by_key, by_kind
