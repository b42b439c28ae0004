"""``airflow.providers``: Updraft's own providers (``standard``), the environment's installed provider wheels, then
Updraft's built-ins for providers that are not installed (``updraft.requirements.dag_packages`` says why)."""

from updraft.requirements.dag_packages import providers_path

__path__ = providers_path(__path__)
