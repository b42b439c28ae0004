"""The real amazon provider's deferrable sensors run their own triggers (issue 31): ``SqsSensor(deferrable=True)``
defers with the provider's ``SqsSensorTrigger``, which Updraft's trigger check runs on aiobotocore (amazon's
"aiobotocore" extra, installable because Updraft keeps botocore in aiobotocore's range), in a child with the
DAG-code role's credentials; the try resumes with the message, as in Airflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.provider_packages import REQUIREMENTS, installed_providers

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]


def test_a_deferrable_sqs_sensor_resumes_with_the_message_its_provider_trigger_received(tmp_path: Path) -> None:
    installed_providers()
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    env.pop("AWS_ENDPOINT_URL", None)
    done = subprocess.run([*UPDRAFT, "dags", "test", "amazon_deferrable", "2024-03-05", "--dags-folder",
                           str(HERE / "amazon_deferrable_dags"), "--requirements", str(REQUIREMENTS), "--real-waits",
                           "--log-folder", str(tmp_path), "-o", "json"], check=False, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.stdout, done.stderr
    result = json.loads(done.stdout)
    table = {label: (ti["state"], ti["try_number"]) for label, ti in result["tasks"].items()}
    assert table == {"create_queue": ("success", 1), "publish": ("success", 1), "wait": ("success", 1),
                     "received": ("success", 1)}, done.stderr[-3000:]
    log = (tmp_path / "amazon_deferrable" / "manual__2024-03-05T00:00:00+00:00" / "received" / "-1" / "1.log")
    assert "RECEIVED deferred 2024-03-05" in log.read_text()
