"""``airflow.example_dags``: the DAG bundle root, so Airflow's example files import their helpers unchanged.

``from airflow.example_dags.plugins.workday import AfterWorkdayTimetable`` finds ``plugins/workday.py`` in the
DAGs folder, where Airflow's example layout has it (see ``updraft.sdk._internal.bundle_root``).
"""

from updraft.sdk._internal.bundle_root import DAGS_FOLDERS

__path__ = DAGS_FOLDERS
