"""The ``airflow`` package DAG files import, backed by Updraft (Apache Airflow itself is not installed).

Every module under it is a thin re-export of ``updraft``. Importing it also installs a finder that turns any
``airflow.*`` module Updraft lacks into an ImportError naming the feature, so an unsupported import fails the
file's parse with a clear message instead of producing a DAG that behaves differently from Airflow.
Names resolve lazily: ``import airflow`` must stay cheap because every DAG file pays for it.
"""

# Provider wheels install into airflow/providers/ of their own folders and ship no airflow/__init__.py: as Airflow's
# own package does, this one spans every airflow folder on sys.path (updraft.requirements.dag_packages).
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from updraft.sdk._internal.unsupported import install_finder, module_dir, module_getattr

# The Airflow release whose semantics Updraft follows (schedules, validation, messages).
__version__ = "3.3.2"

install_finder()

_LAZY = {
    "DAG": "updraft.sdk.dag",
    "Asset": "updraft.sdk.assets",
    "Dataset": "updraft.sdk.assets",
    "XComArg": "updraft.sdk.xcom_arg",
    "AirflowException": "updraft.sdk.exceptions",
}

__all__ = ["DAG", "Asset", "Dataset", "XComArg", "__version__"]

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
