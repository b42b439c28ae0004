"""Twelve independent tasks in a pool of ten slots: never more of them hold a slot than there are workers."""

import time
from datetime import datetime

from airflow.sdk import DAG, task


@task(pool="ten_slots")
def hold(i):
    time.sleep(0.2)
    return i


with DAG("pool_of_ten", schedule=None, start_date=datetime(2024, 1, 1)):
    hold.expand(i=list(range(12)))
