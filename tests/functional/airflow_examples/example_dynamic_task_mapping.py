#
# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
"""Example DAG demonstrating the usage of dynamic task mapping."""

from __future__ import annotations

# [START example_dynamic_task_mapping]
from datetime import datetime

from airflow.sdk import DAG, task, task_group

with DAG(
    dag_id="example_dynamic_task_mapping", schedule=None, start_date=datetime(2022, 3, 4), tags=["example"]
):

    @task
    def add_one(x: int):
        return x + 1

    @task
    def sum_it(values):
        total = sum(values)
        print(f"Total was {total}")

    added_values = add_one.expand(x=[1, 2, 3])
    sum_it(added_values)

with DAG(
    dag_id="example_task_mapping_second_order",
    schedule=None,
    catchup=False,
    start_date=datetime(2022, 3, 4),
    tags=["example"],
):

    @task
    def get_nums():
        return [1, 2, 3]

    @task
    def times_2(num):
        return num * 2

    @task
    def add_10(num):
        return num + 10

    _get_nums = get_nums()
    _times_2 = times_2.expand(num=_get_nums)
    add_10.expand(num=_times_2)

with DAG(
    dag_id="example_task_group_mapping",
    schedule=None,
    catchup=False,
    start_date=datetime(2022, 3, 4),
    tags=["example"],
):

    @task_group
    def op(num):
        @task
        def add_1(num):
            return num + 1

        @task
        def mul_2(num):
            return num * 2

        return mul_2(add_1(num))

    op.expand(num=[1, 2, 3])

# [END example_dynamic_task_mapping]
