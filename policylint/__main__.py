from __future__ import annotations

from policylint.entry import main

raise SystemExit(main())
