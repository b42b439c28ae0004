"""``get_parsing_context()``: lets a dynamic DAG file build only the DAG a task run needs.

Airflow sets the DAG and task being run in the environment of the process that re-parses the file for a task;
a file may then skip generating its other DAGs. When nothing is set (every full parse), both are None and the
file must build everything, which is always the correct answer.
"""

from __future__ import annotations

import os
from typing import NamedTuple

PARSING_CONTEXT_DAG_ID = "_AIRFLOW_PARSING_CONTEXT_DAG_ID"
PARSING_CONTEXT_TASK_ID = "_AIRFLOW_PARSING_CONTEXT_TASK_ID"


class AirflowParsingContext(NamedTuple):
    dag_id: str | None
    task_id: str | None


def get_parsing_context() -> AirflowParsingContext:
    return AirflowParsingContext(
        dag_id=os.environ.get(PARSING_CONTEXT_DAG_ID),
        task_id=os.environ.get(PARSING_CONTEXT_TASK_ID),
    )
