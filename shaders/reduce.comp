// ReduceSum (OP 0), ReduceMean (1), ReduceMax (2), ReduceMin (3),
// ReduceL1 (4), ReduceL2 (5), ReduceLogSum (6), ReduceLogSumExp (7),
// ReduceProd (8) and ReduceSumSquare (9) on fp32 over one run of adjacent
// axes. The input is read as [outer, len, inner] and y[o * inner + i]
// reduces the len elements at o * len * inner + i + j * inner. One
// workgroup reduces a row at a time, through subgroup operations when
// compiled with SUBGROUP (see subgroup.glsl), else in a shared-memory
// tree, or, with serial set (short rows), each invocation a row of its
// own; ReduceLogSumExp reduces each row twice, first to its maximum, then
// to the sum of exponentials shifted by it.
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

const int SUM = 0;
const int MEAN = 1;
const int MAX = 2;
const int MIN = 3;
const int L1 = 4;
const int L2 = 5;
const int LOGSUM = 6;
const int LOGSUMEXP = 7;
const int PROD = 8;
const int SUMSQUARE = 9;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint len;
    uint inner;
    uint serial;
} p;

#ifndef SUBGROUP
shared float part[256];
#endif

float combine(int op, float u, float v) {
    switch (op) {
    case MAX: return max(u, v);
    case MIN: return min(u, v);
    case PROD: return u * v;
    }
    return u + v;
}

// fold combines v and u by op, NaN when either is: max and min propagate
// NaN, as the CPU kernels do.
float fold(int op, float v, float u) {
    return isnan(v) ? v : isnan(u) ? u : combine(op, v, u);
}

// term is what element e contributes to a reduction by op.
float term(int op, float e, float shift) {
    switch (op) {
    case L1: return abs(e);
    case L2:
    case SUMSQUARE: return e * e;
    case LOGSUMEXP: return exp(e - shift);
    }
    return e;
}

// first is where a reduction by op starts.
float first(int op) {
    return op == MAX ? -1.0 / 0.0 : op == MIN ? 1.0 / 0.0 : op == PROD ? 1.0 : 0.0;
}

// serialRow combines the terms of the row at base by op in the calling
// invocation alone.
float serialRow(int op, uint base, float shift) {
    float v = first(op);
    for (uint j = 0u; j < p.len; j++) {
        v = fold(op, v, term(op, float(x[base + j * p.inner]), shift));
    }
    return v;
}

// reduceRow combines the terms of the row at base by op and returns the
// result to every invocation.
float reduceRow(int op, uint base, float shift) {
    uint lid = gl_LocalInvocationID.x;
    float v = first(op);
    for (uint j = lid; j < p.len; j += WG) {
        v = fold(op, v, term(op, float(x[base + j * p.inner]), shift));
    }
#ifdef SUBGROUP
    // Max and min reduce keys that order NaN above (max) or below (min)
    // every number, so that it propagates.
    switch (op) {
    case MAX: {
        uint k = groupKey(isnan(v) ? 0xFFFFFFFFu : orderKey(v), true);
        return k == 0xFFFFFFFFu ? uintBitsToFloat(0x7FC00000u) : keyValue(k);
    }
    case MIN: {
        uint k = groupKey(isnan(v) ? 0u : orderKey(v), false);
        return k == 0u ? uintBitsToFloat(0x7FC00000u) : keyValue(k);
    }
    case PROD: return groupMul(v);
    }
    return groupAdd(v);
#else
    part[lid] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part[lid] = fold(op, part[lid], part[lid + s]);
        }
        barrier();
    }
    float r = part[0];
    barrier();
    return r;
#endif
}

// finish turns the combined terms v of a row into the reduction's value.
float finish(float v, float shift) {
    switch (OP) {
    case MEAN: return v / float(p.len);
    case L2: return sqrt(v);
    case LOGSUM: return log(v);
    case LOGSUMEXP: return log(v) + shift;
    }
    return v;
}

// usable is the shift ReduceLogSumExp subtracts, given the row's maximum.
float usable(float shift) {
    return isinf(shift) || isnan(shift) ? 0.0 : shift;
}

void main() {
    if (p.serial != 0u) {
        for (uint r = gl_GlobalInvocationID.x; r < p.rows; r += gl_NumWorkGroups.x * WG) {
            uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
            float shift = OP == LOGSUMEXP ? usable(serialRow(MAX, base, 0.0)) : 0.0;
            y[r] = DATA(finish(serialRow(OP, base, shift), shift));
        }
        return;
    }
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
        float shift = OP == LOGSUMEXP ? usable(reduceRow(MAX, base, 0.0)) : 0.0;
        float v = finish(reduceRow(OP, base, shift), shift);
        if (gl_LocalInvocationID.x == 0u) {
            y[r] = DATA(v);
        }
    }
}
