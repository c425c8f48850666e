// GatherElements on elements of one or two 32-bit words (ew), with int32
// or int64 indices (iw words each, the low word read). Output element i,
// at coordinates c in dims (the indices' shape), copies the data element
// at c with c[axis] replaced by the index, negative indices counting from
// the end of the data's axis; xs holds the data's element strides. An
// index out of range gives zero.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint axis;
    uint axisDim;
    uint ew;
    uint iw;
    uint dims[8];
    uint xs[8];
} p;

void main() {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * 256u) {
        int k = idx[i * p.iw];
        bool wide = p.iw == 2u && idx[i * 2u + 1u] != (k < 0 ? -1 : 0);
        if (k < 0) {
            k += int(p.axisDim);
        }
        bool ok = !wide && k >= 0 && k < int(p.axisDim);
        uint off = 0u;
        uint rest = i;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            uint c = rest % p.dims[d];
            rest /= p.dims[d];
            off += (uint(d) == p.axis ? uint(k) : c) * p.xs[d];
        }
        for (uint j = 0u; j < p.ew; j++) {
            y[i * p.ew + j] = ok ? x[off * p.ew + j] : WORD(0);
        }
    }
}
