"""extract_rotation's update counts: the hardest matrices tools/extract_iteration_search.py found
(10**7 random matrices per path, condition 1 ... 10**4, both determinant signs) take at most the
documented number of updates on every path, each within its bound of the maximum of trace(R^T A).
The first float32 matrix is the issue's reproducer; before the stop at twice Newton's threshold
and the deflated step of mirrored near-ties, each of the next eight ran all 200 updates on at
least one path. Near-reflections, which walked along their near-flat set of best rotations
before the stop of near_reflection_settled, and a random batch of them, take at most the same
maximum."""
import numpy as np
import pytest

import jointmath as jm

# the documented maxima (docs/families/extraction.md "Bounds"), near-reflections included
MAX_UPDATES_FLOAT32 = 20
MAX_UPDATES_FLOAT32_NEAR_REFLECTION = 20
MAX_UPDATES_FLOAT64 = 20

# float32 bit patterns, row-major
HARDEST_FLOAT32 = np.array([
    [0xbc000ccc, 0x3c5e77a0, 0xbc0e8543, 0x3e5781ab, 0x3f4d29f9, 0xbea2d84a, 0x3dbed540, 0x3eda0932, 0xbe19a560],
    [0x40061007, 0xbff5fc94, 0x3da6b111, 0x3fc41e2b, 0xbfb4424c, 0x3d68d60c, 0x3fb2d3b9, 0xbfa316cf, 0x3d622cd7],
    [0x3a0def6b, 0xb989875a, 0x38c60de3, 0xbb5e05fc, 0x3ad88f67, 0xba1688eb, 0x3a09af26, 0xb987c930, 0x38bd44dc],
    [0x40dac933, 0xc0381734, 0xc16a1ed2, 0xc1bbd586, 0x4127014c, 0x424991cf, 0x41289e16, 0xc093932b, 0xc1b1fb8c],
    [0xbc41fa83, 0x3db22542, 0xbbf1bdae, 0xbd000834, 0x3e6bcdf7, 0xbca04467, 0xbb249819, 0x3c97a1f1, 0xbac9d07d],
    [0x3fb4453f, 0xc03dae35, 0xc01b9528, 0xc057eb23, 0xc0e733d4, 0xc11094b8, 0x41bed104, 0x41d62eca, 0x424e726f],
    [0xbfda019b, 0x3fe6661e, 0xbf5dd0aa, 0x41209ece, 0xc129c77d, 0x40a31c80, 0xc0019417, 0x40092bb4, 0xbf83bc28],
    [0xbf9f2f99, 0xbfba389a, 0x3ef2338c, 0xbd222633, 0xbd3bbb6a, 0x3c750c18, 0xbe556206, 0xbe79756a, 0x3da2e755],
    [0xbc632e2c, 0x3c753468, 0xbbaf4668, 0xbc67c5d3, 0x3c7a75df, 0xbbb9a2dc, 0xbbb38553, 0x3bb983ca, 0xbaff926a],
    [0xbdc94fef, 0x3d8d2fef, 0x3d0e5e53, 0x3d96e115, 0x3dce01b8, 0x3c10b155, 0x3cbd3d64, 0xbce0a8f2, 0x3df53c5e],
    [0xbbbadac7, 0x3c5372c5, 0x3bd61057, 0x38e635e2, 0xb929e3ab, 0xb9945a9b, 0x39fcc3c1, 0xbab1ea86, 0xba055622],
    [0x39a1c0fa, 0xb992403f, 0xb9d47bfb, 0x3aaf78f6, 0xba2c4766, 0xba390cf9, 0xbb2bc98c, 0x3acb390d, 0x3ae23dfd],
    [0xbf45e34e, 0x3ed77702, 0x3f8697fa, 0x3f24e4f1, 0xbf8b2153, 0x3f0c1bd0, 0xbf8e010e, 0xbfc161bc, 0xbee3abb7],
    [0x40e76a67, 0xc109f439, 0x404c974b, 0xc035e752, 0x4058f60a, 0xbfa1e871, 0x40c3f2dd, 0xc0e950fd, 0x402d17a6],
    [0xbe96a799, 0x3d9a4dab, 0xbecb5596, 0x3eb7231c, 0xbe38859b, 0xbe99393b, 0x3e40c186, 0x3eeba2a6, 0xbd55aac0],
    [0xbeb08d4c, 0xbf5922e3, 0x3ecdcda0, 0x3f399c31, 0xbf033959, 0xbeeb7433, 0xbf189873, 0xbe080398, 0xbf4aaefb],
    [0xbddfd453, 0x3d445208, 0xbda70223, 0x3e3b2faa, 0xbda0e145, 0x3e0a123b, 0xbea10b63, 0x3e0b0624, 0xbe6de655],
    [0x40a6898f, 0xc1ee66e9, 0xc26197b5, 0x41056132, 0x4261ac0c, 0xc1e85553, 0xc27cf4f2, 0x409f6bac, 0xc10781cd],
    [0x3e5b4f41, 0xbd34fba2, 0xbee6357a, 0xbe0caf93, 0xbef5f738, 0xbc952fd7, 0x3edc5e4d, 0xbe068258, 0x3e5f2710],
    [0x3e739935, 0x3d3dd43c, 0xbf785b70, 0x3f4c74e6, 0xbf13e780, 0x3e2c4f40, 0x3f0d7dad, 0x3f509c82, 0x3e32a342],
    [0xc35c4bc4, 0xc1d8b4b1, 0x42ff155c, 0x41e66acd, 0xc37e5550, 0xc08974da, 0xc2fe560c, 0xc12a8c69, 0xc35de94e],
    [0xbb47b224, 0x394f2014, 0x3aa839ae, 0x3d0a131f, 0xbcfebf37, 0x3cf16b84, 0x3ca11cd3, 0xbc96d55b, 0x3c6dfbed],
    [0x3d84f1e6, 0xbcf09e4f, 0xbcb8a8f8, 0x3c3e0a70, 0x3d616070, 0xbd546c6a, 0xbd9d1e5e, 0xbd16d63d, 0xbdb464e9],
    [0xbd701300, 0xbe5d5665, 0x3b8fecb9, 0x3c4bd29c, 0x3d715263, 0x3d4fa2f0, 0x3cc943be, 0x3db82518, 0xbbafea95],
    [0xc087bf96, 0x3e35c7a6, 0x40ba5490, 0xbf08a3f3, 0xbf1d280f, 0xbde7d50e, 0xc018db59, 0xbf9bdfac, 0x4021452d],
    [0x40a7b06c, 0xc278b30a, 0x4163b788, 0xc24f69ce, 0xc1478ba8, 0xc20d7f82, 0xc2149102, 0x410a3474, 0x424d968d],
], np.uint32).view(np.float32).reshape(-1, 3, 3)

HARDEST_FLOAT64 = np.array([[float.fromhex(x) for x in m] for m in [
    ["-0x1.1715b2cef10e3p-9", "0x1.295aed0004169p-11", "0x1.d39544cd748e4p-13", "-0x1.741abc5566a77p-8", "0x1.4d36e577d32ccp-10", "0x1.9d068fe51d12fp-12", "-0x1.c849eb5256993p-7", "0x1.a29ec30d218d8p-9", "0x1.17880fd2877f3p-10"],
    ["0x1.bb2096dbc61d8p+3", "-0x1.641df900b5195p+0", "-0x1.c5c6411efc6c4p+4", "0x1.fd890b94df3a7p+0", "-0x1.0ae399a593c7dp-4", "-0x1.2abe0376387aap+2", "0x1.7d0d8fde9dca8p-4", "0x1.d81a596e1ae0cp-2", "-0x1.2c4902a3df11bp-1"],
    ["-0x1.078d81c5f2d20p-9", "-0x1.3ae3698be5428p-9", "-0x1.a35117469ba7fp-15", "-0x1.1df13b6394073p-9", "0x1.34ca5ec8168b1p-10", "0x1.7b899362207c9p-9", "0x1.31c8a51005235p-9", "-0x1.2a3626325b1a8p-10", "0x1.06b6a2bb2ac27p-9"],
    ["-0x1.8fcf3ed0061d3p+0", "0x1.006ad1efd2288p+0", "-0x1.d36a216798dcfp-1", "0x1.06d2cbaf02d97p+1", "-0x1.19f8811a3e3e4p+1", "0x1.9f9eebc1e42b0p+0", "-0x1.22453316af387p-2", "0x1.e9217040ac272p-7", "-0x1.f2649d8c126e7p-2"],
    ["-0x1.4b51378733205p+1", "0x1.6e22e865824fdp+1", "-0x1.788308785569bp+4", "-0x1.ea5f12824a8cep+4", "0x1.2d8fe737f539fp+3", "-0x1.3438f00a5a5b1p+2", "-0x1.a64f827fe8e74p+5", "-0x1.126f166588a17p+3", "0x1.72e32616db770p+4"],
    ["0x1.d19bff59b5d6ep-10", "0x1.c657be1abab7dp-10", "-0x1.baa0455b38216p-10", "-0x1.1d5077466363ap-9", "-0x1.0346187a7cfd8p-9", "0x1.1098982e4a990p-9", "-0x1.f2f1e12cf370ap-9", "-0x1.ca4cabbb64179p-9", "0x1.cc75d3598de24p-9"],
    ["-0x1.c1736661e1e8dp-8", "0x1.8e0cc890b03f4p-8", "0x1.5cfeb803616a2p-9", "0x1.ede388e270744p-8", "-0x1.9bdf6b444bb21p-8", "-0x1.84469067203dcp-9", "0x1.2a7a77e3dcb81p-8", "-0x1.4e49e010d586fp-8", "-0x1.8593c3fcd0f2cp-10"],
    ["-0x1.aa0f4f3ded5bfp+0", "-0x1.47ea6b56847b8p-1", "-0x1.ce693384ccccdp-2", "0x1.1cd6306cbb7bap+1", "-0x1.7bcdc16201456p+3", "0x1.338be78f9d4f1p+3", "-0x1.1d0ff813d3114p+2", "0x1.25449ca89c8d8p+0", "-0x1.02840d46150f6p+2"],
]]).reshape(-1, 3, 3)


# near-reflections (det A < 0, all three singular values within 1e-9 ... 1e-2 of each other) that
# walked along their near-flat set of best rotations before near_reflection_settled: the first of
# each is the reproducer (float32 66 updates, float64 all 200), the next four the longest of
# 400,000 (float32 98, 84, 81, 81; float64 200 each); now 1 to 3 updates each. The last float64
# one (singular values 1e-11 apart) ended 6e-9 below its bound after a Newton step along the set.
NEAR_REFLECTIONS_FLOAT32 = np.array([
    [0xbd041cd8, 0x3edf49c5, 0xbf663889, 0xbe958e3a, 0x3f5b3bf4, 0x3ed9fc95, 0xbf74b200, 0xbe8d86d3, 0xbdcc48a8],
    [0xbf3f01bb, 0xbece6fe0, 0xbf07a315, 0x3ed48e3e, 0x3eae4714, 0xbf57fad1, 0xbf05417c, 0x3f597451, 0x3db152bf],
    [0xbf79d988, 0xbc9b20fa, 0xbe5e3a63, 0xbe5e59bc, 0x3b75d193, 0x3f79e38c, 0x3c90afd5, 0xbf7ff38b, 0x3bfe581c],
    [0x3d3b966c, 0xbe47b06f, 0xbf7acf3e, 0xbf7b1304, 0xbe47c051, 0xbbe59557, 0x3e424aca, 0xbf761183, 0x3e4cfbb6],
    [0x3f28d70a, 0xbf3fea6d, 0x3d6036a3, 0xbf358aa2, 0xbf250d43, 0xbe921737, 0xbe7f3230, 0xbe18f413, 0x3f74f48d],
], np.uint32).view(np.float32).reshape(-1, 3, 3)

NEAR_REFLECTIONS_FLOAT64 = np.array([[float.fromhex(x) for x in m] for m in [
    ["0x1.7e0d3d6f5a653p-1", "-0x1.8559e13304249p-4", "0x1.515c1e862abadp-1", "0x1.b35c027baec3fp-9", "-0x1.fa799afc2e47cp-1", "-0x1.2bf85652c77b0p-3", "-0x1.54d928fe510f7p-1", "-0x1.c8a2e3ec466e7p-4", "0x1.79c47704f5ac6p-1"],
    ["0x1.baf20cefc1d06p-1", "0x1.daff5836611d4p-4", "-0x1.f3abadc4c4517p-2", "0x1.95444e2af3c3cp-2", "0x1.c25890f0edca8p-2", "0x1.9cc5a77c2a118p-1", "-0x1.3b7c7dc681186p-2", "0x1.c7fa4fab99303p-1", "-0x1.569c00c76f137p-2"],
    ["0x1.8b5373fed876fp-2", "0x1.f8c0610285bbbp-3", "0x1.c72325c43489ep-1", "0x1.ce5645636f54bp-1", "0x1.8922a0165c5f0p-4", "-0x1.acd437b957422p-2", "0x1.821da44be10cbp-3", "-0x1.edc44fbdcf3c6p-1", "0x1.7be791a23d99ap-3"],
    ["0x1.01cbddffedde1p-1", "-0x1.95cf72072249ap-1", "0x1.60274554e59eep-2", "0x1.b3f73eaec2a50p-1", "0x1.0b9b957cd932cp-1", "-0x1.589d4e8d13efep-5", "0x1.2bd5fee58cf01p-3", "-0x1.418bf14054de0p-2", "-0x1.e049dd2dd8c31p-1"],
    ["-0x1.0233762970813p-1", "0x1.1ea033095c435p-1", "0x1.50a217a1df4a7p-1", "0x1.df7d1bd693491p-2", "-0x1.d98e4343b6135p-2", "0x1.817d8e8001433p-1", "-0x1.737b644afab16p-1", "-0x1.6007f755f4c9cp-1", "0x1.d9ca09d824bf8p-6"],
    ["-0x1.476ec4c913519p-1", "0x1.d887005695f0fp-2", "-0x1.3ad1c9e978898p-1", "0x1.d88b8891450aep-2", "-0x1.a318f489ff6cep-2", "-0x1.92ffe0fc7de6fp-1", "0x1.3ad01689fbdd5p-1", "0x1.930135176b31bp-1", "-0x1.8fb3f0f5834bcp-5"],
]]).reshape(-1, 3, 3)

def shortfall(a, q):
    """max trace(R^T A) over proper rotations (from the SVD) minus trace(R(q)^T A), in float64."""
    a64 = a.astype(np.float64)
    sigma = np.linalg.svd(a64, compute_uv=False)
    best = sigma[:, 0] + sigma[:, 1] + np.sign(np.linalg.det(a64)) * sigma[:, 2]
    return best - np.einsum("nij,nij->n", jm.quat_to_matrix(q.astype(np.float64)), a64), sigma


def test_the_hardest_float32_matrices_found():
    q, iterations = jm.extract_rotation(HARDEST_FLOAT32, return_iterations=True)
    lost, sigma = shortfall(HARDEST_FLOAT32, q)
    largest = np.abs(HARDEST_FLOAT32).max(axis=(1, 2)).astype(np.float64)
    mirrored = np.linalg.det(HARDEST_FLOAT32.astype(np.float64)) < 0
    near_reflection = mirrored & (sigma[:, 0] - sigma[:, 2] < 1e-4 * largest)
    assert (iterations[~near_reflection] <= MAX_UPDATES_FLOAT32).all(), iterations
    assert (iterations[near_reflection] <= MAX_UPDATES_FLOAT32_NEAR_REFLECTION).all(), iterations
    # within 2 (sigma1 - sigma3) + 2 (sigma2 - sigma3) of the maximum where the rotations nearly
    # tie, else at float32 rounding
    bound = np.where(mirrored, 2 * (sigma[:, 0] - sigma[:, 2]) + 2 * (sigma[:, 1] - sigma[:, 2]), 0) + 1e-5 * largest
    assert (lost <= bound).all(), lost / bound


def test_the_issue_reproducer_stops_within_the_documented_maximum():
    _, iterations = jm.extract_rotation(HARDEST_FLOAT32[0], return_iterations=True)
    assert iterations <= MAX_UPDATES_FLOAT32


def test_the_hardest_float64_matrices_found():
    q, iterations = jm.extract_rotation(HARDEST_FLOAT64, return_iterations=True)
    assert (iterations <= MAX_UPDATES_FLOAT64).all(), iterations
    lost, sigma = shortfall(HARDEST_FLOAT64, q)
    assert (lost <= 1e-13 * sigma[:, 0]).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_random_batch_stays_within_the_maximum(dtype):
    """20,000 matrices of the search's distribution (a fixed seed): none near the documented
    maximum's limits runs past it."""
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "extract_iteration_search", pathlib.Path(__file__).parents[2] / "tools" / "extract_iteration_search.py")
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    a = search.random_matrices(np.random.default_rng(51), 20000, 1e4, np.dtype(dtype))
    _, iterations = jm.extract_rotation(a, return_iterations=True)
    assert iterations.max() <= (MAX_UPDATES_FLOAT32 if dtype == np.float32 else MAX_UPDATES_FLOAT64)


def near_reflection_bound(a, q):
    """The shortfall and its documented bound, 2 (sigma1 - sigma3) + 2 (sigma2 - sigma3) of the
    maximum, plus the rounding of the type (1e-5 of the largest element for float32, 1e-12 for
    float64)."""
    lost, sigma = shortfall(a, q)
    largest = np.abs(a).max(axis=(1, 2)).astype(np.float64)
    slack = (1e-5 if a.dtype == np.float32 else 1e-12) * largest
    return lost, 2 * (sigma[:, 0] - sigma[:, 2]) + 2 * (sigma[:, 1] - sigma[:, 2]) + slack


@pytest.mark.parametrize("a", [NEAR_REFLECTIONS_FLOAT32, NEAR_REFLECTIONS_FLOAT64], ids=["float32", "float64"])
def test_near_reflections_stop_within_the_maximum_and_the_bound(a):
    assert (np.linalg.det(a.astype(np.float64)) < 0).all()
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    limit = MAX_UPDATES_FLOAT32_NEAR_REFLECTION if a.dtype == np.float32 else MAX_UPDATES_FLOAT64
    assert (iterations <= limit).all(), iterations
    lost, bound = near_reflection_bound(a, q)
    assert (lost <= bound).all(), lost / bound


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_near_reflections_stay_within_the_maximum_and_the_bound(dtype):
    """20,000 near-reflections (det A < 0, singular values 1, 1 - g1, 1 - g2 with g log-uniform
    in 1e-7 ... 1e-2; before, ~0.7 % of them ran past 20 updates, in float64 to max_iter)."""
    rng = np.random.default_rng(61)
    n = 20000
    q = rng.standard_normal((2, n, 4))
    u, v = jm.quat_to_matrix(q / np.linalg.norm(q, axis=-1, keepdims=True))
    gaps = 10.0 ** rng.uniform(-7, -2, (n, 2))
    sigma = np.stack([np.ones(n), 1 - gaps[:, 0], -(1 - gaps[:, 1])], axis=1)
    a = ((u * sigma[:, None, :]) @ v).astype(dtype)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    limit = MAX_UPDATES_FLOAT32_NEAR_REFLECTION if dtype == np.float32 else MAX_UPDATES_FLOAT64
    assert iterations.max() <= limit, np.sort(iterations)[-5:]
    lost, bound = near_reflection_bound(a, q)
    assert (lost <= bound).all(), (lost / bound).max()
