// Trilu on elements of one or two 32-bit words (ew): of each trailing
// [rows, cols] matrix, keeps the elements on and above (upper) or on and
// below the k-th diagonal and zeroes the others. k is the int64 in kv when
// hasK is set (the low word, clamped when it does not fit), else 0.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { int kv[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rows;
    uint cols;
    uint ew;
    uint upper;
    uint hasK;
} p;

void main() {
    int k = 0;
    if (p.hasK != 0u) {
        int lo = kv[0];
        int hi = kv[1];
        k = hi == (lo < 0 ? -1 : 0) ? clamp(lo, -(1 << 30), 1 << 30) : hi < 0 ? -(1 << 30) : 1 << 30;
    }
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * 256u) {
        int d = int(i % p.cols) - int((i / p.cols) % p.rows);
        bool keep = p.upper != 0u ? d >= k : d <= k;
        for (uint j = 0u; j < p.ew; j++) {
            y[i * p.ew + j] = keep ? x[i * p.ew + j] : WORD(0);
        }
    }
}
