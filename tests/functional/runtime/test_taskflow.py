"""TaskFlow and classic operators run for real: XCom passing, multiple_outputs, ``.output``, context kwargs."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def test_taskflow_values_flow_through_xcom(env):
    env.add("flow", """
    @dag(schedule=None, start_date=START)
    def flow():
        @task
        def produce():
            return {"a": 1, "b": [1, 2]}

        @task(multiple_outputs=True)
        def split(d):
            return {"x": d["a"], "y": sum(d["b"])}

        @task
        def total(x, y, ti=None):
            return x + y + ti.xcom_pull(task_ids="split", key="x")

        s = split(produce())
        total(s["x"], s["y"])

    flow()
    """)
    run = env.run("flow")
    assert run.state == "success", env.states("flow", run.run_id)
    assert env.xcom("flow", run.run_id, "produce") == {"a": 1, "b": [1, 2]}
    assert env.xcom("flow", run.run_id, "split", "x") == 1
    assert env.xcom("flow", run.run_id, "split", "y") == 3
    assert env.xcom("flow", run.run_id, "split") == {"x": 1, "y": 3}
    assert env.xcom("flow", run.run_id, "total") == 5
