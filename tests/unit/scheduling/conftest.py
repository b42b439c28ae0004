import sys
from pathlib import Path

# The helpers module sits beside the tests (as tests/unit/serialization does with its DAG builders).
sys.path.insert(0, str(Path(__file__).parent))
