"""The web UI: static HTML, CSS and vanilla JavaScript modules shipped inside the package, served by the API.

How it is served, and why: the API Lambda answers Airflow 3's UI paths (``/dags``, ``/dags/{dag_id}``,
``/dags/{dag_id}/runs/{run_id}``, ...) with one app shell and ``/static/<version>/<file>`` with the assets
(:mod:`updraft.api.routes.ui`), behind the environment's one API Gateway. So there is no server to run and no
build step: the files in ``static/`` are what the browser runs (no framework, no npm), ``updraft local`` serves
them at its API address, and the Lambda bundle already copies the package. No CloudFront or bucket at first: the
assets are a few text files (no binary media types to configure on API Gateway), fetched once per version since
their URLs carry a digest of their content and are cached as immutable; a CloudFront distribution can be put in
front later without changing a path. The page reads everything through ``/api/v2`` like any other client.
"""
