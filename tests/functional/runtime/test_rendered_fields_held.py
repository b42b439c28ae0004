"""A try's rendered fields on the store: a short try's ride its end write (no write of their own, and the child
does not wait for one before ``execute``); a try running past ``HOLD_S`` shows them while it runs; a deferral's
write carries them as an end's does; a task with ``overwrite_rtif_after_execution`` (``@task.bash``) ends with
the fields its ``execute`` set, as Airflow's finalize records them. Tries run in their child process as the worker Lambda
runs them."""

from __future__ import annotations

from typing import Any

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.model.records import TIKey
from updraft.runtime import rendered_fields

pytestmark = pytest.mark.slow

DAG = """
import time
from airflow.providers.standard.triggers.temporal import TimeDeltaTrigger
from airflow.sdk import BaseOperator


class Waits(BaseOperator):
    template_fields = ("message",)

    def __init__(self, message, **kwargs):
        super().__init__(**kwargs)
        self.message = message

    def execute(self, context):
        self.defer(trigger=TimeDeltaTrigger(datetime.timedelta(hours=1)), method_name="done")

    def done(self, context, event=None):
        return self.message


with DAG("held", schedule=None, start_date=START):
    BashOperator(task_id="short", bash_command="echo {{ ds }}")
    PythonOperator(task_id="long", python_callable=lambda n: time.sleep(3.5), op_kwargs={"n": "{{ ds }}"})
    Waits(task_id="waits", message="waits for {{ ds }}")

    @task.bash
    def command(n):
        return "echo " + n + " {{ ds }}"

    command("at")
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    # A short try (a bash process) must end within the hold even on a loaded machine, and the long one run well
    # past it: 2 s and 3.5 s.
    monkeypatch.setattr(rendered_fields, "HOLD_S", 2.0)
    with mock_aws():
        runtime = RuntimeEnv(tmp_path)
        runtime.add("held", DAG)
        writes: list[tuple[str, str | None]] = []  # (task, the instance's state as its fields were written)
        original = runtime.store.set_rendered_fields

        def recorded(key: TIKey, **kwargs: Any) -> bool:
            ti = runtime.store.get_ti(key)
            writes.append((key.task_id, ti.state and ti.state.value if ti else None))
            return original(key, **kwargs)

        monkeypatch.setattr(runtime.store, "set_rendered_fields", recorded)
        runtime.writes = writes  # type: ignore[attr-defined]
        yield runtime


def test_each_try_ends_with_its_fields_written_by_the_end_or_once_while_it_ran(env) -> None:
    run = env.trigger("held")
    env.scheduler.run_pass()
    env.drain()
    ds = run.logical_date.strftime("%Y-%m-%d")
    assert env.states("held", run.run_id) == {"short": "success", "long": "success", "waits": "deferred",
                                              "command": "success"}
    short, long, waits = (env.ti("held", run.run_id, task) for task in ("short", "long", "waits"))
    assert short.rendered_fields["bash_command"] == f"echo {ds}"
    assert long.rendered_fields["op_kwargs"] == {"n": ds}
    assert waits.rendered_fields == {"message": f"waits for {ds}"}
    # Rendered again as it ended (Airflow's overwrite_rtif_after_execution): the command execute built.
    assert env.ti("held", run.run_id, "command").rendered_fields["bash_command"] == f"echo at {ds}"
    # The short try's fields came with its end, the deferred one's with its deferral; the long one's were written
    # once, while it ran.
    assert sorted(env.writes) == [("long", "running")]
