/*
 * libm_slerp.c - the commonly used C slerp between joint lists (acos of the dot product, three
 * libm sines, lerp below 1e-6 of parallel), one joint at a time: the baseline bench_interp.py
 * measures the kernels against. Not part of the package: bench_interp.py compiles it into
 * build/ with the flags of setup.py's scalar path and loads it with ctypes.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    float q[4]; /* rotation x, y, z, w */
    float t[4]; /* translation x, y, z, 0 */
} joint_quat;   /* jointmath.JOINT_QUAT */

/* out[i] = slerp(a[i], b[i], t) on the rotations (shortest arc), lerp on the translations;
   strides in bytes */
void libm_slerp_joints(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os, size_t n,
                       float t) {
    for (size_t i = 0; i < n; i++) {
        joint_quat ja, jb, jo;
        memcpy(&ja, a + (ptrdiff_t)i * as, sizeof ja);
        memcpy(&jb, b + (ptrdiff_t)i * bs, sizeof jb);
        float cosom = ja.q[0] * jb.q[0] + ja.q[1] * jb.q[1] + ja.q[2] * jb.q[2] + ja.q[3] * jb.q[3];
        float abs_cosom = fabsf(cosom), scale0, scale1;
        if (1.0f - abs_cosom > 1e-6f) {
            float omega = acosf(abs_cosom), inv_sin = 1.0f / sinf(omega);
            scale0 = sinf((1.0f - t) * omega) * inv_sin;
            scale1 = sinf(t * omega) * inv_sin;
        } else {
            scale0 = 1.0f - t;
            scale1 = t;
        }
        scale1 = cosom >= 0.0f ? scale1 : -scale1;
        for (int k = 0; k < 4; k++) {
            jo.q[k] = scale0 * ja.q[k] + scale1 * jb.q[k];
            jo.t[k] = (1.0f - t) * ja.t[k] + t * jb.t[k];
        }
        memcpy(out + (ptrdiff_t)i * os, &jo, sizeof jo);
    }
}
