"""Tied and untied priority weights under both weight rules, in one DAG.

Downstream rule: roots x (3), y (1) and z (1); x2 (2) becomes ready when x ends and outranks y and z, which were
ready first. Absolute rule: roots a (13), b (13) and c (12), and a2 (14) behind a. With one executor slot Airflow
starts, each time a slot frees, the heaviest task that is ready then (ties in any order).
"""

from datetime import datetime

from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG


def noop():
    pass


with DAG("priority_order", schedule=None, start_date=datetime(2024, 1, 1)):
    x = PythonOperator(task_id="x", python_callable=noop)
    x2 = PythonOperator(task_id="x2", python_callable=noop)
    x3 = PythonOperator(task_id="x3", python_callable=noop)
    PythonOperator(task_id="y", python_callable=noop)
    PythonOperator(task_id="z", python_callable=noop)
    x >> x2 >> x3

    a = PythonOperator(task_id="a", python_callable=noop, priority_weight=13, weight_rule="absolute")
    PythonOperator(task_id="b", python_callable=noop, priority_weight=13, weight_rule="absolute")
    PythonOperator(task_id="c", python_callable=noop, priority_weight=12, weight_rule="absolute")
    a >> PythonOperator(task_id="a2", python_callable=noop, priority_weight=14, weight_rule="absolute")
