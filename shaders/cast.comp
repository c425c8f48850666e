// Cast between float32 (F), int32 (I), int64 (L, a pair of 32-bit
// words, low first), bool (B), uint8 (U), int8 (S), float16 (H) and
// bfloat16 (R) with Go's conversion rules: floats truncate toward zero,
// wider integers keep their low bits, int64 to float32 rounds to nearest
// even, a number is true when it is not zero, and bools are 0 or 1. A
// float16 or bfloat16 is widened to float32 exactly; float32 is rounded to
// them to nearest even (beyond float16's range to infinity; NaN stays
// NaN), an integer through float32. OP is 8 * from + to with F = 0, I = 1,
// L = 2, B = 3, U = 4, S = 5, H = 6, R = 7. The 1- and 2-byte types are
// read and written through 32-bit words: with a 1-byte result, invocation
// w writes word w of y, elements 4w .. 4w+3; with a 2-byte one, elements
// 2w and 2w+1.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
} p;

const int FROM = OP / 8;
const int TO = OP % 8;
const bool BYTES = TO >= 3 && TO <= 5;
const bool HALVES = TO >= 6;

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

// halfBits rounds f to the nearest float16, ties to even: the bits.
uint halfBits(float f) {
    uint b = floatBitsToUint(f);
    uint sign = (b >> 16) & 0x8000u;
    uint e = (b >> 23) & 0xffu;
    uint m = b & 0x7fffffu;
    if (e == 0xffu) {
        return sign | 0x7c00u | (m != 0u ? 0x200u | (m >> 13) : 0u);
    }
    int he = int(e) - 112;
    if (he >= 31) {
        return sign | 0x7c00u;
    }
    uint h, rem, halfway;
    if (he <= 0) {
        // A subnormal float16: units of 2^-24.
        if (he < -10) {
            return sign;
        }
        m |= 0x800000u;
        uint shift = uint(14 - he);
        h = m >> shift;
        rem = m & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1u);
    } else {
        h = (uint(he) << 10) | (m >> 13);
        rem = m & 0x1fffu;
        halfway = 0x1000u;
    }
    // A carry out of the mantissa steps the exponent, up to infinity.
    if (rem > halfway || rem == halfway && (h & 1u) != 0u) {
        h++;
    }
    return sign | h;
}

// bfloatBits rounds f to the nearest bfloat16, ties to even: the bits.
uint bfloatBits(float f) {
    uint b = floatBitsToUint(f);
    if (isnan(f)) {
        return (b >> 16) | 0x40u;
    }
    return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

// load reads element i as the int64 (hi, lo), the float32 f and whether
// it is not zero.
void load(uint i, out uint lo, out uint hi, out float f, out bool nz) {
    if (FROM == 0 || FROM >= 6) {
        uint bits;
        if (FROM == 0) {
            bits = x[i];
        } else {
            uint h = (x[i >> 1] >> (16u * (i & 1u))) & 0xffffu;
            bits = FROM == 7 ? h << 16 : floatBitsToUint(unpackHalf2x16(h).x);
        }
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
    uint units = BYTES ? (p.n + 3u) / 4u : HALVES ? (p.n + 1u) / 2u : p.n;
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
        if (HALVES) {
            uint word = 0u;
            for (uint k = 0u; k < 2u && 2u * i + k < p.n; k++) {
                load(2u * i + k, lo, hi, f, nz);
                word |= (TO == 6 ? halfBits(f) : bfloatBits(f)) << (16u * k);
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
