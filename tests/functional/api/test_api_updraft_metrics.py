"""``GET /api/updraft/metrics``: local mode's metrics file read back; on AWS, where the metrics are instead."""

from __future__ import annotations

from updraft.metrics.airflow import AirflowMetrics
from updraft.metrics.emf import EmfWriter, FileLines


def test_without_a_metrics_file_the_answer_points_at_cloudwatch(api) -> None:
    answer = api.get("/api/updraft/metrics")
    assert answer.status == 200
    assert answer.body == {"source": "cloudwatch", "namespace": "Updraft", "datapoints": [], "total_entries": 0}


def test_the_file_s_points_newest_first_filtered_and_limited(api, tmp_path, monkeypatch) -> None:
    path = tmp_path / "local.emf"
    monkeypatch.setenv("UPDRAFT_METRICS_FILE", str(path))
    monkeypatch.setattr("updraft.services._shared", None)
    metrics = AirflowMetrics(EmfWriter("Updraft", FileLines(path)))
    for pool, slots in (("default_pool", 128), ("etl", 4), ("default_pool", 127)):
        metrics.gauge("pool.open_slots", slots, pool_name=pool)
    metrics.incr("scheduler_heartbeat")
    answer = api.get("/api/updraft/metrics", query=[("name", "pool.open_slots"), ("pool_name", "default_pool"),
                                                    ("limit", "1")])
    assert answer.status == 200 and answer.body["source"] == "file" and answer.body["total_entries"] == 2
    [point] = answer.body["datapoints"]
    assert (point["name"], point["value"], point["unit"], point["dimensions"]) == (
        "pool.open_slots", 127.0, "None", {"pool_name": "default_pool"})
    assert api.get("/api/updraft/metrics", query={"limit": "0"}).status == 422
