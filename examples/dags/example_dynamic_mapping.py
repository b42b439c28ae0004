"""Dynamic task mapping: one task instance per file, then a reduction over all of their results."""

import pendulum

from airflow.sdk import DAG, task

with DAG(
    dag_id="example_dynamic_mapping",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    params={"prefix": "data/"},
    tags=["example", "mapping"],
):

    @task
    def list_files(params=None) -> list[str]:
        return [f"{params['prefix']}part-{i}.csv" for i in range(3)]

    @task
    def count_lines(path: str, header: bool) -> int:
        return len(path) + (0 if header else 1)

    @task
    def total(counts) -> int:
        return sum(counts)

    counts = count_lines.partial(header=True).expand(path=list_files())
    total(counts)
