"""A try's operator extra links, stored once the try ends, as Airflow 3's task runner does in ``finalize``.

For every link of the task (``sdk.operator_link.task_links``: the operator's own, a plugin's for its class, the
plugins' global ones), ``get_link(operator=task, ti_key=ti)`` is called in the try, with the try's context current
(a provider's link reads what its operator persisted, ``XCom.get_value(ti_key=..., key=...)``), and its answer is
pushed as the try's own XCom under the link's ``xcom_key``. The API's ``links`` route answers those XComs.

Whatever the try's outcome (success, failure, skip, deferral, reschedule), as Airflow's ``finalize`` runs for all
of them: a failed job's console page is the one a user wants. A link that raises is logged in the try's log and
the others are still stored; it never changes the try's outcome.
"""

from __future__ import annotations

import logging
from typing import Any

from updraft.sdk.context import Context, set_current_context
from updraft.sdk.operator_link import task_links

log = logging.getLogger("airflow.task")


def persist_links(task: Any, ti: Any, context: Context) -> None:
    """Compute and store each of ``task``'s links for the try ``ti`` (its XCom client pushes them)."""
    try:
        links = task_links(task)
    except Exception:
        log.exception("Failed to read the operator extra links of task %s", task.task_id)
        return
    if not links:
        return
    with set_current_context(context):
        for name, link in links.items():
            try:
                url = link.get_link(operator=task, ti_key=ti)
                ti.xcom_client.push(link.xcom_key, url)
            except Exception:
                log.exception("Failed to push an xcom for task operator extra link %r (xcom_key %r)", name,
                              link.xcom_key)
