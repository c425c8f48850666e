// The taps of a transposed convolution's axis that reach an output (see
// conv.comp's and convgemm.comp's TRANSPOSED).

// tapStep returns the step between the taps of an axis (dilation dil,
// stride st) that reach one output position: st / gcd(st, dil), as those
// taps are congruent modulo it. So each output walks only its own (a
// quarter of a 2-D stride-2 kernel) and the invocations of a subgroup
// walk equally many.
int tapStep(int dil, int st) {
    int a = st, b = dil;
    while (b != 0) {
        int t = a % b;
        a = b;
        b = t;
    }
    return st / a;
}

// firstTap returns the first tap k of an axis (kernel size kn, dilation
// dil, stride st, tapStep step) whose input position (base - k * dil) /
// st is whole; kn where no tap is.
int firstTap(int base, int kn, int dil, int st, int step) {
    for (int k = 0; k < step && k < kn; k++) {
        int t = base - k * dil;
        // t modulo st, t possibly negative (GLSL's % is not defined
        // there).
        int r = t >= 0 ? t % st : (st - (-t) % st) % st;
        if (r == 0) {
            return k;
        }
    }
    return kn;
}
