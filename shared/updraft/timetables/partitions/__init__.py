"""Asset partitions (Airflow 3.3's AIP-76): how a producer's partition key becomes a consumer's.

A partition mapper turns an upstream event's key into the downstream run's key (or keys); a rollup mapper
also names the complete set of upstream keys one downstream key waits for (its window) and when enough of them
have arrived (its wait policy). These classes are both the authoring classes DAG files import
(``airflow.sdk.StartOfDayMapper``, ``airflow.partition_mappers.*``) and what the scheduler evaluates: they are
plain data with pure functions, serialized by :mod:`.codec` under Airflow's import paths, and only the built-in
ones are ever decoded, so the scheduler runs no user code. Ported from Airflow 3.3.2's
``airflow/partition_mappers`` (Apache License 2.0), behaviour for behaviour.
"""
