// ArgMax (OP 0) and ArgMin (OP 1) on fp32 along one axis, int64 output.
// The input is read as [outer, len, inner]: row r = o * inner + i holds
// the len elements at o * len * inner + i + j * inner. One workgroup
// reduces a row at a time, through subgroup operations when compiled
// with SUBGROUP (see subgroup.glsl), else in a shared-memory tree, or,
// with serial set (short rows), each invocation a row of its own. Ties
// go to the first index, or the last when last is set; NaN counts as the
// extreme value, as in numpy.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef SUBGROUP
#include "subgroup.glsl"
#else
layout(local_size_x = 256) in;
#endif

// WG is the width of a workgroup.
const uint WG = gl_WorkGroupSize.x;

layout(constant_id = 0) const int OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint len;
    uint inner;
    uint last;
    uint serial;
} p;

#ifndef SUBGROUP
shared float pv[256];
shared uint pi[256];
#endif

// beats tells whether element i of value v wins over element j of value w.
bool beats(float v, uint i, float w, uint j) {
    if (isnan(v) != isnan(w)) {
        return isnan(v);
    }
    if (isnan(v) || v == w) {
        return p.last != 0u ? i > j : i < j;
    }
    return OP == 0 ? v > w : v < w;
}

#ifdef SUBGROUP
// winKey is a key of v that is larger the more v wins, NaN largest: keys
// of 0 are no value's.
uint winKey(float v) {
    if (isnan(v)) {
        return 0xFFFFFFFFu;
    }
    uint k = orderKey(v);
    return OP == 0 ? k : ~k;
}

// pick returns the winning (key, index) pair of the subgroup's: the
// largest key, then the first index holding it, or the last when last is
// set.
uvec2 pick(uvec2 w) {
    uint k = subgroupMax(w.x);
    uint i = p.last != 0u ? subgroupMax(w.x == k ? w.y : 0u) : subgroupMin(w.x == k ? w.y : 0xFFFFFFFFu);
    return uvec2(k, i);
}
#endif

void main() {
    uint lid = gl_LocalInvocationID.x;
    if (p.serial != 0u) {
        for (uint r = gl_GlobalInvocationID.x; r < p.rows; r += gl_NumWorkGroups.x * WG) {
            uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
            float best = float(x[base]);
            uint bi = 0u;
            for (uint j = 1u; j < p.len; j++) {
                float v = float(x[base + j * p.inner]);
                if (beats(v, j, best, bi)) {
                    best = v;
                    bi = j;
                }
            }
            y[2u * r] = bi;
            y[2u * r + 1u] = 0u;
        }
        return;
    }
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
        uint bi = min(lid, p.len - 1u);
        float best = float(x[base + bi * p.inner]);
        for (uint j = lid + WG; j < p.len; j += WG) {
            float v = float(x[base + j * p.inner]);
            if (beats(v, j, best, bi)) {
                best = v;
                bi = j;
            }
        }
#ifdef SUBGROUP
        uvec2 w = pick(uvec2(winKey(best), bi));
        uint h = publish(w);
        w = uvec2(0u, p.last != 0u ? 0u : 0xFFFFFFFFu);
        for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
            uvec2 o = part[h][i];
            if (o.x > w.x || o.x == w.x && (p.last != 0u ? o.y > w.y : o.y < w.y)) {
                w = o;
            }
        }
        w = pick(w);
        if (lid == 0u) {
            y[2u * r] = w.y;
            y[2u * r + 1u] = 0u;
        }
#else
        pv[lid] = best;
        pi[lid] = bi;
        barrier();
        for (uint s = 128u; s > 0u; s >>= 1u) {
            if (lid < s && beats(pv[lid + s], pi[lid + s], pv[lid], pi[lid])) {
                pv[lid] = pv[lid + s];
                pi[lid] = pi[lid + s];
            }
            barrier();
        }
        if (lid == 0u) {
            y[2u * r] = pi[0];
            y[2u * r + 1u] = 0u;
        }
        barrier();
#endif
    }
}
