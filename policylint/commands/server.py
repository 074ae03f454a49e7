"""`policylint server`: start the language server (policylint.server), or say how to install it."""

from __future__ import annotations

from policylint.commands import EXIT_OK, EXIT_USAGE, error


def run_server() -> int:
    try:
        # pygls is the `server` extra: the hook and the Action never pay for it.
        from policylint.server.protocol import serve
    except ImportError as exc:
        error(f"the language server needs pygls ({exc}): pip install 'policylint[server]'")
        return EXIT_USAGE
    from policylint.stopping import stop_at_once

    stop_at_once()  # SIGTERM from the editor or a supervisor ends the server (policylint.entry)
    serve()
    return EXIT_OK
