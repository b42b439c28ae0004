"""Virtualenv and external-Python tasks, offline: venvs with nothing to install, and this interpreter."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pendulum

from airflow.providers.standard.operators.python import (
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonOperator,
    PythonVirtualenvOperator,
)
from airflow.sdk import DAG, task

CACHE = Path(tempfile.gettempdir()) / "updraft-test-venv-cache"


def add(a, b, *, scale, templates_dict=None, ds=None):
    import sys

    # The DAG file's module is registered under its Airflow name, holding the function (pickles resolve).
    registered = [name for name, module in sys.modules.items()
                  if name.startswith("unusual_prefix_") and getattr(module, "add", None) is add]
    return {"sum": (a + b) * scale, "query": templates_dict["query"], "ds": ds, "prefix": sys.prefix,
            "strings": virtualenv_string_args, "registered": registered}  # noqa: F821 (the script defines it)


def choose(options):
    return options[1]


def exit_with(code):
    import sys

    sys.exit(code)


def fail():
    raise ValueError("broken on purpose")


with DAG("virtualenv_tasks", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")) as dag:
    venv_add = PythonVirtualenvOperator(
        task_id="venv_add", python_callable=add, op_args=[1, 2], op_kwargs={"scale": 10},
        templates_dict={"query": "SELECT '{{ ds }}'"}, string_args=["x", "y"], system_site_packages=False,
        requirements="venv_requirements.txt",  # read and rendered as a template file: pip would fail on its name
    )

    @task.virtualenv(serializer="cloudpickle", venv_cache_path=str(CACHE), multiple_outputs=True)
    def cached(value, logical_date=None):
        import cloudpickle  # the task's packages: system_site_packages is the default

        return {"double": value * 2, "year": logical_date.year, "has_cloudpickle": bool(cloudpickle)}

    @task.external_python(python=sys.executable, serializer="dill")
    def external(number, ds=None, logical_date=None):
        import sys

        return [number + 1, ds, logical_date.isoformat(), sys.executable]

    @task.branch_external_python(python=sys.executable)
    def pick(options):
        return options[0]

    @task
    def check(venv, doubled, year, ext):
        assert venv["sum"] == 30 and venv["ds"] == "2024-03-05", venv
        assert venv["query"] == "SELECT '2024-03-05'" and venv["strings"] == ["x", "y"], venv
        assert venv["prefix"] != sys.prefix and venv["registered"] == [add.__module__], venv
        assert (doubled, year) == (42, 2024)
        assert ext[:3] == [8, "2024-03-05", "2024-03-05T00:00:00+00:00"] and ext[3] == sys.executable, ext

    c = cached(21)
    check(venv_add.output, c["double"], c["year"], external(7))

    left, right = (PythonOperator(task_id=name, python_callable=lambda: None) for name in ("left", "right"))
    pick(["left", "right"]) >> [left, right]

    branch_venv = BranchPythonVirtualenvOperator(task_id="branch_venv", python_callable=choose,
                                                 op_args=[["one", "two"]], expect_airflow=False)
    one, two = (PythonOperator(task_id=name, python_callable=lambda: None) for name in ("one", "two"))
    branch_venv >> [one, two]

    ExternalPythonOperator(task_id="skips", python=sys.executable, python_callable=exit_with, op_args=[3],
                           skip_on_exit_code=[3])
    ExternalPythonOperator(task_id="fails", python=sys.executable, python_callable=fail)
