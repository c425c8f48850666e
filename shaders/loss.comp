// NegativeLogLikelihoodLoss (OP 0) and SoftmaxCrossEntropyLoss (OP 1) on
// fp32. The input is read as [N, C, inner]; row r = n * inner + i has the
// C scores at n * C * inner + i + c * inner and the target t[r] (int32,
// or the low word of an int64 when tstride is 2). SoftmaxCrossEntropyLoss
// takes the log softmax of each row first and, when flags has LOGPROB,
// writes it to lp. Without reduction y[r] is the row's loss; with sum or
// mean one workgroup accumulates every row and writes y[0].
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int SCE = 1;

// flags bits.
const uint WEIGHT = 1u;
const uint IGNORE = 2u;
const uint LOGPROB = 4u;
const uint SUM = 8u;
const uint MEAN = 16u;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer T { int t[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer L { float lp[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint classes;
    uint inner;
    uint tstride;
    uint flags;
    int ignore;
} p;

shared float ps[256];
shared float pw[256];

// target returns row r's class; an int64 outside the int32 range reads as
// -1 unless -1 is the ignored index, then as C (both out of range).
int target(uint r) {
    int v = t[r * p.tstride];
    if (p.tstride == 2u && t[r * 2u + 1u] != (v < 0 ? -1 : 0)) {
        return (p.flags & IGNORE) != 0u && p.ignore == -1 ? int(p.classes) : -1;
    }
    return v;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    float s = 0.0;
    float ws = 0.0;
    for (uint r = gl_GlobalInvocationID.x; r < p.rows; r += gl_NumWorkGroups.x * 256u) {
        uint base = (r / p.inner) * p.classes * p.inner + r % p.inner;
        float shift = 0.0;
        if (OP == SCE) {
            float m = -1.0 / 0.0;
            for (uint c = 0u; c < p.classes; c++) {
                m = max(m, x[base + c * p.inner]);
            }
            float e = 0.0;
            for (uint c = 0u; c < p.classes; c++) {
                e += exp(x[base + c * p.inner] - m);
            }
            shift = m + log(e);
            if ((p.flags & LOGPROB) != 0u) {
                for (uint c = 0u; c < p.classes; c++) {
                    lp[base + c * p.inner] = x[base + c * p.inner] - shift;
                }
            }
        }
        int c = target(r);
        float l = 0.0;
        if ((p.flags & IGNORE) == 0u || c != p.ignore) {
            if (c < 0 || c >= int(p.classes)) {
                l = uintBitsToFloat(0x7fc00000u);
                ws += l;
            } else {
                float wt = (p.flags & WEIGHT) != 0u ? w[c] : 1.0;
                l = -(x[base + uint(c) * p.inner] - shift) * wt;
                ws += wt;
            }
            s += l;
        }
        if ((p.flags & (SUM | MEAN)) == 0u) {
            y[r] = l;
        }
    }
    if ((p.flags & (SUM | MEAN)) == 0u) {
        return;
    }
    ps[lid] = s;
    pw[lid] = ws;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1u) {
        if (lid < h) {
            ps[lid] += ps[lid + h];
            pw[lid] += pw[lid + h];
        }
        barrier();
    }
    if (lid == 0u) {
        y[0] = (p.flags & MEAN) != 0u ? ps[0] / pw[0] : ps[0];
    }
}
