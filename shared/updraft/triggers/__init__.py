"""Triggers: what a deferred task waits for, checked without holding a worker (Airflow's triggers)."""
