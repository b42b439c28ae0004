"""When a stored DAG's first next run must be recomputed.

The parser stores each DAG's first next run so ``due_dags`` can find it without loading the DAG; the
scheduler later advances it. Both compute it with ``updraft.scheduling.run_creation.next_run_info`` so the two
can never disagree about start/end dates or catchup.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from updraft.scheduling.run_creation import time_restriction


def schedule_key(document: dict[str, Any], sdag: Any) -> str:
    """Changes exactly when the first next run could change: the timetable's stored form or the bounds."""
    restriction = time_restriction(sdag)
    body = {
        "timetable": document.get("dag", {}).get("timetable"),
        "earliest": restriction.earliest.isoformat() if restriction.earliest else None,
        "latest": restriction.latest.isoformat() if restriction.latest else None,
        "catchup": restriction.catchup,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:32]
