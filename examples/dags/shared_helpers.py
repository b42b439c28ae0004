"""Not a DAG file: a sibling module that DAG files in this folder import (the folder is on sys.path)."""

# Table name -> priority weight: bigger tables load first.
TABLES = {"orders": 10, "customers": 5, "products": 1}
