// quotient(x, s) is x / s rounded to float32 to nearest, ties to even, as
// an IEEE 754 division (the CPU's) rounds it, for finite x and finite
// nonzero s (other operands divide as OpFDiv does). Vulkan lets OpFDiv err by 2.5 ulp, and the quantizers round the
// quotient again to an integer, where one ulp moves a value across a tie:
// so the quotient is a long division of the 24-bit significands, with a
// guard bit and a sticky remainder. Results below float32's normal range
// may be flushed to zero (Vulkan allows it), which no caller tells from
// their rounding.

// significand returns the significand of finite nonzero |x| as an integer
// m, 2^23 <= m < 2^24, and sets e so that |x| = m * 2^e.
uint significand(float x, out int e) {
    uint b = floatBitsToUint(x) & 0x7fffffffu;
    uint m = b & 0x7fffffu;
    if (b >> 23 == 0u) {
        int s = 23 - findMSB(m);
        e = -149 - s;
        return m << s;
    }
    e = int(b >> 23) - 150;
    return m | 0x800000u;
}

float quotient(float x, float s) {
    if (x == 0.0 || s == 0.0 || isinf(x) || isnan(x) || isinf(s) || isnan(s)) {
        return x / s;
    }
    int ex, es;
    uint mx = significand(x, ex);
    uint ms = significand(s, es);
    int e = ex - es;
    if (mx < ms) {
        mx <<= 1;
        e--;
    }
    // 1 <= mx / ms < 2: 25 quotient bits are the 24 of the significand and
    // a guard bit; r is the remainder, 0 only when the division is exact.
    uint q = 0u;
    uint r = mx;
    for (int i = 0; i < 25; i++) {
        q <<= 1;
        if (r >= ms) {
            r -= ms;
            q |= 1u;
        }
        r <<= 1;
    }
    uint m = q >> 1;
    if ((q & 1u) != 0u && (r != 0u || (m & 1u) != 0u)) {
        m++;
    }
    float v = ldexp(float(m), e - 23);
    return (x < 0.0) != (s < 0.0) ? -v : v;
}
