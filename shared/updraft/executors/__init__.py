"""Executors hand claimed task instances to where they run: the worker Lambda, a Fargate task, or (in tests
and local mode) something in-process. They receive the instance's identity and fencing token, never its code."""
