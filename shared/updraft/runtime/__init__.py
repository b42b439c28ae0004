"""The task runtime: what a worker (Lambda, Fargate or local) does with one claimed try.

``worker.handle_dispatch`` fences the try, ``execute.run_try`` loads the live DAG (``loader``), builds the context
(``context``), unmaps a mapped task (``mapping``), renders templates (``templates``), resolves XComArgs and pushes
results (``xcom``), runs the operator and captures its log (``logs``).
"""
