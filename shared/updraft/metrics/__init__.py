"""Airflow 3.3's metrics, by Airflow's names, as CloudWatch EMF lines.

``names`` is the one list of Airflow's metric names with, for each, whether Updraft emits it (and from where) or
why not; ``emf`` turns one data point into an EMF line (Powertools' serializer) and writes it where the process's
metrics go (stdout on Lambda, where CloudWatch extracts them; a file in local mode and ``dags test``);
``airflow`` is what the scheduler, the worker and the parser call when a run starts or ends, a try starts or
ends, a pass or a parse is done. This package imports only the model: every layer above may emit.
"""
