"""Airflow's standard operators (empty, bash, python): constructors and validation; running comes with the
task runtime."""
