"""Airflow 3's REST API (``/api/v2/...``) answered from the store, framework-free.

The API Lambda (``functions/api/handler.py``) owns the routing (Powertools' resolver, imported only there) and
calls these functions, so they can be tested, and reused by local mode, without API Gateway events.
"""
