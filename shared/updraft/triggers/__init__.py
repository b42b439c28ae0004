"""Airflow's triggers, and how Updraft runs them: a trigger is serialized (classpath + kwargs) when a task defers,
and a Step Functions execution waits for it (``updraft.triggers.state_machine`` says how) in place of a triggerer
process."""
