"""The hooks Updraft bundles from Airflow's standard provider."""
