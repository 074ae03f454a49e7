"""The rules over the whole project answered from a long-lived process's last run while the
project holds the same objects (policylint.incremental.unchanged), or, for those that declare a
unit, unit by unit while every answer a unit read is the same object
(policylint.incremental.units): random edit sequences, each update compared with a run from
nothing over the same texts."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.incremental import unchanged
from policylint.incremental.workspace import Workspace
from policylint.semantics import components
from tests.incremental.test_incremental import _cold, _corpus, _edit, _editor_workspace, _rows

_INT_LINE = re.compile(r"(?m)^(\s+[A-Za-z]+: )(\d+)$")
_NAME_LINE = re.compile(r"(?m)^(\s+(?:- )?name: )([a-z0-9-]+)$")


def _kept(workspace: Workspace) -> unchanged.KeptWhole:
    return workspace._resident.whole  # what the workspace's runs kept


def _differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int, n: int) -> tuple[int, int, int, int]:
    """After each random edit, a file edited again in ways that keep or change its objects: a
    comment after the last document (the same objects), an integer or a name changed where it
    stands (the same places, other data), a comment above the first document (the same data,
    other lines).
    The workspace's findings are a cold run's after every update. The rules answered from what was
    kept, and those run, over all the updates."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)  # small repositories analysed in parts too
    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    reused = ran = units_reused = units_ran = 0

    def update(name: str, text: str) -> None:
        nonlocal reused, ran, units_reused, units_ran
        texts[name] = text
        workspace.update(name, text)
        reused += _kept(workspace).reused
        ran += _kept(workspace).ran
        units_reused += _kept(workspace).units.reused
        units_ran += _kept(workspace).units.ran
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(workspace.result.findings) == _rows(cold.findings), (seed, name)
        assert _rows(workspace.result.suppressed) == _rows(cold.suppressed), (seed, name)

    for step in range(steps):
        before = copy.deepcopy(files)
        _edit(files, rng, editor=True)
        changed = sorted(name for name in set(before) | set(files) if before.get(name) != files.get(name))
        for name in changed:
            update(name, yaml.safe_dump_all(files[name], sort_keys=False) if name in files else "")
        name = rng.choice(sorted(files))
        update(name, texts[name] + f"# a note {step}\n")
        update(name, texts[name] + "# another\n")
        for k in range(3):
            # An integer (a port, a weight), then names (an object's, a reference's) changed where
            # they stand: other data, the same lines.
            lines = list((_INT_LINE if k == 0 else _NAME_LINE).finditer(texts[name]))
            if lines:
                at = rng.choice(lines)
                edited = f"{at.group(1)}{int(at.group(2)) + 1}" if k == 0 else f"{at.group(1)}{at.group(2)}-{k}"
                update(name, texts[name][: at.start()] + edited + texts[name][at.end() :])
        update(name, texts[name] + "# and one more\n")
        update(name, "# lines added above\n\n" + texts[name])
        _listener_sets(files, texts, rng, update)
    return reused, ran, units_reused, units_ran


def _listener_sets(
    files: dict[str, list[dict[str, Any]]], texts: dict[str, str], rng: random.Random, update: Callable[[str, str], None]
) -> None:
    """A Gateway made to take ListenerSets of its namespace, then a ListenerSet in a file of its own
    attached to it, edited three times (its listener's hostname): the Gateway is the same object
    in those updates, what its units read (its listeners, the ListenerSet's among them) is not."""
    gateways = [
        (n, d) for n, docs in files.items() for d in docs if d.get("kind") == "Gateway" and isinstance(d.get("spec"), dict)
    ]
    if not gateways:
        return
    name, gateway = rng.choice(gateways)
    if "allowedListeners" not in gateway["spec"]:
        gateway["spec"]["allowedListeners"] = {"namespaces": {"from": "Same"}}
        update(name, yaml.safe_dump_all(files[name], sort_keys=False))
    listeners = gateway["spec"].get("listeners")
    hosts = [str(x.get("hostname")) for x in listeners if isinstance(x, dict)] if isinstance(listeners, list) else []
    if not hosts:
        return
    # A wildcard over one of the Gateway's hostnames (overlapping it: PL424 on both), one of them
    # (the same hostname: the listeners conflict, PL416, and PL424 leaves them), another domain;
    # in a random order, each once, so that what the Gateway's unit finds changes every time.
    wildcard = "*." + rng.choice(hosts).split(".", 1)[-1]
    metadata = gateway.get("metadata") or {}
    for host in rng.sample([wildcard, rng.choice(hosts), "api.example.org"], 3):
        listener_set = LISTENER_SET.replace("HOST", json.dumps(host)).replace(
            "{name: gw}", json.dumps({"name": metadata.get("name")})
        )
        update("listeners.yaml", listener_set.replace("namespace: app", f"namespace: {json.dumps(metadata.get('namespace'))}"))


def test_kept_whole_project_rules_agree_with_a_run_from_nothing_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reused, ran, units_reused, units_ran = _differential(tmp_path, monkeypatch, seed=1, steps=2, n=60)
    assert reused > 0 and ran > 0
    assert units_reused > 0 and units_ran > 0  # the rules that declare a unit: some units kept, some run


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_kept_whole_project_rules_agree_with_a_run_from_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    reused, ran, units_reused, units_ran = _differential(tmp_path, monkeypatch, seed=seed, steps=5, n=120)
    assert reused > 0 and ran > 0 and units_reused > 0 and units_ran > 0


def test_a_comment_after_the_last_object_runs_no_whole_project_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same objects in the same places: every whole-project rule is answered from the last
    update; an object's data or place changed, or its file's lines moved, runs them all."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in _corpus(3, 60, isolated=True).items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    edited = "m-000.yaml"
    kept = _kept(workspace)
    outcomes = []
    for text in [
        # The first updates of the part: nothing kept for it yet (the first analysis is whole).
        texts[edited] + "# typing\n",
        texts[edited] + "# typing\n# more\n",
        texts[edited] + "# typing more\n",
        texts[edited] + "# typing more\n\n\n",
        "# above\n" + texts[edited],  # the same data, every object a line lower
        "# above\n" + texts[edited] + "# and below\n",
    ]:
        texts[edited] = text
        workspace.update(edited, text)
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(workspace.result.findings) == _rows(cold.findings)
        outcomes.append((kept.reused > 0, kept.ran > 0))
    assert outcomes[2:] == [(True, False), (True, False), (False, True), (True, False)]


SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports:
  - {name: http, port: 80}
"""


def test_a_message_quoting_a_line_follows_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PL005 quotes where an object is first defined: lines added above it in its file change the
    message, though no object's data changed, so the rules run again."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    texts = {"a.yaml": SERVICE, "b.yaml": "# the same Service again\n" + SERVICE}
    texts.update({name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in _corpus(5, 30, isolated=True).items()})
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    messages = []
    for text in [SERVICE + "# one\n", SERVICE + "# two\n", "# above\n\n" + SERVICE + "# two\n"]:
        texts["a.yaml"] = text
        workspace.update("a.yaml", text)
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(workspace.result.findings) == _rows(cold.findings)
        messages.extend(f.message for f in workspace.result.findings if f.rule == "PL005")
    assert [m.split("(")[1] for m in messages] == [
        "first definition at a.yaml:1)",
        "first definition at a.yaml:1)",
        "first definition at a.yaml:3)",
    ]


def test_a_files_loading_problems_are_read_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose text makes no object, edited from one problem to another: the objects are the
    same, but the loader's problems (which PL001-PL009 report and PL010 reads) are not."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    texts = {"a.yaml": SERVICE, "broken.yaml": "apiVersion: v1\nkind: [Service\n"}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    found = []
    for text in [
        "apiVersion: v1\nkind: [Service\n# typing\n",
        "apiVersion: v1\nkind: [Service\n# typing more\n",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRou",
    ]:
        texts["broken.yaml"] = text
        workspace.update("broken.yaml", text)
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(workspace.result.findings) == _rows(cold.findings)
        found.append([f.rule for f in workspace.result.findings if f.file == "broken.yaml"])
    assert found == [["PL001"], ["PL001"], ["PL009"]]


GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: eg
  allowedListeners:
    namespaces: {from: Same}
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: "*.example.com"
    tls:
      certificateRefs:
      - {name: cert}
"""

LISTENER_SET = """\
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: app}
spec:
  parentRef: {name: gw}
  listeners:
  - name: more
    protocol: HTTPS
    port: 443
    hostname: HOST
    tls:
      certificateRefs:
      - {name: cert}
"""


def test_a_unit_is_run_again_when_another_file_changes_what_it_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PL424's unit is the Gateway: its check reads the Gateway's listeners, those of the
    ListenerSets attached to it included. A ListenerSet in another file whose hostname stops (then
    starts again) overlapping the Gateway's changes what the Gateway's unit read, though the
    Gateway is the same object: it runs again; edits elsewhere leave it kept."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    texts = {"gw.yaml": GATEWAY, "extra.yaml": LISTENER_SET.replace("HOST", "www.example.com")}
    texts.update({name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in _corpus(7, 30, isolated=True).items()})
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    units = _kept(workspace).units
    for n in range(3):  # the whole analysis, then the part's first updates: nothing of it kept yet
        workspace.update("extra.yaml", LISTENER_SET.replace("HOST", f"w{n}.example.com"))
    found = []
    ways = []
    for host in ["www.example.com", "www.other.org", "www.other.org", "api.example.com"]:
        # A value of the ListenerSet changed each time (its hostname; in the third update, the
        # same hostname, quoted): the Gateway's file is not edited.
        text = LISTENER_SET.replace("HOST", host)
        texts["extra.yaml"] = text if text != texts["extra.yaml"] else text.replace(host, f"'{host}'")
        workspace.update("extra.yaml", texts["extra.yaml"])
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(workspace.result.findings) == _rows(cold.findings), host
        found.append(sorted((f.file, f.path) for f in workspace.result.findings if f.rule == "PL424"))
        # Units kept and units run; or, the objects' data unchanged, every rule answered whole.
        ways.append((units.reused > 0, units.ran > 0, _kept(workspace).ran > 0))
    both = [("extra.yaml", "spec.listeners[0].hostname"), ("gw.yaml", "spec.listeners[0].hostname")]
    assert found == [both, [], [], both]
    assert ways == [(True, True, True), (True, True, True), (False, False, False), (True, True, True)]
