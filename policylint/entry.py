"""Console entry point. Kept tiny so that `policylint --version` imports nothing heavy."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from policylint import __version__


def main(argv: Sequence[str] | None = None) -> int:
    code = _main(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        # The command ends here (console script, `python -m policylint`). What the run built
        # is now garbage held in reference cycles (index, topology, simulation); the collector's
        # last pass at interpreter exit would visit and free it object by object: 0.7 s after a
        # 10k-object run. That pass skips frozen objects, and the OS takes the memory back at once.
        import gc

        gc.freeze()
    return code


def _main(args: list[str]) -> int:
    if args == ["--version"]:
        # Answer without importing anything heavy: pre-commit and CI call this often.
        print(f"policylint, version {__version__}")
        return 0
    try:
        from policylint.cli import cli

        cli.main(args=args, prog_name="policylint", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except Exception as exc:  # a bug in policylint, not a problem with the input
        if os.environ.get("POLICYLINT_DEBUG"):
            raise
        print(f"policylint: internal error: {type(exc).__name__}: {exc} (set POLICYLINT_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2
    return 0
