"""The self-check (python -m jointmath --selfcheck): it runs every kernel on every path itself,
so these tests run once."""
import numpy as np
import pytest

import jointmath as jm

from adversarial import run_python


def test_main_job_checks_every_path():
    proc = run_python("-m", "jointmath", "--selfcheck", "--joints", "2000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in jm.available_isas():
        for kernel in ("joints_to_mats", "mats_to_joints  max translation", "quat_to_matrix  float64",
                       "slerp_joints    max translation", "lerp_joints", "slerp           per-element",
                       "nlerp", "pack_quats      20-bit", "compose_mats", "forward_kinematics", "euler_to_quat",
                       "make_continuous", "extract_rotation"):
            assert f"  {path:<7} {kernel}" in proc.stdout
    assert "all checks passed" in proc.stdout
    assert "ns per item" in proc.stdout


@pytest.mark.parametrize("broken, line", [
    ("slerp_joints", "slerp_joints    max translation error"),
    ("mats_to_joints", "mats_to_joints  max translation error"),
    ("slerp", "slerp           per-element t"),
    ("make_continuous", "make_continuous neighbours left opposite"),
])
def test_self_check_fails_a_wrong_kernel(monkeypatch, capsys, broken, line):
    """A kernel that is wrong where the check looks (translations moved, or a per-element t read
    wrongly) fails the self-check, with exit status 1."""
    from jointmath import _selfcheck
    right = getattr(jm, broken)

    def wrong(*args, **kwargs):
        result = right(*args, **kwargs)
        if result.dtype.names:
            result["t"] += np.float32(1e-3)
        else:
            result[1::3] = result[::3][: len(result[1::3])]
        return result

    monkeypatch.setattr(jm, broken, wrong)
    assert _selfcheck.main(["--joints", "100"]) == 1
    text = capsys.readouterr().out
    assert "SOME CHECKS FAILED" in text
    rows = [row for row in text.splitlines() if line in row]
    assert len(rows) == len(jm.available_isas()) and all(row.endswith("FAILED") for row in rows)


def test_main_job_rejects_bad_arguments():
    proc = run_python("-m", "jointmath", "--selfcheck", "--joints", "0")
    assert proc.returncode == 2 and "argument --joints: must be an integer >= 1, got '0'" in proc.stderr
