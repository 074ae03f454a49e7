"""The built-in profiles read from the data generated from them (policylint/profiles/shipped.py):
the committed file is what the generator writes from the YAML as it is, it gives the YAML's data
value for value, a run reads it instead of parsing the YAML, and YAML files it was not made from
are parsed instead."""

from __future__ import annotations

import datetime
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint import resources
from policylint.profiles import registry, shipped


@pytest.fixture
def fresh() -> Iterator[None]:
    """`builtin_documents` read again in this test (it is read once per process), and again after."""
    registry.builtin_documents.cache_clear()
    yield
    registry.builtin_documents.cache_clear()


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The profile files and the generated file copied, the module pointed at the copies."""
    directory = tmp_path / "builtin"
    shutil.copytree(shipped.DIRECTORY, directory)
    generated = tmp_path / "builtin.json"
    shutil.copy(shipped.GENERATED, generated)
    monkeypatch.setattr(shipped, "DIRECTORY", directory)
    monkeypatch.setattr(shipped, "GENERATED", generated)
    return directory


def test_the_committed_file_is_what_the_generator_writes() -> None:
    """Fails when a profile was edited and `make profiles` not run."""
    assert shipped.GENERATED.read_bytes() == shipped.generate(), "stale: run `make profiles`"


def test_it_gives_the_yaml_data_value_for_value() -> None:
    """Compared by repr: `==` takes True for 1 and 1 for 1.0, which JSON would tell apart anyway,
    but a reader may not."""
    generated = shipped.documents()
    assert generated is not None
    parsed = [(path, resources.load_yaml_data(path)) for path in sorted(shipped.DIRECTORY.glob("*.yaml"))]
    assert len(generated) == len(parsed) == 12
    assert repr(generated) == repr(parsed)


def test_a_run_reads_the_profiles_without_parsing_their_yaml(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[Path] = []
    real = registry.load_yaml_data

    def counting(path: Path) -> Any:
        parsed.append(path)
        return real(path)

    monkeypatch.setattr(registry, "load_yaml_data", counting)
    documents = registry.builtin_documents()
    assert parsed == []
    assert [path.name for path, _ in documents] == sorted(p.name for p in shipped.DIRECTORY.glob("*.yaml"))
    assert {p.project for p in registry.builtin_profiles()} >= {"gateway-api", "envoy-gateway", "kuadrant"}


@pytest.mark.parametrize("change", ["edited", "added", "removed", "renamed"])
def test_yaml_files_it_was_not_made_from_are_parsed(
    change: str, fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout whose profiles changed since the file was generated reads what the YAML says."""
    directory = _copy(tmp_path, monkeypatch)
    istio = directory / "istio.yaml"
    if change == "edited":
        istio.write_text(istio.read_text(encoding="utf-8").replace("project: istio", "project: istio-edited"), encoding="utf-8")
    elif change == "added":
        (directory / "zz-extra.yaml").write_bytes(istio.read_bytes())
    elif change == "removed":
        istio.unlink()
    else:
        istio.rename(directory / "istio-renamed.yaml")
    assert shipped.documents() is None
    documents = registry.builtin_documents()
    assert [path.name for path, _ in documents] == sorted(p.name for p in directory.glob("*.yaml"))
    projects = [document["project"] for _, document in documents]
    assert ("istio-edited" in projects) is (change == "edited")
    assert projects.count("istio") == (0 if change in ("edited", "removed") else 2 if change == "added" else 1)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"format": 2, "files": []}',
        b'{"format": 1, "files": {}}',
        b'{"format": 1, "files": [["istio.yaml", "00", {}]]}',
    ],
)
def test_a_damaged_or_foreign_file_is_not_read(
    content: bytes, fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _copy(tmp_path, monkeypatch)
    shipped.GENERATED.write_bytes(content)
    assert shipped.documents() is None
    assert len(registry.builtin_documents()) == 12


def test_an_entry_whose_hash_is_not_its_files_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash is of the bytes: the data of one file under another's name and hash is refused."""
    _copy(tmp_path, monkeypatch)
    generated = json.loads(shipped.GENERATED.read_bytes())
    files = generated["files"]
    files[0][1], files[1][1] = files[1][1], files[0][1]
    shipped.GENERATED.write_text(json.dumps(generated), encoding="utf-8")
    assert shipped.documents() is None


def test_a_missing_file_is_not_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(tmp_path, monkeypatch)
    shipped.GENERATED.unlink()
    assert shipped.documents() is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({1: "a"}, "a key that is not a string"),
        ({"a": datetime.date(2024, 1, 1)}, "a value JSON cannot hold"),
        ({"a": [float("nan")]}, "a float JSON cannot hold"),
        ({"a": {"b": {1, 2}}}, "a value JSON cannot hold"),
    ],
)
def test_data_json_would_not_give_back_is_refused(value: Any, problem: str) -> None:
    """What YAML can say and JSON cannot (an integer key, a date) would be read back changed."""
    with pytest.raises(ValueError, match=problem):
        shipped._check_plain(value, "x.yaml")


def test_the_check_mode_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(tmp_path, monkeypatch)
    monkeypatch.setattr("sys.argv", ["shipped", "--check"])
    assert shipped.main() == 0
    shipped.GENERATED.write_bytes(shipped.GENERATED.read_bytes().replace(b"istio", b"other"))
    assert shipped.main() == 1
    monkeypatch.setattr("sys.argv", ["shipped"])
    assert shipped.main() == 0
    assert shipped.GENERATED.read_bytes() == shipped.generate()
