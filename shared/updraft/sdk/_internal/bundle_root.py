"""Where ``airflow.example_dags`` points: the DAGs folder(s) this process imports DAG files from.

Airflow's example files import their helpers from their own package (``from airflow.example_dags.plugins.workday
import AfterWorkdayTimetable``). Airflow ships them inside its wheel; in Updraft the examples are files of the DAG
bundle, so that package is the bundle root: ``airflow.example_dags.plugins.workday`` is
``<DAGs folder>/plugins/workday.py``, exactly where Airflow's layout puts it beside the example files. The list below
is the package's ``__path__`` itself, so a folder registered after the package was imported is searched too.

Stdlib-only: imported with ``airflow.example_dags`` from DAG files.
"""

from __future__ import annotations

DAGS_FOLDERS: list[str] = []
"""``airflow.example_dags.__path__``: every DAGs folder this process has imported DAG files from."""


def use_dags_folder(folder: str) -> None:
    """Make ``folder`` (a DAGs folder about to be imported from) the root of ``airflow.example_dags``."""
    if folder and folder not in DAGS_FOLDERS:
        DAGS_FOLDERS.append(folder)
