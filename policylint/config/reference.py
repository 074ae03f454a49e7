"""The generated documentation of the configuration file: the key table in README
"Configuration" and `schemas/policylint-config.schema.json`, both from the settings
(policylint.settings) through the models (tests/config/test_config.py fails when either is stale).

    python -m policylint.config.reference --readme   # rewrite the README block
    python -m policylint.config.reference --schema   # rewrite the schema file
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

README_BEGIN = "<!-- config-reference:begin (generated: python -m policylint.config.reference --readme) -->"
README_END = "<!-- config-reference:end -->"
README_EXAMPLE = "<!-- config-example -->"
_ROOT = Path(__file__).resolve().parent.parent.parent


def _render(annotation: Any) -> str:
    """A type annotation of the models in words, for the README table."""
    import types
    import typing

    from pydantic import BaseModel

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        bounds = [f" ≥ {m.ge}" for m in annotation.__metadata__ if getattr(m, "ge", None) is not None]
        return _render(args[0]) + "".join(bounds)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_render(args[0])}s"
    if origin is dict:
        return f"mapping: {_render(args[0])} → {_render(args[1])}"
    if origin in (typing.Union, types.UnionType):
        kept = [_render(a) for a in args if a is not type(None)]
        return " or ".join(kept) + (" or null" if type(None) in args else "")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "{" + ", ".join(f"`{f.alias or n}`" for n, f in annotation.model_fields.items()) + "}"
    names = {str: "string", int: "integer", bool: "boolean"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _type(info: Any) -> str:
    annotation = info.annotation
    if info.metadata:  # `Annotated[int, Field(ge=0)]`: pydantic moves the constraints here
        bounds = [f" ≥ {m.ge}" for m in info.metadata if getattr(m, "ge", None) is not None]
        return _render(annotation) + "".join(bounds)
    return _render(annotation)


def key_reference() -> str:
    """The Markdown table of every key: name, type, default, the flag that overrides it, whether
    a change to it can loosen the gate (README "Security"), meaning."""
    from policylint.config.model import Config
    from policylint.settings import Repository, keyed

    rows = ["| key | type | default | flag | gated | meaning |", "|---|---|---|---|---|---|"]
    for s in keyed():
        info = Config.model_fields[str(s.key).replace("-", "_")]
        default = info.get_default(call_default_factory=True)
        meaning = (info.description or "").replace("|", "\\|")
        flag = ", ".join(f"`{f}`" for f in s.flag if f.startswith("--")) if s.flag else "—"
        if s.key == "paths":
            flag = "`PATHS`"  # the arguments of `check`, `explain` and `graph`; `diff --path`
        gated = "yes" if s.trust is Repository.GATED else "no"
        rows.append(f"| `{s.key}` | {_type(info)} | `{json.dumps(default)}` | {flag} | {gated} | {meaning} |")
    return "\n".join(rows) + "\n"


def schema_text() -> str:
    from policylint.config.model import json_schema

    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if "--schema" in argv:
        (_ROOT / "schemas" / "policylint-config.schema.json").write_text(schema_text(), encoding="utf-8")
    if "--readme" in argv:
        readme = _ROOT / "README.md"
        text = readme.read_text(encoding="utf-8")
        head, rest = text.split(README_BEGIN, 1)
        _, tail = rest.split(README_END, 1)
        readme.write_text(f"{head}{README_BEGIN}\n{key_reference()}{README_END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
