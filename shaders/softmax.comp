// Softmax (OP 0) and LogSoftmax (OP 1) on fp32 along one axis. The input
// is read as [outer, len, inner]: row r = o * inner + i holds the len
// elements at o * len * inner + i + j * inner. One workgroup normalizes a
// row at a time, or, with serial set (short rows), each invocation a row
// of its own. Compiled with SUBGROUP (see subgroup.glsl), a workgroup
// reads its row twice: once for each invocation's running maximum and
// sum of exponentials (rescaled when the maximum grows), combined by two
// subgroup reductions, then to write it. Otherwise it reads it three
// times, reducing the maximum, then the sum, in a shared-memory tree.
//
// With masked set, the input is Where(cond, fill, x) (or Where(cond, x,
// fill)) of x, folded in: element e reads fill where cond, broadcast to
// the input's shape, selects it, and x[e] elsewhere. The params buffer
// holds the rank, the dims, cond's element strides (8 words each), fill,
// whether cond true selects fill, then cond's elements as words.
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
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Mask { uint mask[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint len;
    uint inner;
    uint masked;
    uint serial;
} p;

const uint MASK_HEADER = 19u;

// load returns input element e: x[e], or the fill where the mask selects it.
float load(uint e) {
    if (p.masked == 0u) {
        return float(x[e]);
    }
    uint rank = mask[0];
    uint rest = e;
    uint at = 0u;
    for (int d = int(rank) - 1; d >= 0; d--) {
        uint c = rest % mask[1 + d];
        rest /= mask[1 + d];
        at += c * mask[9 + d];
    }
    bool sel = (mask[MASK_HEADER + at] != 0u) == (mask[18] != 0u);
    return sel ? uintBitsToFloat(mask[17]) : float(x[e]);
}

#ifndef SUBGROUP
shared float part[256];

// reduce combines the part of every invocation with max (OP 0) or + (1)
// and returns the result to all of them.
float reduce(float v, int op) {
    uint lid = gl_LocalInvocationID.x;
    part[lid] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part[lid] = op == 0 ? max(part[lid], part[lid + s]) : part[lid] + part[lid + s];
        }
        barrier();
    }
    float r = part[0];
    barrier();
    return r;
}
#endif

// write stores the row at base, from its maximum mx and sum of
// exponentials: its elements from the first, each step-th.
void write(uint base, float mx, float sum, uint first, uint step) {
    float lsum = log(sum);
    for (uint j = first; j < p.len; j += step) {
        float d = load(base + j * p.inner) - mx;
        y[base + j * p.inner] = DATA(OP == 0 ? exp(d) / sum : d - lsum);
    }
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    if (p.serial != 0u) {
        for (uint r = gl_GlobalInvocationID.x; r < p.rows; r += gl_NumWorkGroups.x * WG) {
            uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
            float mx = -1.0 / 0.0;
            for (uint j = 0u; j < p.len; j++) {
                mx = max(mx, load(base + j * p.inner));
            }
            float sum = 0.0;
            for (uint j = 0u; j < p.len; j++) {
                sum += exp(load(base + j * p.inner) - mx);
            }
            write(base, mx, sum, 0u, 1u);
        }
        return;
    }
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
        float mx = -1.0 / 0.0;
#ifdef SUBGROUP
        // sum is the sum of exp(e - mx) over this invocation's elements e
        // so far. An element of -inf adds 0 (exp(-inf - -inf) would be
        // NaN); NaN makes the sum NaN.
        float sum = 0.0;
        for (uint j = lid; j < p.len; j += WG) {
            float e = load(base + j * p.inner);
            if (e > mx) {
                sum = sum * exp(mx - e) + 1.0;
                mx = e;
            } else if (e != -1.0 / 0.0) {
                sum += exp(e - mx);
            }
        }
        float rowMax = groupMax(mx);
        sum = groupAdd(sum * exp(mx - rowMax));
        // A row holding +inf has exp(inf - inf) in its sum, as the CPU's.
        if (isinf(rowMax) && rowMax > 0.0) {
            sum = uintBitsToFloat(0x7FC00000u);
        }
        write(base, rowMax, sum, lid, WG);
#else
        for (uint j = lid; j < p.len; j += WG) {
            mx = max(mx, load(base + j * p.inner));
        }
        mx = reduce(mx, 0);
        float sum = 0.0;
        for (uint j = lid; j < p.len; j += WG) {
            sum += exp(load(base + j * p.inner) - mx);
        }
        write(base, mx, reduce(sum, 1), lid, WG);
#endif
    }
}
