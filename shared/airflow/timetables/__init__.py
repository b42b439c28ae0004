"""``airflow.timetables`` for DAG files and plugins written for Airflow; the code lives in ``updraft.timetables``."""
