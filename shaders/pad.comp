// Pad up to rank 6 for elements of one or two 32-bit words (bit 0 of OP):
// output element c reads input element c - begin, where that lies outside
// the input: the constant (value words lo, hi) for mode 0, the nearest
// edge for mode 1, the reflection about the edge for mode 2, the
// wrap-around for mode 3 (mode = OP >> 1). Negative begins crop.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint lo;
    uint hi;
    uint outDims[6];
    uint inDims[6];
    int begin[6];
} p;

const uint WORDS = (OP & 1) != 0 ? 2u : 1u;
const int MODE = OP >> 1;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rest = i;
        uint src = 0u;
        uint step = 1u;
        bool inside = true;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            int n = int(p.inDims[d]);
            int s = int(rest % p.outDims[d]) - p.begin[d];
            rest /= p.outDims[d];
            if (s < 0 || s >= n) {
                if (MODE == 0) {
                    inside = false;
                } else if (MODE == 1) {
                    s = clamp(s, 0, n - 1);
                } else if (MODE == 2) {
                    s = s < 0 ? -s : 2 * (n - 1) - s;
                } else {
                    // Vulkan leaves OpSMod/OpSRem of negative operands
                    // undefined: take the remainder of non-negative ones.
                    s = s < 0 ? n - 1 - (-s - 1) % n : s % n;
                }
            }
            src += uint(s) * step;
            step *= uint(n);
        }
        for (uint w = 0u; w < WORDS; w++) {
            y[i * WORDS + w] = inside ? x[src * WORDS + w] : WORD(w == 0u ? p.lo : p.hi);
        }
    }
}
