"""``airflow.version``: the Airflow release whose semantics Updraft follows."""

from airflow import __version__

version = __version__

__all__ = ["__version__", "version"]
