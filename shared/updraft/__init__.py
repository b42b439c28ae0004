"""Updraft: a serverless orchestrator for AWS that runs Airflow DAG files unchanged.

Packages: ``sdk`` (the authoring surface DAG files import), ``timetables``, ``serialization`` (the DAG <-> JSON
contract), ``parsing`` (isolated DAG-file parsing), ``cli``.
"""

__version__ = "0.1.0"
