// RotaryEmbedding on fp32, one invocation per output element: the first
// rot elements of each head are rotated pairwise by the angles of row r of
// the cos and sin caches (rot/2 values each), r = position_ids[b, s] when
// bound, else b·seq + s; the pairs are (i, i + rot/2), or (2i, 2i + 1)
// when interleaved. X is [batch, heads, seq, dim] or, 3-D, [batch, seq,
// heads·dim].
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { DATA cosc[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { DATA sinc[]; };
layout(std430, set = 0, binding = 3) readonly buffer P { int pos[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint heads;
    uint seq;
    uint dim;
    uint rot;
    // flags: bit 0, interleaved; bit 1, 3-D; bit 2, position_ids bound
    // (int64, the low word read).
    uint flags;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint d = e % p.dim;
        if (d >= p.rot) {
            y[e] = DATA(float(x[e]));
            continue;
        }
        uint rest = e / p.dim, s, b;
        if ((p.flags & 2u) != 0u) {
            s = (rest / p.heads) % p.seq;
            b = rest / (p.heads * p.seq);
        } else {
            s = rest % p.seq;
            b = rest / (p.seq * p.heads);
        }
        uint half_ = p.rot / 2u;
        uint k, partner;
        bool first;
        if ((p.flags & 1u) != 0u) {
            k = d / 2u;
            first = (d & 1u) == 0u;
            partner = first ? e + 1u : e - 1u;
        } else {
            first = d < half_;
            k = first ? d : d - half_;
            partner = first ? e + half_ : e - half_;
        }
        uint row = b * p.seq + s;
        if ((p.flags & 4u) != 0u) {
            row = uint(pos[2u * row]);
        }
        float c = float(cosc[row * half_ + k]), sn = float(sinc[row * half_ + k]);
        y[e] = DATA(first ? c * float(x[e]) - sn * float(x[partner]) : sn * float(x[partner]) + c * float(x[e]));
    }
}
