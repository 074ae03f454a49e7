"""Loading: the C parser, documents and their problems, and finding the input files."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policylint.input import bounds, load, placeholders
from policylint.input.load import LOADER, PARSER_IS_C, load_source, node_tag, parse_text
from policylint.input.sources import SourceError, discover, discover_all
from policylint.k8s.timestamps import parse_timestamp
from tests.lintutil import ROOT, lint_paths, lint_text, only

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: app
spec:
  ports:
  - port: 80
"""


def _service(name: str) -> str:
    return SERVICE.format(name=name)


def _names(result: load.FileResult) -> list[str]:
    return [d.data["metadata"]["name"] for d in result.documents]


def _issues(result: load.FileResult) -> list[tuple[str, int, int]]:
    return [(i.rule_id, i.location.line, i.location.column) for i in result.issues if i.location is not None]


# -- the parser ------------------------------------------------------------------------------


def test_the_libyaml_parser_is_in_use() -> None:
    assert yaml.__with_libyaml__
    assert PARSER_IS_C
    assert issubclass(LOADER, yaml.CSafeLoader)
    # The loader really goes through the C extension, not a pure-Python fallback.
    assert any(cls.__module__ == "yaml._yaml" for cls in type(LOADER("a: 1")).__mro__)


def test_scalars_become_what_kubernetes_sees() -> None:
    text = "i: 42\nhex: 0x1F\nf: 1.5\nb: true\nn: ~\nd: 2024-01-02\ns: '007'\n1: one\nlist: [a, 2]\n"
    (doc,) = parse_text(text, "f.yaml").documents
    assert doc.data == {
        "i": 42,
        "hex": 31,
        "f": 1.5,
        "b": True,
        "n": None,
        "d": "2024-01-02",  # YAML timestamps stay strings, as in JSON
        "s": "007",
        "1": "one",  # every key is a string, as in JSON
        "list": ["a", 2],
    }


def test_merge_keys_are_applied() -> None:
    text = "base: &b {a: 1, b: 2}\nderived:\n  <<: *b\n  b: 3\n"
    (doc,) = parse_text(text, "f.yaml").documents
    assert doc.data["derived"] == {"a": 1, "b": 3}


# -- documents -------------------------------------------------------------------------------


def test_every_document_of_a_multi_document_file_is_loaded() -> None:
    result = parse_text(_service("a") + "---\n" + _service("b") + "...\n---\n" + _service("c"), "f.yaml")
    assert result.issues == []
    assert _names(result) == ["a", "b", "c"]
    assert [d.ref.doc_in_chunk for d in result.documents] == [0, 1, 2]


@pytest.mark.parametrize(
    "broken",
    [
        "metadata: {name: [unclosed\n",
        'metadata:\n  name: "unterminated\n',
        "metadata:\n  name: a\n   bad: indentation\n",
        "metadata:\n\tname: tab-indented\n",
        "- a\nb: c\n",
        "a: *undefined\n",
        "a: b: c\n",
        "key: @reserved\n",
    ],
)
def test_later_documents_are_loaded_after_a_syntax_error(broken: str) -> None:
    text = _service("before") + "---\n" + broken + "---\n" + _service("after") + "---\n" + _service("last")
    result = parse_text(text, "f.yaml")
    assert _names(result) == ["before", "after", "last"]
    (issue,) = result.issues
    assert issue.rule_id == "PL001"
    assert issue.location is not None
    start = _service("before").count("\n") + 2  # the broken document's first line
    assert start <= issue.location.line <= start + broken.count("\n")
    after = result.documents[1]
    assert after.ref.line == start + broken.count("\n") + 1


def test_several_syntax_errors_in_one_file() -> None:
    text = "a: [\n---\n" + _service("one") + "---\nb: {\n---\n" + _service("two") + "---\nc: 'x\n"
    result = parse_text(text, "f.yaml")
    assert _names(result) == ["one", "two"]
    assert [rule for rule, _, _ in _issues(result)] == ["PL001", "PL001", "PL001"]
    lines = [line for _, line, _ in _issues(result)]
    assert lines == sorted(lines) and len(set(lines)) == 3


def test_syntax_error_in_the_last_document_keeps_the_earlier_ones() -> None:
    result = parse_text(_service("a") + "---\nbroken: [\n", "f.yaml")
    assert _names(result) == ["a"]
    assert _issues(result) == [("PL001", 10, 10)]  # end of input: shown at the end of the last line


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "---\n---\n# nothing\n---\n"])
def test_empty_files_and_documents_give_no_finding(text: str) -> None:
    result = lint_text(text, "empty.yaml")
    assert result.findings == []
    assert result.index.objects == []


def test_empty_documents_between_objects_are_skipped_silently() -> None:
    text = "---\n" + _service("a") + "---\n---\n# comment\n---\n" + _service("b") + "---\n"
    result = lint_text(text)
    assert result.findings == []
    assert sorted(o.name for o in result.index.objects) == ["a", "b"]


def test_null_items_of_a_list_are_still_reported() -> None:
    result = lint_text("apiVersion: v1\nkind: List\nitems:\n- \n- " + _service("x").replace("\n", "\n  ") + "\n")
    assert [(f.rule, f.line) for f in result.findings] == [("PL003", 4)]
    assert [o.name for o in result.index.objects] == ["x"]


def test_duplicate_keys_at_every_level() -> None:
    text = """\
apiVersion: v1
kind: Service
kind: Service
metadata:
  name: web
  labels:
    a: x
    b: y
    a: z
spec:
  ports:
  - name: http
    port: 80
    port: 81
  - {name: https, port: 443, name: tls}
"""
    result = parse_text(text, "f.yaml")
    assert sorted(_issues(result)) == [("PL002", 3, 1), ("PL002", 9, 5), ("PL002", 14, 5), ("PL002", 15, 30)]
    (labels,) = [i for i in result.issues if i.location is not None and i.location.line == 9]
    assert "'a' (first defined on line 7)" in labels.message
    (doc,) = result.documents
    assert doc.data["metadata"]["labels"] == {"a": "z", "b": "y"}  # the last value wins, as in the positions
    assert doc.data["spec"]["ports"][1]["name"] == "tls"


def test_duplicate_keys_inside_an_anchor_are_reported_once() -> None:
    text = "base: &b {x: 1, x: 2}\none: *b\ntwo: *b\n"
    assert _issues(parse_text(text, "f.yaml")) == [("PL002", 1, 17)]


def test_duplicate_key_lines_are_absolute_after_a_syntax_error() -> None:
    text = "a: [\n---\nx: 1\ny: 2\nx: 3\n"
    assert _issues(parse_text(text, "f.yaml")) == [("PL001", 2, 1), ("PL002", 5, 1)]


def test_template_markers() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "x"\ndata:\n  a: "{{- .Values.a | quote -}}"\n'
    result = parse_text(text, "f.yaml")
    assert _issues(result) == [("PL004", 6, 7)]
    assert "{{- .Values.a | quote -}}" in result.issues[0].message
    assert _names(result) == ["x"]  # still parsed: the other documents may be fine


def test_braces_that_are_not_template_markers() -> None:
    text = "data:\n  json: '{\"a\": {\"b\": 1}}'\n  go: '{ {x} }'\n"
    assert parse_text(text, "f.yaml").issues == []


def test_kind_list_items_become_objects() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        + "".join("- " + _service(n).replace("\n", "\n  ").rstrip() + "\n" for n in ("a", "b"))
        + "---\napiVersion: v1\nkind: ServiceList\nitems:\n- "
        + _service("c").replace("\n", "\n  ").rstrip()
        + "\n"
    )
    result = lint_text(text)
    assert result.findings == []
    assert [(o.name, o.prefix) for o in result.index.objects] == [("a", ("items", 0)), ("b", ("items", 1)), ("c", ("items", 0))]


def test_json_files_are_loaded(tmp_path: Path) -> None:
    (tmp_path / "svc.json").write_text('{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "j", "namespace": "app"}}\n')
    (tmp_path / "list.json").write_text(
        '{\n\t"apiVersion": "v1",\n\t"kind": "List",\n\t"items": [\n\t\t{"apiVersion": "v1", "kind": "ConfigMap",'
        ' "metadata": {"name": "k", "namespace": "app"}}\n\t]\n}\n'
    )
    result = lint_paths([tmp_path])
    assert result.findings == []
    assert sorted(str(o.key) for o in result.index.objects) == ["ConfigMap app/k", "Service app/j"]


def test_a_broken_json_file_is_a_located_finding(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{\n  "apiVersion": "v1",\n  "kind": "Service"\n  "metadata": {}\n}\n')
    result = lint_paths([tmp_path / "bad.json"])
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("PL001", 4, 3)]


# -- reading files ------------------------------------------------------------------------------


def test_file_over_the_size_limit_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", 1024)
    big = tmp_path / "big.yaml"
    big.write_text(_service("big") + "# padding\n" * 1000)
    assert big.stat().st_size > 4 * 1024
    data, problem = load.read_bytes(load.Source("big.yaml", fs_path=str(big)))
    assert problem is None and data is not None
    assert len(data) == 1025  # never more than the limit plus one byte is read
    result = load_source(load.Source("big.yaml", fs_path=str(big)))
    assert result.documents == []
    assert _issues(result) == [("PL007", 1, 1)]


# -- finding the files ---------------------------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _rel(sources: list[load.Source], root: Path) -> list[str]:
    return [os.path.relpath(s.fs_path or "", root).replace(os.sep, "/") for s in sources]


def test_directory_walk_is_sorted_and_skips_hidden_and_other_files(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "b.yaml": "",
            "a.yml": "",
            "c.JSON": "",
            "z/inner.yaml": "",
            "m/n/deep.yaml": "",
            "notes.txt": "",
            "kustomization.yaml.bak": "",
            ".hidden.yaml": "",
            ".git/config.yaml": "",
            ".github/workflows/ci.yaml": "",
            "z/.cache/x.yaml": "",
        },
    )
    sources = discover([str(tmp_path)])
    assert _rel(sources, tmp_path) == ["a.yml", "b.yaml", "c.JSON", "m/n/deep.yaml", "z/inner.yaml"]
    assert [s.display for s in sources] == sorted(s.display for s in sources)


def test_a_hidden_directory_named_explicitly_is_walked(tmp_path: Path) -> None:
    _tree(tmp_path, {".config/a.yaml": ""})
    assert _rel(discover([str(tmp_path / ".config")]), tmp_path) == [".config/a.yaml"]


def test_paths_are_deduplicated_and_sorted(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.yaml": "", "b/c.yaml": ""})
    sources = discover(
        [str(tmp_path / "b" / "c.yaml"), str(tmp_path), str(tmp_path / "a.yaml"), str(tmp_path / "b" / ".." / "a.yaml")]
    )
    assert _rel(sources, tmp_path) == ["a.yaml", "b/c.yaml"]


def test_symlink_loops_are_not_followed_forever(tmp_path: Path) -> None:
    _tree(tmp_path, {"app/svc.yaml": _service("svc"), "app/sub/route.yaml": _service("route")})
    (tmp_path / "app" / "sub" / "loop").symlink_to(tmp_path / "app", target_is_directory=True)
    (tmp_path / "app" / "self").symlink_to(".", target_is_directory=True)
    (tmp_path / "app" / "ping").symlink_to(tmp_path / "app" / "pong")
    (tmp_path / "app" / "pong").symlink_to(tmp_path / "app" / "ping")
    sources = discover([str(tmp_path / "app")])
    assert _rel(sources, tmp_path) == ["app/sub/route.yaml", "app/svc.yaml"]
    result = lint_paths([tmp_path / "app"])
    assert result.findings == []
    assert sorted(o.name for o in result.index.objects) == ["route", "svc"]


def test_symlinked_directories_are_followed_once(tmp_path: Path) -> None:
    # The links stay inside the linted directory (links out of it: tests/input/test_input_files.py).
    _tree(tmp_path, {"repo/real/a.yaml": _service("a")})
    (tmp_path / "repo" / "link").symlink_to(tmp_path / "repo" / "real", target_is_directory=True)
    (tmp_path / "repo" / "link2").symlink_to(tmp_path / "repo" / "real", target_is_directory=True)
    sources = discover([str(tmp_path / "repo")])
    assert _rel(sources, tmp_path) == ["repo/link/a.yaml"]


def test_a_symlink_loop_named_like_a_manifest_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    _tree(tmp_path, {"ok.yaml": _service("ok")})
    result = lint_paths([tmp_path])
    assert [(os.path.basename(f.file), f.rule, f.line, f.column) for f in result.findings] == [("loop.yaml", "PL008", 1, 1)]
    assert [o.name for o in result.index.objects] == ["ok"]


def test_a_dangling_symlink_named_on_the_command_line_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "missing" / "gone.yaml")
    result = lint_paths([tmp_path / "gone.yaml"])
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("PL008", 1, 1)]
    assert "No such file or directory" in result.findings[0].message


def test_a_directory_named_like_a_manifest_is_walked_not_read(tmp_path: Path) -> None:
    _tree(tmp_path, {"odd.yaml/inner.yaml": _service("inner")})
    assert _rel(discover([str(tmp_path)]), tmp_path) == ["odd.yaml/inner.yaml"]


def test_a_missing_path_is_a_usage_error_and_an_empty_directory_a_note(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        discover([str(tmp_path / "nope.yaml")])
    (tmp_path / "empty").mkdir()
    _tree(tmp_path, {"empty/readme.md": "", "empty/.hidden/x.yaml": ""})
    found = discover_all([str(tmp_path / "empty")])
    assert found.sources == []
    assert found.notes == [f"no manifests found under {tmp_path / 'empty'} (no *.yaml, *.yml or *.json files)"]


def test_a_file_named_explicitly_is_read_whatever_its_suffix(tmp_path: Path) -> None:
    _tree(tmp_path, {"manifest.txt": _service("txt")})
    result = lint_paths([tmp_path / "manifest.txt"])
    assert [o.name for o in result.index.objects] == ["txt"]


def test_stdin_uses_the_given_file_name() -> None:
    sources = discover(["-"], stdin_filename="deploy/prod.yaml", read_stdin=lambda: b"a: 1\n")
    assert [(s.display, s.fs_path, s.content) for s in sources] == [("deploy/prod.yaml", None, b"a: 1\n")]
    (default,) = discover(["-"], read_stdin=lambda: b"")
    assert default.display == "<stdin>"


def test_stdin_findings_are_reported_under_the_given_name(tmp_path: Path) -> None:
    _tree(tmp_path, {"other.yaml": _service("other")})
    data = _service("piped").replace("  namespace: app\n", "  namespace: app\n  labels: {tier: 1}\n").encode()
    result = lint_paths(["-", tmp_path / "other.yaml"], stdin_filename="team/piped.yaml", read_stdin=lambda: data)
    assert [(f.file, f.rule, f.line, f.column) for f in only(result, "PL009")] == [("team/piped.yaml", "PL009", 6, 12)]
    assert sorted(o.name for o in result.index.objects) == ["other", "piped"]


def test_an_error_at_the_end_after_a_second_byte_order_mark_stays_on_the_last_line() -> None:
    # Found by tests/hostile/test_fuzz.py: after the leading mark that decoding drops, a second one starts
    # the stream libyaml reads, and libyaml's index does not count it; the end-of-input error must
    # still be moved onto the last line (2 lines here), not reported on a line past it.
    result = parse_text("\ufeff\ufeffspec:\na", "t.yaml")
    (issue,) = result.issues
    assert issue.location is not None and (issue.location.line, issue.location.column) == (2, 2)


def test_without_libyaml_the_pure_python_loader_gives_the_same_findings() -> None:
    # A PyYAML built without libyaml (no `yaml._yaml`): the pure-Python loader, the same answer.
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['yaml._yaml'] = None\n"
        "import yaml; assert not yaml.__with_libyaml__\n"
        "from policylint.entry import main\n"
        "sys.exit(main(['check', '--no-cache', '--format', 'json', sys.argv[1]]))\n"
    )
    corpus = str(ROOT / "examples")
    pure = subprocess.run([sys.executable, "-c", code, corpus], capture_output=True, text=True, timeout=300)
    c = subprocess.run(
        [sys.executable, "-m", "policylint", "check", "--no-cache", "--format", "json", corpus],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pure.returncode == c.returncode == 1, pure.stderr
    assert "policylint: warning: PyYAML was built without libyaml" in pure.stderr
    assert "without libyaml" not in c.stderr

    def located(out: str) -> list[tuple[str, str, int, int]]:
        # The parsers word their own syntax errors differently ("not allowed here" / "... in
        # this context"); every finding is the same, at the same place.
        return [(f["rule"], f["file"], f["line"], f["column"]) for f in json.loads(out)["findings"]]

    assert located(pure.stdout) == located(c.stdout)
    assert json.loads(pure.stdout)["policies"] == json.loads(c.stdout)["policies"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each value is what Go's time.Parse(time.RFC3339, ...) reads, worked out by hand.
        ("2024-01-02T03:04:05Z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
        # Python 3.10's fromisoformat rejects a two-digit fraction: a PL009 error there, before.
        ("2024-01-02T03:04:05.12Z", datetime(2024, 1, 2, 3, 4, 5, 120000, tzinfo=timezone.utc)),
        ("2024-01-02T03:04:05.123456789Z", datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)),
        ("2024-01-02T03:04:05+02:30", datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2, minutes=30)))),
        ("2024-01-02T03:04:05.5-07:00", datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=timezone(timedelta(hours=-7)))),
    ],
)
def test_timestamps_parse_the_same_on_every_supported_python(text: str, expected: datetime) -> None:
    parsed = parse_timestamp(text)
    assert parsed == expected and parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-02",
        "2024-01-02T03:04:05",
        "2024-01-02 03:04:05Z",
        "2024-01-02T03:04Z",
        "2024-13-02T03:04:05Z",
        "2024-02-30T03:04:05Z",
        "2024-01-02T03:04:05.Z",
        "2024-01-02T03:04:05+0200",
        "2024-W01-1T03:04:05Z",
    ],
)
def test_what_rfc_3339_does_not_allow_is_rejected_on_every_python(text: str) -> None:
    # Python 3.11's fromisoformat accepts several of these (no seconds, week dates, +0200).
    with pytest.raises(ValueError):
        parse_timestamp(text)


@pytest.mark.parametrize(
    ("field", "value", "line"),
    [
        ("metadata.name", "${APP_NAME}", 4),  # envsubst, Flux post-build substitution
        ("metadata.namespace", "<namespace>", 5),  # a documentation placeholder left in
        ("parentRef", "$(GATEWAY)", 8),  # Kustomize vars
        ("backendRef", "web-${ENV}", 11),
        # No `$`: Gateway API's conformance manifests (conformance/tests/*.yaml in
        # kubernetes-sigs/gateway-api) write `{GATEWAY_CLASS_NAME}`, substituted before applying.
        ("metadata.name", '"{ROUTE_NAME}"', 4),
        ("backendRef", '"{{SERVICE}}"', 11),
        ("parentRef", '"web-{ENV}"', 8),
    ],
)
def test_a_placeholder_where_a_name_is_expected_is_an_unrendered_template(field: str, value: str, line: int) -> None:
    # Before: no PL004; the route was linted as if `${APP_NAME}` were its name (and PL406/PL411
    # reported references to `<namespace>/${GATEWAY}`). After: PL004 at the placeholder.
    values = {"metadata.name": "web", "metadata.namespace": "apps", "parentRef": "edge", "backendRef": "web"}
    values[field] = value
    text = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n"
        f"  name: {values['metadata.name']}\n  namespace: {values['metadata.namespace']}\n"
        "spec:\n  parentRefs:\n"
        f"  - name: {values['parentRef']}\n  rules:\n  - backendRefs:\n"
        f"    - name: {values['backendRef']}\n      port: 80\n"
    )
    result = parse_text(text, "route.yaml")
    (issue,) = [i for i in result.issues if i.rule_id == "PL004"]
    assert issue.location is not None and issue.location.line == line
    shown = value.strip('"')
    start = shown.index("$") if "$" in shown else shown.index("{") if "{" in shown else 0
    assert (
        f"unrendered placeholder '{shown[start:]}'" in issue.message
        or f"unrendered template marker '{shown[start:]}'" in issue.message
    )


def test_a_brace_placeholder_in_the_gateway_class_name_is_an_unrendered_template() -> None:
    # gateway-invalid-listeners-unsupported-protocol.yaml in kubernetes-sigs/gateway-api's
    # conformance/tests, as the suite ships it: the class is substituted before applying.
    text = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: gw\n  namespace: infra\n"
        'spec:\n  gatewayClassName: "{GATEWAY_CLASS_NAME}"\n  listeners:\n  - {name: http, port: 80, protocol: HTTP}\n'
    )
    (issue,) = [i for i in parse_text(text, "gw.yaml").issues if i.rule_id == "PL004"]
    assert issue.location is not None and (issue.location.line, issue.location.column) == (
        7,
        22,
    )  # at the placeholder, inside the quotes
    assert "'{GATEWAY_CLASS_NAME}'" in issue.message


@pytest.mark.parametrize(
    "text",
    [
        # A flow mapping is no placeholder.
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: apps}\nspec:\n  ports: [{port: 80}]\n",
        # Braces in a value that is not a name are ordinary text (a regular expression).
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: web\nspec:\n"
        "  rules:\n  - matches:\n    - path: {type: RegularExpression, value: '/a{2}'}\n",
        # No Kubernetes object: an OpenAPI document's parameter names its path template.
        "openapi: 3.0.0\npaths:\n  /items/{id}:\n    get:\n      parameters:\n      - name: '{id}'\n",
        # An Argo Workflow resolves `{{ }}` in its own names at run time.
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: wf\nspec:\n"
        "  templates:\n  - name: main\n    steps:\n    - - name: step\n        templateRef: {name: '{{inputs.parameters.t}}'}\n",
    ],
)
def test_braces_that_are_no_placeholder_in_a_name_are_not_reported(text: str) -> None:
    assert [i for i in parse_text(text, "x.yaml").issues if i.rule_id == "PL004"] == []


def test_placeholder_syntax_outside_names_is_not_a_template() -> None:
    # `${...}` in a Lua script, `<` in a CEL rule and in a header value are values, not names.
    text = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: lua, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  lua:
  - type: Inline
    inline: 'function envoy_on_request(h) h:logInfo("${user} <" .. x) end'
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-note, value: "a < b ${c}"}]}
"""
    assert [i.rule_id for i in parse_text(text, "policy.yaml").issues] == []


# Values a document may hold, with every character and form a placeholder is made of.
_PLACEHOLDER_TEXT = st.text(alphabet="aZ_${}()<>.P", max_size=6) | st.sampled_from(
    ["PLACEHOLDER_ADDRS", "{GATEWAY_CLASS_NAME}", "${NS}", "$(VAR)", "<name>", "{{x}}", "web"]
)
_PLACEHOLDER_KEYS = st.sampled_from(["name", "namespace", "sectionName", "value", "GATEWAY_CLASS_NAME", "spec", "x"])
_DOCUMENTS = st.recursive(
    st.none() | st.integers() | st.booleans() | _PLACEHOLDER_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_PLACEHOLDER_KEYS, inner, max_size=3),
    max_leaves=12,
)


@given(
    data=st.dictionaries(_PLACEHOLDER_KEYS, _DOCUMENTS, max_size=4) | _DOCUMENTS,
    braces=st.sampled_from(["all", "single", "none"]),
)
@settings(max_examples=300, deadline=None)
def test_the_placeholder_walk_finds_what_it_found_without_its_first_look(data: object, braces: str) -> None:
    # `fields` first looks for what every placeholder holds without building paths, and walks
    # only a document that may hold one: what it finds is what the walk finds alone.
    from policylint.input import placeholders

    found = placeholders.fields(data, braces=braces)  # type: ignore[arg-type]
    original = placeholders._may_hold
    try:
        placeholders._may_hold = lambda _data: True  # type: ignore[assignment]
        assert found == placeholders.fields(data, braces=braces)  # type: ignore[arg-type]
    finally:
        placeholders._may_hold = original  # type: ignore[assignment]


def test_a_document_without_a_placeholders_marks_is_not_walked_for_paths() -> None:
    from policylint.input import placeholders

    route = yaml.safe_load(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: apps}\n"
        "spec:\n  parentRefs: [{name: edge, sectionName: http}]\n  rules:\n  - backendRefs: [{name: web, port: 80}]\n"
    )
    assert placeholders._may_hold(route) is False
    for value in ("${NS}", "$(NS)", "{NS}", "<name>", "PLACEHOLDER_ADDRS"):
        marked = {**route, "spec": {**route["spec"], "parentRefs": [{"name": value}]}}
        assert placeholders._may_hold(marked) is True, value
    unquoted = {**route, "spec": {"gatewayClassName": {"GATEWAY_CLASS_NAME": None}}}  # `{VAR}` unquoted
    assert placeholders._may_hold(unquoted) is True
    assert [path for path, _ in placeholders.fields(unquoted, braces="all")] == [("spec", "gatewayClassName")]


def test_a_placeholder_field_drops_the_findings_on_it_and_inside_it_only() -> None:
    # The conformance suite's unquoted `{GATEWAY_CLASS_NAME}` is a mapping of one key: PL004
    # reports the file; the type check (PL010) and the rules say nothing on that field or inside
    # it, while a finding elsewhere in the object (PL201's missing route) stays.
    text = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: infra}\n"
        "spec:\n  gatewayClassName: {GATEWAY_CLASS_NAME}\n  listeners:\n  - {name: http, port: 80, protocol: HTTP}\n"
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n"
        "metadata: {name: p, namespace: infra}\nspec:\n"
        "  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}]\n"
    )
    result = lint_text(text)
    rules = sorted({f.rule for f in result.findings})
    assert "PL004" in rules and "PL201" in rules
    assert [f.rule for f in result.findings if f.path.startswith("spec.gatewayClassName")] == []


def test_findings_off_placeholders_do_not_walk_their_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    # Whether a finding sits on a placeholder is read along its path: the whole object was walked
    # for every object with a finding, 4% of a run on a repository with many (docs/performance.md).
    walked: list[object] = []
    fields = placeholders.fields

    def counted(data: object, **kwargs: Any) -> Any:
        walked.append(data)
        return fields(data, **kwargs)

    monkeypatch.setattr(placeholders, "fields", counted)
    text = (
        "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n"
        "metadata: {name: p, namespace: infra}\nspec:\n"
        "  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}]\n"
    )
    assert [f.rule for f in lint_text(text).findings] == ["PL201"]
    assert walked == []


_NAMES = st.sampled_from(["name", "namespace", "sectionName", "spec", "value", "GATEWAY", "a.b"])
_LEAVES = st.one_of(
    st.none(),
    st.integers(-2, 2),
    st.sampled_from(["web", "${ENV}", "{GATEWAY}", "{{X}}", "<ns>", "PLACEHOLDER_ADDRS", "a{b}", "$(V)"]),
    st.builds(lambda key: {key: None}, st.sampled_from(["GATEWAY", "gateway", "A_B"])),
)
_DATA = st.recursive(_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=3)))


def _paths(data: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*prefix, i))
    return out


@given(_DATA, st.sampled_from(["all", "single", "none"]))
@settings(max_examples=300, deadline=None)
def test_a_path_along_placeholders_is_on_one_exactly_when_the_walk_finds_it(data: Any, braces: Any) -> None:
    # `along` reads only the nodes on a path; with `fields` confirming a True, it decides what the
    # whole walk decides, for every path into the data and a few that miss it.
    found = [path for path, _ in placeholders.fields(data, braces=braces)]
    for path in [*_paths(data), ("spec", 7), ("missing",), (0, "name")]:
        on = any(path[: len(h)] == h for h in found)
        candidate = placeholders.along(data, path, braces=braces)
        assert (candidate and on) == on


# -- the resolver (resolver._Resolve) ----------------------------------------------------------

_STOCK = yaml.CSafeLoader if PARSER_IS_C else yaml.SafeLoader


def _tags(text: str, loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]) -> list[tuple[str, str | None]]:
    """(tag, scalar text) of every node of every document, in order; then the error, if any."""
    out: list[tuple[str, str | None]] = []
    try:
        roots = list(yaml.compose_all(text, Loader=loader))
    except yaml.YAMLError as exc:
        return [("error", str(exc))]
    seen: set[int] = set()  # an alias is its anchor's node again: each node once (billion laughs)
    for root in roots:
        stack: list[yaml.Node] = [root] if root is not None else []
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            out.append((node_tag(node), node.value if isinstance(node, yaml.ScalarNode) else None))
            if isinstance(node, yaml.MappingNode):
                stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(reversed(node.value))
    return out


# Plain scalars on which YAML 1.1's implicit resolvers differ: every first character PyYAML keys
# them by, the empty scalar, merge and value keys, and near misses of each.
_TRICKY = [
    "",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "on",
    "On",
    "OFF",
    "y",
    "n",
    "true",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "0",
    "-0",
    "+1",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "190:20:30",
    "1e3",
    "1.5e+3",
    ".5",
    "-.inf",
    ".Inf",
    ".NaN",
    ".nan",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10",
    "<<",
    "=",
    "<a",
    "=b",
    "1.2.3",
    "v1",
    "-",
    ".",
    "+",
    "0.",
    "_1",
    "1:2",
    "ab",
]


@pytest.mark.parametrize("value", _TRICKY)
def test_resolver_tags_plain_scalars_as_pyyaml_does(value: str) -> None:
    for text in (
        f"k: {value}\n",
        f"- {value}\n",
        f"{value}: 1\n" if value else "? ''\n: 1\n",
        f"[{value}]\n" if value else "[]\n",
    ):
        assert _tags(text, LOADER) == _tags(text, _STOCK), text
    quoted = f"k: '{value}'\n"
    assert _tags(quoted, LOADER) == _tags(quoted, _STOCK)


@pytest.mark.slow  # every node of the repository
def test_resolver_tags_every_node_of_the_repository_as_pyyaml_does() -> None:
    # Every YAML file the tests, the examples and the benchmark's generator hold: the same tag
    # on every node as PyYAML's own safe loader gives.
    files = sorted(p for d in ("tests", "examples") for p in (ROOT / d).rglob("*.y*ml") if p.is_file())
    assert len(files) > 200
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        expected = _tags(text, _STOCK)
        assert _tags(text, LOADER) == expected, path
        compared += len(expected)
    assert compared > 100_000


@given(st.text(alphabet="0123456789+-._:eExXoObB~yYnNtTfFaAlLsSuU<=#' ", max_size=14))
@settings(max_examples=400, deadline=None)
def test_resolver_tags_random_plain_scalars_as_pyyaml_does(value: str) -> None:
    for text in (f"k: {value}\n", f"- {value}\n", f"{value}: x\n"):
        assert _tags(text, LOADER) == _tags(text, _STOCK), text
