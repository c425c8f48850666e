// ReduceSum (OP 0), ReduceMean (1), ReduceMax (2) and ReduceMin (3) on
// fp32 over one run of adjacent axes. The input is read as
// [outer, len, inner] and y[o * inner + i] reduces the len elements at
// o * len * inner + i + j * inner. One workgroup reduces a row at a time
// in shared memory.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int SUM = 0;
const int MEAN = 1;
const int MAX = 2;
const int MIN = 3;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint len;
    uint inner;
} p;

shared float part[256];

float combine(float u, float v) {
    switch (OP) {
    case MAX: return max(u, v);
    case MIN: return min(u, v);
    }
    return u + v;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    float id = OP == MAX ? -1.0 / 0.0 : OP == MIN ? 1.0 / 0.0 : 0.0;
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
        float v = id;
        for (uint j = lid; j < p.len; j += 256u) {
            float e = x[base + j * p.inner];
            // max and min propagate NaN, as the CPU kernels do.
            v = isnan(e) ? e : combine(v, e);
        }
        part[lid] = v;
        barrier();
        for (uint s = 128u; s > 0u; s >>= 1u) {
            if (lid < s) {
                float u = part[lid];
                float w = part[lid + s];
                part[lid] = isnan(w) ? w : combine(u, w);
            }
            barrier();
        }
        if (lid == 0u) {
            y[r] = OP == MEAN ? part[0] / float(p.len) : part[0];
        }
        barrier();
    }
}
