"""An ``async def`` callable runs to its end, as Airflow 3.3's PythonOperator runs one on an event loop
(``aexecute``), instead of its unawaited coroutine becoming the task's result."""

from __future__ import annotations

import asyncio

from airflow.providers.standard.operators.python import PythonOperator


async def _fetch(page: int, *, times: int) -> int:
    await asyncio.sleep(0)
    return page * times


def test_an_async_callable_is_awaited() -> None:
    operator = PythonOperator(task_id="fetch", python_callable=_fetch, op_args=[3], op_kwargs={"times": 100})
    assert operator.execute_callable() == 300
