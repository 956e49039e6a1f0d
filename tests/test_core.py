"""Dispatch, record dtypes, GIL release, pickling and the main job."""
import os
import pickle
import platform

import numpy as np
import pytest

import jointmath as jm
from jointmath import _core

from adversarial import run_python


# the paths built on each CPU architecture, from the baseline up (setup.py, csrc/jointmath.h)
X86_PATHS, ARM64_PATHS = ["scalar", "sse", "avx2", "avx512"], ["scalar", "neon"]
BUILT_PATHS = {"x86_64": X86_PATHS, "AMD64": X86_PATHS, "aarch64": ARM64_PATHS, "arm64": ARM64_PATHS}.get(
    platform.machine(), ["scalar"])


def test_available_paths():
    paths = jm.available_isas()
    assert paths[0] == "scalar"
    assert paths == [p for p in BUILT_PATHS if p in paths]  # a subset, in order
    assert jm.isa() in paths
    if BUILT_PATHS[-1] == "neon":  # no runtime detection on arm64: NEON is baseline
        assert paths == BUILT_PATHS


def test_fixture_switches_the_running_path(isa):
    assert jm.isa() == isa


@pytest.mark.parametrize("name", BUILT_PATHS[:2])
def test_forcing_a_path_at_import(name):
    if name not in jm.available_isas():
        pytest.skip(f"{name} not available")
    proc = run_python("-c", "import jointmath; print(jointmath.isa())", env={**os.environ, "JOINTMATH_ISA": name})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == name


def test_unknown_forced_path_fails_at_import_with_a_clear_message():
    name = "avx2" if "neon" in BUILT_PATHS else "neon"  # a path of another architecture
    proc = run_python("-c", "import jointmath", env={**os.environ, "JOINTMATH_ISA": name})
    assert proc.returncode != 0
    built = ", ".join(BUILT_PATHS)
    assert f"JOINTMATH_ISA='{name}' is not a jointmath ISA path; expected one of {built}" in proc.stderr


def test_default_is_the_best_available_path():
    env = {k: v for k, v in os.environ.items() if k != "JOINTMATH_ISA"}
    proc = run_python("-c", "import jointmath; print(jointmath.isa())", env=env)
    assert proc.stdout.strip() == jm.available_isas()[-1]


def test_set_isa_rejects_bad_names():
    with pytest.raises(ValueError, match="isa='avx1024' is not a jointmath ISA path"):
        _core._set_isa("avx1024")
    with pytest.raises(TypeError, match="isa must be a str"):
        _core._set_isa(3)


def test_record_dtypes_match_the_c_structs():
    assert jm.JOINT_QUAT.itemsize == 32 and jm.JOINT_MAT.itemsize == 48
    assert jm.JOINT_QUAT.fields["q"][1] == 0 and jm.JOINT_QUAT.fields["t"][1] == 16
    assert jm.JOINT_QUAT["q"] == np.dtype((np.float32, (4,)))
    assert jm.JOINT_MAT["m"] == np.dtype((np.float32, (3, 4)))


def test_make_joints():
    joints = jm.make_joints(np.ones((2, 3, 4)), np.full((2, 3, 3), 5.0))
    assert joints.shape == (2, 3) and joints.dtype == jm.JOINT_QUAT
    assert (joints["t"][..., :3] == 5).all() and (joints["t"][..., 3] == 0).all()
    assert (jm.make_joints(np.ones((4, 4)))["t"] == 0).all()
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 4\), got shape \(4, 3\)"):
        jm.make_joints(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"t must have shape \(4, 3\), got shape \(4, 4\)"):
        jm.make_joints(np.ones((4, 4)), np.ones((4, 4)))


def test_functions_pickle_by_reference():
    """Every public function (and class) travels to worker processes by name."""
    public = [getattr(jm, name) for name in jm.__all__ if callable(getattr(jm, name))]
    assert len(public) >= 23
    for func in public:
        assert pickle.loads(pickle.dumps(func)) is func


def _large_calls():
    """One large call per C boundary (name, zero-argument function)."""
    n = 1 << 20
    joints = np.zeros(n, jm.JOINT_QUAT)
    joints["q"][:, 3] = 1
    mats = np.zeros(n, jm.JOINT_MAT)
    mats["m"][:, 0, 0] = mats["m"][:, 1, 1] = mats["m"][:, 2, 2] = 1
    quats = np.ascontiguousarray(joints["q"])
    eye = np.broadcast_to(np.eye(3, dtype=np.float32), (n, 3, 3)).copy()
    codes = jm.pack_quats(quats)
    return [
        ("joints_to_mats", lambda: jm.joints_to_mats(joints)),
        ("quat_to_matrix", lambda: jm.quat_to_matrix(quats)),
        ("compose_mats", lambda: jm.compose_mats(mats, mats)),
        ("forward_kinematics", lambda: jm.forward_kinematics(joints.reshape(-1, 2), np.array([-1, 0]))),
        ("pack_quats", lambda: jm.pack_quats(quats)),
        ("unpack_quats", lambda: jm.unpack_quats(codes)),
        ("extract_rotation", lambda: jm.extract_rotation(eye)),
        ("slerp_joints", lambda: jm.slerp_joints(joints, joints, 0.5)),
        ("slerp", lambda: jm.slerp(quats, quats, 0.5)),
        ("euler_to_quat", lambda: jm.euler_to_quat(np.zeros((n, 3), np.float32), "XYZ")),
        ("quat_to_euler", lambda: jm.quat_to_euler(quats, "XYZ")),
        ("make_joints", lambda: jm.make_joints(quats)),
        ("pack_joints", lambda: jm.pack_joints(joints)),
        ("unpack_joints", lambda: jm.unpack_joints(jm.pack_joints(joints[:1]).repeat(n))),
        ("resample_joints", lambda: jm.resample_joints(joints.reshape(-1, 2), 1 / 30, 30)),
    ]


def _small_calls():
    """The same boundaries as _large_calls on one record each (name, zero-argument function)."""
    joints = jm.make_joints([[0, 0, 0, 1]])
    quats = np.array([[0, 0, 0, 1]], np.float32)
    mats = jm.joints_to_mats(joints)
    return [
        ("joints_to_mats", lambda: jm.joints_to_mats(joints)),
        ("quat_to_matrix", lambda: jm.quat_to_matrix(quats)),
        ("compose_mats", lambda: jm.compose_mats(mats, mats)),
        ("forward_kinematics", lambda: jm.forward_kinematics(joints.reshape(1, 1), np.array([-1]))),
        ("pack_quats", lambda: jm.pack_quats(quats)),
        ("unpack_quats", lambda: jm.unpack_quats(jm.pack_quats(quats))),
        ("extract_rotation", lambda: jm.extract_rotation(np.eye(3, dtype=np.float32))),
        ("slerp_joints", lambda: jm.slerp_joints(joints, joints, 0.5)),
        ("slerp", lambda: jm.slerp(quats, quats, 0.5)),
        ("euler_to_quat", lambda: jm.euler_to_quat(np.zeros((1, 3), np.float32), "XYZ")),
        ("quat_to_euler", lambda: jm.quat_to_euler(quats, "XYZ")),
        ("make_joints", lambda: jm.make_joints(quats)),
        ("pack_joints", lambda: jm.pack_joints(joints)),
        ("unpack_joints", lambda: jm.unpack_joints(jm.pack_joints(joints))),
        ("resample_joints", lambda: jm.resample_joints(jm.make_joints([[[0, 0, 0, 1]]] * 2), 1 / 30, 30)),
    ]


@pytest.mark.parametrize("index", range(15))
def test_gil_is_released_around_large_kernels(isa, index):
    # Every boundary releases the GIL through one helper that counts the releases
    # (_core._gil_releases): a large call must release it, a one-record call must not. Counting
    # is deterministic, unlike watching whether another thread got a core during the call. The
    # boundary code is the same on every path: the best one is enough.
    if isa != jm.available_isas()[-1]:
        pytest.skip("boundary code: tested on the best path")
    (name, large), (small_name, small) = _large_calls()[index], _small_calls()[index]
    assert name == small_name
    before = _core._gil_releases()
    large()
    assert _core._gil_releases() > before, f"{name} kept the GIL on 2^20 records"
    before = _core._gil_releases()
    small()
    assert _core._gil_releases() == before, f"{name} released the GIL for one record"


def test_main_job_checks_every_path(isa):
    if isa != jm.available_isas()[-1]:
        pytest.skip("the main job covers every path itself: run once")
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
def test_self_check_fails_a_wrong_kernel(isa, monkeypatch, capsys, broken, line):
    """A kernel that is wrong where the check looks (translations moved, or a per-element t read
    wrongly) fails the self-check, with exit status 1."""
    if isa != jm.available_isas()[-1]:
        pytest.skip("the self-check covers every path itself: run once")
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


def test_angle_between_is_the_rotation_angle():
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    rng = np.random.default_rng(3)
    q0 = Rotation.random(200, random_state=rng)
    q1 = Rotation.random(200, random_state=rng)
    expected = (q0.inv() * q1).magnitude()
    got = jm.reference.angle_between(q0.as_quat(), -q1.as_quat())
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert jm.reference.angle_between(np.array([0, 0, 0, 1.0]), np.array([0, 0, np.sin(1e-9), np.cos(1e-9)])) == \
        pytest.approx(2e-9, rel=1e-6)
