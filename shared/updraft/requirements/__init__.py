"""An environment's requirements: the provider packages and libraries its DAG code imports, installed apart from
Updraft's own packages (``dag_packages`` says where DAG code finds them)."""
