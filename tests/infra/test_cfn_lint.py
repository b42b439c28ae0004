"""cfn-lint on the synthesized dev templates (the session's synths: default networking, an existing VPC): no errors.

W3005 (a DependsOn that a reference already implies) is in every CDK template and is ignored; warnings and
informational findings do not fail the test (cfn-lint's exit code is a bit mask: 2 errors, 4 warnings, 8 info).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# The console script of the interpreter's environment (the package has no __main__ for ``python -m``).
CFN_LINT = Path(sys.executable).parent / "cfn-lint"
if not CFN_LINT.exists():
    pytest.skip("cfn-lint is in the dev extra (pip install -e '.[dev]')", allow_module_level=True)


@pytest.mark.parametrize("mode", ["synth", "vpc_synth"])
def test_template_has_no_cfn_lint_errors(request: pytest.FixtureRequest, mode: str, tmp_path) -> None:
    synth = request.getfixturevalue(mode)
    path = tmp_path / "Updraft-test.template.json"
    path.write_text(json.dumps(synth.template.to_json()))
    result = subprocess.run([str(CFN_LINT), "--ignore-checks", "W3005", "--", str(path)],
                            check=False, capture_output=True, text=True, timeout=120)
    assert not result.returncode & 2, result.stdout + result.stderr
    assert result.returncode & ~(2 | 4 | 8) == 0, result.stdout + result.stderr  # not a crash or a usage error
