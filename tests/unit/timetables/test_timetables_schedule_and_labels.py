"""``schedule=`` mapping, UI labels (summary/description), run ids and validation errors."""

from __future__ import annotations

import datetime

import pendulum
import pytest
from dateutil.relativedelta import relativedelta
from timetables_helpers import utc

from updraft.timetables import (
    AirflowTimetableInvalid,
    AssetTriggeredTimetable,
    ContinuousTimetable,
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DagRunType,
    DataInterval,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    EventsTimetable,
    InvalidSchedule,
    MultipleCronTriggerTimetable,
    NullTimetable,
    OnceTimetable,
    create_timetable,
)
from updraft.timetables._cron_description import describe_cron


class Asset:
    def __init__(self, uri: str) -> None:
        self.uri = uri


class AssetAlias:
    def __init__(self, name: str) -> None:
        self.name = name


class AssetAny:
    def __init__(self, *objects) -> None:
        self.objects = list(objects)


class TestCreateTimetable:
    def test_none_once_continuous(self):
        assert create_timetable(None, "UTC") == NullTimetable()
        assert create_timetable("@once", "UTC") == OnceTimetable()
        assert create_timetable("@continuous", "UTC") == ContinuousTimetable()

    @pytest.mark.parametrize("schedule", ["@daily", "0 0 * * 1-5", "@hourly", "*/5 * * * *"])
    def test_cron_strings_become_cron_triggers_in_the_dag_timezone(self, schedule):
        timetable = create_timetable(schedule, pendulum.timezone("Europe/Berlin"))
        assert timetable == CronTriggerTimetable(schedule, timezone="Europe/Berlin")
        assert timetable.interval == datetime.timedelta() and timetable.run_immediately is False

    @pytest.mark.parametrize("delta", [datetime.timedelta(hours=1), relativedelta(months=1)])
    def test_deltas_become_delta_triggers(self, delta):
        assert create_timetable(delta, "UTC") == DeltaTriggerTimetable(delta)

    def test_create_cron_data_intervals_restores_airflow_2_classes(self):
        assert create_timetable("@daily", "UTC", create_cron_data_intervals=True) == CronDataIntervalTimetable(
            "@daily", "UTC"
        )
        delta = datetime.timedelta(days=1)
        assert create_timetable(delta, "UTC", create_cron_data_intervals=True) == DeltaDataIntervalTimetable(delta)

    def test_timezone_defaults_to_utc(self):
        assert create_timetable("@daily").timezone == pendulum.UTC

    def test_timetable_instances_are_used_as_is(self):
        timetable = EventsTimetable([utc(2021, 1, 1)])
        assert create_timetable(timetable, "UTC") is timetable

    def test_asset_lists_become_all_of_conditions(self):
        timetable = create_timetable([Asset("s3://a"), AssetAlias("alias")], "UTC")
        assert isinstance(timetable, AssetTriggeredTimetable)
        assert timetable.asset_condition == {
            "__type": "asset_all",
            "objects": [
                {"__type": "asset", "name": "s3://a", "uri": "s3://a", "group": "asset", "extra": {}},
                {"__type": "asset_alias", "name": "alias", "group": "asset"},
            ],
        }
        assert timetable.summary == "Asset"
        assert timetable.description == "Triggered by assets"
        assert timetable.can_be_scheduled and not timetable.periodic

    def test_single_asset_and_conditions(self):
        assert create_timetable(Asset("s3://a")).asset_condition["__type"] == "asset"
        condition = create_timetable(AssetAny(Asset("s3://a"), Asset("s3://b"))).asset_condition
        assert condition["__type"] == "asset_any" and len(condition["objects"]) == 2

    @pytest.mark.parametrize("schedule", [[Asset("s3://a"), 3], ["@daily"], (datetime.timedelta(1),)])
    def test_collections_of_non_assets_are_rejected(self, schedule):
        with pytest.raises(TypeError, match="should be either assets"):
            create_timetable(schedule, "UTC")

    @pytest.mark.parametrize("schedule", [42, 1.5, {"cron": "@daily"}, object()])
    def test_other_values_are_rejected_with_type_and_value_error(self, schedule):
        with pytest.raises(InvalidSchedule, match="is not a valid schedule") as info:
            create_timetable(schedule, "UTC")
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


class TestSummaryAndDescription:
    @pytest.mark.parametrize(
        ("timetable", "summary", "description"),
        [
            (NullTimetable(), "None", "Never, external triggers only"),
            (OnceTimetable(), "@once", "Once, as soon as possible"),
            (ContinuousTimetable(), "@continuous", "As frequently as possible, but only one run at a time."),
            (CronTriggerTimetable("@daily", timezone="UTC"), "0 0 * * *", "At 00:00"),
            (CronDataIntervalTimetable("30 21 * * 5", "UTC"), "30 21 * * 5", "At 21:30, only on Friday"),
            (
                CronTriggerTimetable("@quarterly", timezone="UTC"),
                "0 0 1 */3 *",
                "At 00:00, on day 1 of the month, every 3 months",
            ),
            (CronTriggerTimetable("@weekly", timezone="UTC"), "0 0 * * 0", "At 00:00, only on Sunday"),
            (CronTriggerTimetable("@annually", timezone="UTC"), "@annually", ""),
            (CronTriggerTimetable("0 0 * * * 30", timezone="UTC"), "0 0 * * * 30", ""),
            (CronTriggerTimetable("not a cron", timezone="UTC"), "not a cron", ""),
            (DeltaDataIntervalTimetable(datetime.timedelta(days=1)), "1 day, 0:00:00", ""),
            (DeltaTriggerTimetable(relativedelta(months=1)), "relativedelta(months=+1)", ""),
        ],
        ids=lambda v: v if isinstance(v, str) else type(v).__name__,
    )
    def test_labels(self, timetable, summary, description):
        assert timetable.summary == summary
        assert timetable.description == description

    @pytest.mark.parametrize(
        ("expression", "description"),
        [
            ("0 0 * * 1-5", "At 00:00, Monday through Friday"),
            ("*/5 * * * *", "Every 5 minutes"),
            ("0 * * * *", "Every hour"),
            ("15 10 * * MON-FRI", "At 10:15, Monday through Friday"),
            ("0 9-17 * * 1-5", "At 0 minutes past the hour, between 09:00 and 17:59, Monday through Friday"),
            ("*/15 9-17 * * *", "Every 15 minutes, between 09:00 and 17:59"),
            ("0 6,12,18 * * *", "At 06:00, 12:00 and 18:00"),
            ("0-10 11 * * *", "Every minute between 11:00 and 11:10"),
            ("23 0-20/2 * * *", "At 23 minutes past the hour, every 2 hours, between 00:00 and 20:59"),
            ("0 4 8-14 * *", "At 04:00, between day 8 and 14 of the month"),
            ("0 0 * * 1,3,5", "At 00:00, only on Monday, Wednesday, and Friday"),
            ("0 12 * JAN,JUN *", "At 12:00, only in January and June"),
            ("0 0 L * *", "At 00:00, on the last day of the month"),
            ("0 0 * * 1#2", "At 00:00, on the second Monday of the month"),
            ("0 3/2 * * *", "Every 2 hours, starting at 03:00"),
            ("0 0 * 3/2 *", "At 00:00, every 2 months, March through December"),
            ("0 0,6-23/2 * * *", "At 00:00 and every 2 hours, 06:00 through 23:59"),
            # Airflow's own fix: a restricted day-of-month OR day-of-week is described as two halves.
            ("0 0 1,15 * 1", "At 00:00, on day 1 and 15 of the month (or) At 00:00, only on Monday"),
        ],
    )
    def test_cron_descriptions_match_cron_descriptor(self, expression, description):
        # Expected strings were produced by cron-descriptor 2.2.1, the package Airflow uses.
        assert describe_cron(expression) == description
        assert CronTriggerTimetable(expression, timezone="UTC").description == description

    def test_multiple_cron_description_joins_members(self):
        timetable = MultipleCronTriggerTimetable("@daily", "@hourly", timezone="UTC")
        assert timetable.description == "At 00:00, Every hour"


class TestGenerateRunId:
    AT = utc(2021, 1, 4, 10, 0, 0)

    @pytest.mark.parametrize(
        ("run_type", "expected"),
        [
            (DagRunType.SCHEDULED, "scheduled__2021-01-04T10:00:00+00:00"),
            (DagRunType.MANUAL, "manual__2021-01-04T10:00:00+00:00"),
            (DagRunType.BACKFILL_JOB, "backfill__2021-01-04T10:00:00+00:00"),
            (DagRunType.ASSET_TRIGGERED, "asset_triggered__2021-01-04T10:00:00+00:00"),
            ("scheduled", "scheduled__2021-01-04T10:00:00+00:00"),
        ],
    )
    def test_run_type_and_run_after(self, run_type, expected):
        for timetable in (
            CronTriggerTimetable("@daily", timezone="UTC"),
            CronDataIntervalTimetable("@daily", "UTC"),
            NullTimetable(),
            AssetTriggeredTimetable([Asset("s3://a")]),
        ):
            run_id = timetable.generate_run_id(
                run_type=run_type,
                run_after=self.AT,
                data_interval=DataInterval(utc(2021, 1, 3), utc(2021, 1, 4)),
            )
            assert run_id == expected

    def test_run_after_is_used_not_the_logical_date(self):
        timetable = CronDataIntervalTimetable("@daily", "UTC")
        interval = DataInterval(utc(2021, 1, 3), utc(2021, 1, 4))
        run_id = timetable.generate_run_id(
            run_type=DagRunType.SCHEDULED, run_after=interval.end, data_interval=interval
        )
        assert run_id == "scheduled__2021-01-04T00:00:00+00:00"

    def test_microseconds_and_offsets_are_kept(self):
        at = pendulum.datetime(2021, 1, 4, 10, 0, 0, 123456, tz="Europe/Berlin")
        run_id = NullTimetable().generate_run_id(run_type=DagRunType.MANUAL, run_after=at, data_interval=None)
        assert run_id == "manual__2021-01-04T10:00:00.123456+01:00"

    def test_custom_override_as_the_howto_writes_it(self):
        # The how-to's generate_run_id compares run_type with DagRunType, imported from Airflow's path.
        from airflow.timetables.base import Timetable
        from airflow.utils.types import DagRunType as AirflowDagRunType

        class HumanFriendly(Timetable):
            def generate_run_id(self, *, run_type, run_after, data_interval, **extra):
                if run_type == AirflowDagRunType.SCHEDULED and data_interval:
                    return data_interval.end.format("YYYY-MM-DD dddd")
                return super().generate_run_id(run_type=run_type, run_after=run_after,
                                               data_interval=data_interval, **extra)

        interval = DataInterval(utc(2021, 1, 3), utc(2021, 1, 4))
        timetable = HumanFriendly()
        assert AirflowDagRunType is DagRunType
        assert timetable.generate_run_id(run_type=DagRunType.SCHEDULED, run_after=interval.end,
                                         data_interval=interval) == "2021-01-04 Monday"
        assert timetable.generate_run_id(run_type=DagRunType.MANUAL, run_after=interval.end,
                                         data_interval=interval) == "manual__2021-01-04T00:00:00+00:00"

    def test_run_type_from_run_id(self):
        assert DagRunType.from_run_id("scheduled__2021-01-04T00:00:00+00:00") is DagRunType.SCHEDULED
        assert DagRunType.from_run_id("my own id") is DagRunType.MANUAL


class TestValidate:
    @pytest.mark.parametrize("expression", ["not a cron", "61 * * * *", "* * *", "0 0 32 * *"])
    def test_bad_cron_names_the_expression(self, expression):
        timetable = CronTriggerTimetable(expression, timezone="UTC")
        with pytest.raises(AirflowTimetableInvalid, match="Invalid cron expression") as info:
            timetable.validate()
        assert repr(expression) in str(info.value)

    def test_bad_member_of_multiple_cron(self):
        with pytest.raises(AirflowTimetableInvalid, match="'0 25 \\* \\* \\*'"):
            MultipleCronTriggerTimetable("@daily", "0 25 * * *", timezone="UTC").validate()

    @pytest.mark.parametrize(
        "delta", [datetime.timedelta(0), datetime.timedelta(hours=-1), relativedelta(months=-1)], ids=repr
    )
    @pytest.mark.parametrize("cls", [DeltaDataIntervalTimetable, DeltaTriggerTimetable])
    def test_non_positive_delta(self, cls, delta):
        with pytest.raises(AirflowTimetableInvalid, match="schedule interval must be positive, not"):
            cls(delta).validate()

    @pytest.mark.parametrize(
        "timetable",
        [
            CronTriggerTimetable("@daily", timezone="UTC"),
            CronDataIntervalTimetable("0 0 * * 1-5", "UTC"),
            DeltaTriggerTimetable(datetime.timedelta(hours=1)),
            NullTimetable(),
            EventsTimetable([]),
        ],
        ids=repr,
    )
    def test_valid_timetables_pass(self, timetable):
        timetable.validate()

    def test_cron_trigger_needs_a_timezone(self):
        with pytest.raises(TypeError, match="timezone"):
            CronTriggerTimetable("@daily")

    def test_unknown_timezone(self):
        with pytest.raises(Exception, match="Nowhere/Special"):
            CronTriggerTimetable("@daily", timezone="Nowhere/Special")

    def test_is_airflows_exception_class(self):
        import airflow.exceptions

        assert AirflowTimetableInvalid is airflow.exceptions.AirflowTimetableInvalid
        assert issubclass(AirflowTimetableInvalid, airflow.exceptions.AirflowException)
