"""Every DAG in examples/dags runs to success through the scheduler and the task runtime."""

from __future__ import annotations

from pathlib import Path

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "dags"


@pytest.mark.slow
def test_every_example_dag_succeeds(tmp_path):
    with mock_aws():
        env = RuntimeEnv(tmp_path, plugins_folder=EXAMPLES.parent / "plugins")
        env.store.set_pool("warehouse", 2)
        dag_ids = env.add_folder(EXAMPLES)
        assert dag_ids
        for dag_id in dag_ids:
            run = env.run(dag_id)
            states = env.states(dag_id, run.run_id)
            assert run.state == "success", (dag_id, states)
            assert states and all(s in ("success", "skipped") for s in states.values()), (dag_id, states)


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
