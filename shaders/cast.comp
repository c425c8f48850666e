// Cast between float32 (F), int32 (I) and int64 (L, a pair of 32-bit
// words, low first) with Go's conversion rules: floats truncate toward
// zero, int64 to int32 keeps the low word, int64 to float32 rounds to
// nearest even. OP is 3 * from + to with F = 0, I = 1, L = 2; from ≠ to.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
} p;

const int FROM = OP / 3;
const int TO = OP % 3;

// toFloat rounds the int64 (hi, lo) to float32: the top 32 bits of its
// magnitude with a sticky bit for the rest convert correctly rounded.
float toFloat(uint hi, uint lo) {
    bool neg = int(hi) < 0;
    if (neg) {
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0u ? 1u : 0u);
    }
    float f;
    if (hi == 0u) {
        f = float(lo);
    } else {
        int n = findMSB(hi) + 1;
        uint m = n == 32 ? hi : (hi << (32 - n)) | (lo >> n);
        if (n < 32 && (lo & ((1u << n) - 1u)) != 0u || n == 32 && lo != 0u) {
            m |= 1u;
        }
        f = ldexp(float(m), n);
    }
    return neg ? -f : f;
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint lo, hi;
        float f;
        if (FROM == 0) {
            f = uintBitsToFloat(x[i]);
            if (abs(f) < 2147483648.0) {
                int v = int(f);
                lo = uint(v);
                hi = v < 0 ? 0xffffffffu : 0u;
            } else {
                float h = floor(f * 2.3283064365386963e-10);
                hi = uint(int(h));
                lo = uint(f - h * 4294967296.0);
            }
        } else if (FROM == 1) {
            lo = x[i];
            hi = int(lo) < 0 ? 0xffffffffu : 0u;
            f = float(int(lo));
        } else {
            lo = x[2u * i];
            hi = x[2u * i + 1u];
            f = toFloat(hi, lo);
        }
        if (TO == 0) {
            y[i] = floatBitsToUint(f);
        } else if (TO == 1) {
            y[i] = lo;
        } else {
            y[2u * i] = lo;
            y[2u * i + 1u] = hi;
        }
    }
}
