"""Airflow 3's REST API (``/api/v2/...``) answered from the store.

Modules: ``routing`` (routes as data: method, Airflow's path template, a function of one ``Call``), ``routes/``
(one module per resource), ``request`` and ``body`` (typed query parameters and strict bodies, 422 in pydantic's
shape), ``pagination`` (limit/offset/order_by), ``errors`` (Airflow's error bodies), ``formats`` and
``filters`` (datetimes, ``*_pattern``, date ranges), ``lookups``, ``health``, and ``app``: the only module that
imports Powertools' resolver, which the API Lambda (``functions/api/handler.py``) and local mode's API Gateway
load on the first request.
"""
