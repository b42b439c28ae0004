"""The CDK app that deploys Updraft (see infra/README.md)."""
