"""The bottom layer: records, states and names that every other layer may import, and that import nothing above.

``states`` (Airflow's task-instance and run states), ``records`` (``TaskInstance``, ``DagRun``, ``TIKey`` and the
holder grammar of a claimed try), ``limits`` (the limit-id grammar), ``parse_results`` (what parsing a DAG file
produces). Plain dataclasses only: no storage types, no AWS, no user code.
"""
