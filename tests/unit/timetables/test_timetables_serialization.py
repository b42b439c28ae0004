"""The serialized-DAG contract: ``{"__type": <Airflow class path>, "__var": ...}`` round-trips every timetable."""

from __future__ import annotations

import datetime
import json

import pendulum
import pytest
from dateutil.relativedelta import FR, relativedelta
from timetables_helpers import utc

from updraft.timetables import (
    AssetTriggeredTimetable,
    ContinuousTimetable,
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    EventsTimetable,
    MultipleCronTriggerTimetable,
    NullTimetable,
    OnceTimetable,
    Timetable,
    TimetableNotRegistered,
    decode_timetable,
    encode_timetable,
    next_dagruns,
)
from updraft.timetables.assets import AssetOrTimeSchedule
from updraft.timetables.partitioned import CronPartitionTimetable, PartitionedAssetTimetable, PartitionedAtRuntime
from updraft.timetables.partitions.temporal import StartOfDayMapper, StartOfHourMapper
from updraft.timetables.registry import BUILTIN_TIMETABLES


class FakeAsset:
    def __init__(self, uri: str, name: str | None = None) -> None:
        self.uri = uri
        self.name = name


BUILTINS = [
    NullTimetable(),
    OnceTimetable(),
    ContinuousTimetable(),
    AssetTriggeredTimetable([FakeAsset("s3://bucket/a"), FakeAsset("s3://bucket/b", name="b")]),
    CronDataIntervalTimetable("@daily", "Europe/Berlin"),
    CronDataIntervalTimetable("0 6 * * 1-5", pendulum.FixedTimezone(3600)),
    CronTriggerTimetable("0 0 * * 1-5", timezone="UTC"),
    CronTriggerTimetable(
        "*/15 * * * *",
        timezone="America/New_York",
        interval=relativedelta(hours=1),
        run_immediately=datetime.timedelta(minutes=3),
    ),
    CronTriggerTimetable("@hourly", timezone="UTC", run_immediately=True),
    DeltaDataIntervalTimetable(datetime.timedelta(hours=6)),
    DeltaDataIntervalTimetable(relativedelta(months=1, weekday=FR(-1))),
    DeltaTriggerTimetable(datetime.timedelta(days=1), interval=datetime.timedelta(hours=3)),
    DeltaTriggerTimetable(relativedelta(weeks=1)),
    EventsTimetable([utc(2021, 3, 1), utc(2021, 1, 1, 12, 30, 0, 5)], restrict_to_events=True),
    EventsTimetable([pendulum.datetime(2021, 1, 1, tz="Europe/Berlin")], description="Kick-off"),
    MultipleCronTriggerTimetable("0 0 * * *", "0 12 * * 1-5", timezone="Asia/Kolkata"),
    AssetOrTimeSchedule(timetable=CronTriggerTimetable("@daily", timezone="UTC"), assets=[FakeAsset("s3://b/a")]),
    CronPartitionTimetable("15 * * * *", timezone="Asia/Taipei", run_offset=-1, key_format="%Y-%m-%dT%H"),
    PartitionedAssetTimetable(assets=FakeAsset("s3://b/a"), default_partition_mapper=StartOfHourMapper(),
                              partition_mapper_config={FakeAsset("s3://b/c", name="c"): StartOfDayMapper()}),
    PartitionedAtRuntime(),
]


def through_json(data):
    return json.loads(json.dumps(data))


@pytest.mark.parametrize("timetable", BUILTINS, ids=repr)
def test_round_trip_is_equal(timetable):
    encoded = through_json(encode_timetable(timetable))
    decoded = decode_timetable(encoded)
    assert type(decoded) is type(timetable)
    assert decoded == timetable
    assert decoded.summary == timetable.summary
    assert decoded.description == timetable.description
    assert encode_timetable(decoded) == encoded


@pytest.mark.parametrize("timetable", BUILTINS, ids=repr)
def test_round_trip_schedules_identically(timetable):
    decoded = decode_timetable(through_json(encode_timetable(timetable)))
    kwargs = {"start_date": utc(2021, 1, 1), "end_date": None, "catchup": True, "n": 5, "now": utc(2021, 6, 1)}
    assert next_dagruns(decoded, **kwargs) == next_dagruns(timetable, **kwargs)


def test_every_builtin_is_covered():
    assert {type(t) for t in BUILTINS} == set(BUILTIN_TIMETABLES.values())


@pytest.mark.parametrize(
    ("timetable", "expected"),
    [
        (NullTimetable(), {"__type": "airflow.timetables.simple.NullTimetable", "__var": {}}),
        (
            CronDataIntervalTimetable("@daily", "UTC"),
            {
                "__type": "airflow.timetables.interval.CronDataIntervalTimetable",
                "__var": {"expression": "0 0 * * *", "timezone": "UTC"},
            },
        ),
        (
            CronTriggerTimetable("0 2 * * *", timezone="Europe/Berlin", interval=datetime.timedelta(hours=1)),
            {
                "__type": "airflow.timetables.trigger.CronTriggerTimetable",
                "__var": {
                    "expression": "0 2 * * *",
                    "timezone": "Europe/Berlin",
                    "interval": 3600.0,
                    "run_immediately": False,
                },
            },
        ),
        (
            DeltaDataIntervalTimetable(relativedelta(months=1, weekday=FR(-1))),
            {
                "__type": "airflow.timetables.interval.DeltaDataIntervalTimetable",
                "__var": {"delta": {"months": 1, "weekday": [4, -1]}},
            },
        ),
        (
            DeltaTriggerTimetable(datetime.timedelta(minutes=30)),
            {
                "__type": "airflow.timetables.trigger.DeltaTriggerTimetable",
                "__var": {"delta": 1800.0, "interval": 0.0},
            },
        ),
        (
            CronDataIntervalTimetable("@daily", pendulum.FixedTimezone(-7200)),
            {
                "__type": "airflow.timetables.interval.CronDataIntervalTimetable",
                "__var": {"expression": "0 0 * * *", "timezone": -7200},
            },
        ),
        (
            EventsTimetable([utc(2021, 1, 1)]),
            {
                "__type": "airflow.timetables.events.EventsTimetable",
                "__var": {
                    "event_dates": ["2021-01-01T00:00:00+00:00"],
                    "restrict_to_events": False,
                    "description": None,
                },
            },
        ),
        (
            AssetTriggeredTimetable([FakeAsset("s3://bucket/a")]),
            {
                "__type": "airflow.timetables.simple.AssetTriggeredTimetable",
                "__var": {
                    "asset_condition": {
                        "__type": "asset_all",
                        "objects": [
                            {
                                "__type": "asset",
                                "name": "s3://bucket/a",
                                "uri": "s3://bucket/a",
                                "group": "asset",
                                "extra": {},
                            }
                        ],
                    }
                },
            },
        ),
    ],
    ids=lambda v: repr(v)[:60],
)
def test_encoded_form_matches_airflow(timetable, expected):
    assert encode_timetable(timetable) == expected


def test_decodes_airflow_task_sdk_class_paths():
    decoded = decode_timetable(
        {
            "__type": "airflow.sdk.definitions.timetables.trigger.CronTriggerTimetable",
            "__var": {"expression": "0 0 * * *", "timezone": "UTC", "interval": 0.0},
        }
    )
    assert decoded == CronTriggerTimetable("@daily", timezone="UTC")


def test_run_immediately_defaults_when_absent_from_older_payloads():
    decoded = decode_timetable(
        {
            "__type": "airflow.timetables.trigger.CronTriggerTimetable",
            "__var": {"expression": "0 0 * * *", "timezone": "UTC", "interval": 0.0},
        }
    )
    assert decoded.run_immediately is False


class TestCustomTimetables:
    def test_registered_plugin_timetables_round_trip(self, workday_module):
        after = workday_module.AfterWorkdayTimetable()
        encoded = encode_timetable(after)
        assert encoded == {"__type": "workday.AfterWorkdayTimetable", "__var": {}}
        assert type(decode_timetable(through_json(encoded))) is workday_module.AfterWorkdayTimetable

        sometime = workday_module.SometimeAfterWorkdayTimetable(pendulum.Time(8))
        encoded = encode_timetable(sometime)
        assert encoded == {
            "__type": "workday.SometimeAfterWorkdayTimetable",
            "__var": {"schedule_at": "08:00:00"},
        }
        decoded = decode_timetable(through_json(encoded))
        assert decoded.summary == sometime.summary == "after each workday, at 08:00:00"
        assert decoded.description == "Schedule: after each workday, at 08:00:00"

    def test_sometime_after_workday_runs_at_the_scheduled_time(self, workday_module):
        timetable = workday_module.SometimeAfterWorkdayTimetable(pendulum.Time(8))
        runs = next_dagruns(timetable, start_date=utc(2021, 1, 1), end_date=None, catchup=True, n=2)
        assert [(r.data_interval.start, r.run_after) for r in runs] == [
            (utc(2021, 1, 1), utc(2021, 1, 2, 8)),
            (utc(2021, 1, 4), utc(2021, 1, 5, 8)),
        ]

    def test_unregistered_custom_timetable_fails_decode_with_airflows_message(self):
        with pytest.raises(TimetableNotRegistered) as info:
            decode_timetable({"__type": "my_company.timetables.Unregistered", "__var": {}})
        assert str(info.value) == (
            "Timetable class 'my_company.timetables.Unregistered' is not registered or you have a top level "
            "database access that disrupted the session. Please check the airflow best practices documentation."
        )
        assert isinstance(info.value, ValueError)

    def test_unregistered_custom_timetable_cannot_be_encoded(self):
        class Unregistered(Timetable):
            pass

        with pytest.raises(TimetableNotRegistered, match="is not registered"):
            encode_timetable(Unregistered())

    def test_subclass_of_builtin_is_custom(self):
        class MyCron(CronTriggerTimetable):
            pass

        with pytest.raises(TimetableNotRegistered):
            encode_timetable(MyCron("@daily", timezone="UTC"))

    def test_unknown_airflow_builtin_is_not_imported_by_name(self):
        with pytest.raises(TimetableNotRegistered):
            decode_timetable({"__type": "airflow.timetables.assets.PartitionedAssetTimetable", "__var": {}})

    def test_malformed_payload(self):
        with pytest.raises(ValueError, match="not a serialized timetable"):
            decode_timetable({"expression": "@daily"})

    def test_type_name(self, workday_module):
        assert CronTriggerTimetable("@daily", timezone="UTC").type_name == "CronTriggerTimetable"
        assert workday_module.AfterWorkdayTimetable().type_name == "workday.AfterWorkdayTimetable"
