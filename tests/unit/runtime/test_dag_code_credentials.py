"""The DAG-code role's credentials: one AssumeRole per process until they come near expiry."""

from __future__ import annotations

import datetime as dt

from updraft.config import UpdraftConfig
from updraft.runtime.dag_code_credentials import REFRESH_BEFORE, DagCodeCredentials

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


class FakeSts:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def assume_role(self, **kwargs):
        self.calls.append(kwargs)
        n = len(self.calls)
        return {"Credentials": {"AccessKeyId": f"ASIA{n}", "SecretAccessKey": f"s{n}", "SessionToken": f"t{n}",
                                "Expiration": T0 + dt.timedelta(hours=n)}}


def test_credentials_are_cached_until_near_expiry_and_the_session_is_tagged() -> None:
    sts, now = FakeSts(), [T0]
    creds = DagCodeCredentials(lambda: sts, "arn:aws:iam::123456789012:role/dag-code", now_fn=lambda: now[0])
    first = creds.environment()
    now[0] = T0 + dt.timedelta(hours=1) - REFRESH_BEFORE - dt.timedelta(seconds=1)
    assert creds.environment() == first == {"AWS_ACCESS_KEY_ID": "ASIA1", "AWS_SECRET_ACCESS_KEY": "s1",
                                            "AWS_SESSION_TOKEN": "t1"}
    now[0] += dt.timedelta(seconds=2)  # within REFRESH_BEFORE of expiry: a new session
    assert creds.environment()["AWS_ACCESS_KEY_ID"] == "ASIA2" and creds.assumed == 2
    assert sts.calls[0]["RoleArn"].endswith(":role/dag-code") and sts.calls[0]["DurationSeconds"] == 3600
    assert sts.calls[0]["Tags"] == [{"Key": "updraft:purpose", "Value": "dag-code"}]


def test_the_role_is_a_setting() -> None:
    config = UpdraftConfig.from_env({"UPDRAFT_DAG_CODE_ROLE": "arn:aws:iam::1:role/x"})
    assert config.dag_code_role == "arn:aws:iam::1:role/x"
    assert UpdraftConfig.from_env(config.to_env()).dag_code_role == config.dag_code_role
