// The elementwise unary ops on fp32, shared by unary.comp and chain.comp:
// unaryOp(op, v, alpha, beta) with op one of the codes below (the OP of
// unary.comp) and alpha and beta the op's attributes. U_NAME is the code
// of the ONNX op whose name in capitals is NAME: backend/vulkan reads the
// codes from here (shaders.Constants).

const int U_RELU = 0;
const int U_SIGMOID = 1;
const int U_TANH = 2;
const int U_EXP = 3;
const int U_ABS = 4;
const int U_NEG = 5;
const int U_SQRT = 6;
const int U_ERF = 7;
const int U_HARDSWISH = 8;
const int U_LEAKYRELU = 9;
const int U_ELU = 10;
const int U_SELU = 11;
const int U_HARDSIGMOID = 12;
const int U_LOG = 13;
const int U_RECIPROCAL = 14;
const int U_FLOOR = 15;
const int U_CEIL = 16;
const int U_SOFTPLUS = 17;
const int U_SOFTSIGN = 18;
const int U_SIN = 19;
const int U_COS = 20;
const int U_GELU = 21;
const int U_MISH = 22;
const int U_ROUND = 23;
const int U_TAN = 24;
const int U_ASIN = 25;
const int U_ACOS = 26;
const int U_ATAN = 27;
const int U_SINH = 28;
const int U_COSH = 29;
const int U_ASINH = 30;
const int U_ACOSH = 31;
const int U_ATANH = 32;
const int U_THRESHOLDEDRELU = 33;
const int U_CELU = 34;
const int U_SHRINK = 35;
const int U_SWISH = 36;

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_(float v) {
    float a = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    float r = 1.0 - poly * exp(-a * a);
    return v < 0.0 ? -r : r;
}

// tanh clamped where it has saturated, so that exp cannot overflow.
float tanh_(float v) {
    if (isnan(v)) {
        return v;
    }
    float e = exp(2.0 * clamp(v, -15.0, 15.0));
    return (e - 1.0) / (e + 1.0);
}

// tan_ is Cephes' tanf: the argument reduced by the nearest even multiple
// of pi/4 (pi/4 in three parts, exact products up to |v| of about 8192), a
// polynomial on [-pi/4, pi/4], and -1/tan in the odd quadrants. Near the
// poles tan is ill-conditioned: taken as sin/cos, a driver's cos with an
// absolute error bound (NVIDIA) gives relative errors of 1e-3 and more.
float tan_(float v) {
    float a = abs(v);
    float j = floor(a * 1.2732395447351628);
    j += mod(j, 2.0);
    float z = ((a - j * 0.78515625) - j * 2.4187564849853515625e-4) - j * 3.77489497744594108e-8;
    float zz = z * z;
    float y = z;
    if (a > 1.0e-4) {
        y = (((((9.38540185543e-3 * zz + 3.11992232697e-3) * zz + 2.44301354525e-2) * zz
            + 5.34112807005e-2) * zz + 1.33387994085e-1) * zz + 3.33331568548e-1) * zz * z + z;
    }
    if (mod(j, 4.0) == 2.0) {
        y = -1.0 / y;
    }
    if (isnan(v) || isinf(v)) {
        return v - v;
    }
    return (floatBitsToUint(v) & 0x80000000u) != 0u ? -y : y;
}

// softplus as max(v, 0) + log(1 + e^-|v|): e^v never overflows.
float softplus_(float v) {
    return max(v, 0.0) + log(1.0 + exp(-abs(v)));
}

float unaryOp(int op, float v, float alpha, float beta) {
    switch (op) {
    case U_RELU: return isnan(v) || v >= 0.0 ? v : 0.0;
    case U_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case U_TANH: return tanh_(v);
    case U_EXP: return exp(v);
    case U_ABS: return abs(v);
    case U_NEG: return -v;
    case U_SQRT: return sqrt(v);
    case U_ERF: return erf_(v);
    case U_HARDSWISH: return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
    case U_LEAKYRELU: return v < 0.0 ? alpha * v : v;
    case U_ELU: return v < 0.0 ? alpha * (exp(v) - 1.0) : v;
    case U_SELU: return v <= 0.0 ? beta * (alpha * exp(v) - alpha) : beta * v;
    case U_HARDSIGMOID: return isnan(v) ? v : clamp(alpha * v + beta, 0.0, 1.0);
    case U_LOG: return log(v);
    case U_RECIPROCAL: return 1.0 / v;
    case U_FLOOR: return floor(v);
    case U_CEIL: return ceil(v);
    case U_SOFTPLUS: return v > 20.0 ? v : log(1.0 + exp(v));
    case U_SOFTSIGN: return v / (1.0 + abs(v));
    case U_SIN: return sin(v);
    case U_COS: return cos(v);
    case U_GELU:
        if (alpha != 0.0) {
            return 0.5 * v * (1.0 + tanh_(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        }
        return 0.5 * v * (1.0 + erf_(v * 0.7071067811865476));
    case U_MISH: return v * tanh_(softplus_(v));
    case U_ROUND: return roundEven(v);
    case U_TAN: return tan_(v);
    case U_ASIN: return asin(v);
    case U_ACOS: return acos(v);
    case U_ATAN: return isnan(v) ? v : atan(v);
    case U_SINH: return sinh(v);
    case U_COSH: return cosh(v);
    case U_ASINH: return abs(v) > 1.0e18 ? sign(v) * (log(abs(v)) + 0.6931471805599453) : asinh(v);
    case U_ACOSH: return v < 1.0 ? 0.0 / 0.0 : (v > 1.0e18 ? log(v) + 0.6931471805599453 : acosh(v));
    case U_ATANH: return atanh(v);
    case U_THRESHOLDEDRELU: return v > alpha ? v : 0.0;
    case U_CELU: return v < 0.0 ? alpha * (exp(v / alpha) - 1.0) : v;
    case U_SHRINK: return v < -alpha ? v + beta : (v > alpha ? v - beta : 0.0);
    case U_SWISH: return v / (1.0 + exp(-alpha * v));
    }
    return v;
}

