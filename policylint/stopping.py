"""Whether a stop signal ends the process at once (policylint.entry): set by a command that cannot
unwind from one. Its own module, importing nothing, so that a command sets it without importing
the entry point (which imports every command)."""

from __future__ import annotations

# The language server reads its standard input in a worker thread, and on the way out asyncio's
# runner and pygls wait for that thread, blocked in a read that only the client closing the pipe
# ends: a signal raised in the main thread would leave the server running for as long as the
# editor keeps the pipe open. It writes nothing a sudden end can leave half done (its cache
# entries are written whole, then renamed).
at_once = False


def stop_at_once() -> None:
    """From now on a stop signal ends the process at once, with 128 + its number."""
    global at_once
    at_once = True
