// The store of the convolutions (conv.comp, convgemm.comp, dwconv.comp),
// included after their declarations of y, bias and sum, of act.glsl and
// of the push constants p with flags (bit 0: bias is bound; bit 1: sum is
// bound; bits 8-15: the activation, one of act.glsl's codes), alpha and
// beta (the activation's parameters). The activation is a push constant
// rather than a specialization constant: the branch on it is uniform,
// once per output element, and a model's convolutions share one pipeline
// whatever their activations.

// activation returns the code of the activation to apply.
int activation() {
    return int((p.flags >> 8u) & 255u);
}

// epilogue adds the bias of channel mi and the Sum at output index at to
// v, applies the activation and stores it.
void epilogue(uint at, uint mi, float v) {
    if ((p.flags & 1u) != 0u) {
        v += float(bias[mi]);
    }
    if ((p.flags & 2u) != 0u) {
        v += float(sum[at]);
    }
    y[at] = DATA(act(activation(), v, p.alpha, p.beta));
}
