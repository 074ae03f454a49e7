"""What both atheris harnesses share: replaying saved inputs, and running atheris when it is there."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path


def replay(paths: list[str], one_input: Callable[[bytes], None], *, show_input: bool = False) -> int:
    """Run the checks on saved inputs (crash files, corpus entries); 1 if any fails."""
    failed = 0
    for path in paths:
        data = Path(path).read_bytes()
        try:
            one_input(data)
        except Exception:
            failed += 1
            if show_input:
                print(f"{path}: FAILED on {data!r}", file=sys.stderr)
            traceback.print_exc()
        else:
            print(f"{path}: ok")
    return 1 if failed else 0


def run(script: str, one_input: Callable[[bytes], None], modules: tuple[str, ...], *, show_input: bool = False) -> int:
    """atheris over `one_input` with `modules` instrumented; without atheris, replay the arguments."""
    try:
        import atheris  # type: ignore[import-not-found]
    except ImportError:
        if len(sys.argv) > 1 and all(Path(a).is_file() for a in sys.argv[1:]):
            return replay(sys.argv[1:], one_input, show_input=show_input)
        print(f"atheris is not installed (pip install atheris); to replay inputs: python {script} FILE...", file=sys.stderr)
        return 2
    import importlib

    with atheris.instrument_imports():
        for module in modules:
            importlib.import_module(module)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
    return 0
