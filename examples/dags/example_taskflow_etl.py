"""A TaskFlow ETL: extract -> transform -> load, passing data through XComs."""

import json

import pendulum

from airflow.sdk import dag, task


@dag(
    schedule="@daily",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["example", "taskflow"],
)
def example_taskflow_etl():
    """Sum a day's orders. Each task's return value is the next task's input."""

    @task
    def extract() -> dict[str, float]:
        data = '{"1001": 301.27, "1002": 433.21, "1003": 502.22}'
        return json.loads(data)

    @task(multiple_outputs=True)
    def transform(order_data: dict[str, float]) -> dict[str, float]:
        return {"total_order_value": sum(order_data.values())}

    @task(retries=2)
    def load(total_order_value: float) -> None:
        print(f"Total order value is: {total_order_value:.2f}")

    summary = transform(extract())
    load(summary["total_order_value"])


example_taskflow_etl()
