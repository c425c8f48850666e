// Cast between float32 (F), int32 (I), int64 (L, a pair of 32-bit
// words, low first), bool (B), uint8 (U) and int8 (S) with Go's conversion
// rules: floats truncate toward zero, wider integers keep their low bits,
// int64 to float32 rounds to nearest even, a number is true when it is not
// zero, and bools are 0 or 1. OP is 6 * from + to with F = 0, I = 1, L = 2,
// B = 3, U = 4, S = 5. The 1-byte types are read and written through
// 32-bit words: with a 1-byte result, invocation w writes word w of y,
// elements 4w .. 4w+3.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
} p;

const int FROM = OP / 6;
const int TO = OP % 6;
const bool BYTES = TO >= 3;

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

// load reads element i as the int64 (hi, lo), the float32 f and whether
// it is not zero.
void load(uint i, out uint lo, out uint hi, out float f, out bool nz) {
    if (FROM == 0) {
        uint bits = x[i];
        f = uintBitsToFloat(bits);
        nz = (bits & 0x7fffffffu) != 0u;
        if (abs(f) < 2147483648.0) {
            int v = int(f);
            lo = uint(v);
            hi = v < 0 ? 0xffffffffu : 0u;
        } else {
            float h = floor(f * 2.3283064365386963e-10);
            hi = uint(int(h));
            lo = uint(f - h * 4294967296.0);
        }
        return;
    }
    if (FROM == 1) {
        lo = x[i];
        hi = int(lo) < 0 ? 0xffffffffu : 0u;
        f = float(int(lo));
    } else if (FROM == 2) {
        lo = x[2u * i];
        hi = x[2u * i + 1u];
        f = toFloat(hi, lo);
    } else {
        int v = int(x[i >> 2] >> (8u * (i & 3u))) & 0xff;
        if (FROM == 5) {
            v = (v ^ 0x80) - 0x80;
        }
        lo = uint(v);
        hi = v < 0 ? 0xffffffffu : 0u;
        f = float(v);
    }
    nz = (lo | hi) != 0u;
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint units = BYTES ? (p.n + 3u) / 4u : p.n;
    for (uint i = gl_GlobalInvocationID.x; i < units; i += stride) {
        uint lo, hi;
        float f;
        bool nz;
        if (BYTES) {
            uint word = 0u;
            for (uint k = 0u; k < 4u && 4u * i + k < p.n; k++) {
                load(4u * i + k, lo, hi, f, nz);
                word |= (TO == 3 ? (nz ? 1u : 0u) : lo & 0xffu) << (8u * k);
            }
            y[i] = word;
            continue;
        }
        load(i, lo, hi, f, nz);
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
