"""The cyclic garbage collector in the language server, which runs on where a command ends.

Every command runs with the collector off (policylint.entry): a run allocates millions of
short-lived acyclic objects, which it would only scan again and again, and the process ends. The
server is that process too, but it does not end: each update leaves what it replaced (the part's
project and stages, the results its kept tables let go) as garbage held in reference cycles, which
nothing frees; at 10,000 objects 26,000 objects and 3.5 MB more with every edit, for as long as the
editor is open. Turning the collector on is no answer: a full collection visits everything the
server keeps between updates (1.1 million objects at 10,000: 0.6-1.2 s), whenever the allocation
counts say, inside an update or while its diagnostics are sent.

So the server collects once the user paused (`protocol.PREPARE_AFTER` without an edit), in the
analysis thread, never during an analysis. What a whole analysis built is most of what the server
keeps until the next whole analysis (the objects, their kept stages, the navigation's bottom
layer): it is frozen (`gc.freeze`), which no collection visits, and a pause's collection visits
only what the updates since made, a fifth as much. A whole analysis again (the configuration
changed, many files at once) replaces that state: the next pause unfreezes it, collects
everything, and freezes what is left.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.server.analysis import Live


class Collector:
    """Collects the server's garbage when told it is idle (`idle`), freezing what each whole
    analysis built. One per server."""

    def __init__(self) -> None:
        # The analyses whose state is frozen: of which `Live`, how many of its analyses were whole.
        self._frozen: tuple[Live | None, int] = (None, 0)

    def idle(self, live: Live) -> None:
        """Collect, the server's analyses being `live`'s."""
        last, count = self._frozen
        if last is live and live.whole_analyses == count:
            gc.collect()  # what the updates since the whole analysis made and dropped
            return
        if last is not None:
            gc.unfreeze()  # the state the whole analysis before held, replaced since
            gc.collect()
        # The first whole analysis is frozen without a collection (a full one costs what a tenth
        # of that analysis did, while the user may be about to type): its garbage, made while
        # the collector was off, is a few per cent of what it keeps.
        gc.freeze()
        self._frozen = (live, live.whole_analyses)
