"""A DAG run and its tries as one X-Ray trace (``xray``: the documents and where they go; ``run_traces``: what
the scheduler and the worker record)."""
