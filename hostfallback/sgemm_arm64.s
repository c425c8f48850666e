//go:build !noasm

// Single-precision GEMM micro-kernels for arm64 (Advanced SIMD, which every
// arm64 CPU has), with the contract of the amd64 ones (sgemm_amd64.s): a
// full 6×16 tile of C from kc k-steps of packed strips (or, for the
// Direct variant, of six rows of A lda floats apart), stored into c (row
// stride ldc floats) or, when add is set, added to it; storing, bias[i] is
// added to row i when bias is not nil. kc must be at least 1. The
// accumulators V8–V31 (four vectors a row) start from C itself when add
// is set, from the row's bias, or from zero; V0–V3 hold a k-step of B and
// V4, V5 a broadcast value of A.

#include "textflag.h"

// ROW_FMA adds the k-step of B times the broadcast va to a row's
// accumulators.
#define ROW_FMA(va, d0, d1, d2, d3) \
	VFMLA V0.S4, va.S4, d0.S4 \
	VFMLA V1.S4, va.S4, d1.S4 \
	VFMLA V2.S4, va.S4, d2.S4 \
	VFMLA V3.S4, va.S4, d3.S4

// KSTEP is one k-step of the tile: B's 16 values from R2 on, A's six
// from a0…a5 (each stepped past the value it reads; the same register
// six times for a packed strip).
#define KSTEP(a0, a1, a2, a3, a4, a5) \
	VLD1.P 64(R2), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1R.P 4(a0), [V4.S4] \
	VLD1R.P 4(a1), [V5.S4] \
	ROW_FMA(V4, V8, V9, V10, V11) \
	VLD1R.P 4(a2), [V4.S4] \
	ROW_FMA(V5, V12, V13, V14, V15) \
	VLD1R.P 4(a3), [V5.S4] \
	ROW_FMA(V4, V16, V17, V18, V19) \
	VLD1R.P 4(a4), [V4.S4] \
	ROW_FMA(V5, V20, V21, V22, V23) \
	VLD1R.P 4(a5), [V5.S4] \
	ROW_FMA(V4, V24, V25, V26, V27) \
	ROW_FMA(V5, V28, V29, V30, V31)

// ROW_BIAS sets a row's accumulators to the bias value at R6 and steps R6
// to the next.
#define ROW_BIAS(d0, d1, d2, d3) \
	VLD1R (R6), [d0.S4] \
	VLD1R (R6), [d1.S4] \
	VLD1R (R6), [d2.S4] \
	VLD1R.P 4(R6), [d3.S4]

// TILE_START sets the accumulators: the tile of C at R3 (row stride R4
// bytes) when R5 (add) is not zero, else the bias at R6 when not nil, else
// zero. It uses R7.
#define TILE_START \
	CBZ R5, noadd \
	MOVD R3, R7 \
	VLD1 (R7), [V8.S4, V9.S4, V10.S4, V11.S4] \
	ADD R4, R7 \
	VLD1 (R7), [V12.S4, V13.S4, V14.S4, V15.S4] \
	ADD R4, R7 \
	VLD1 (R7), [V16.S4, V17.S4, V18.S4, V19.S4] \
	ADD R4, R7 \
	VLD1 (R7), [V20.S4, V21.S4, V22.S4, V23.S4] \
	ADD R4, R7 \
	VLD1 (R7), [V24.S4, V25.S4, V26.S4, V27.S4] \
	ADD R4, R7 \
	VLD1 (R7), [V28.S4, V29.S4, V30.S4, V31.S4] \
	B loop \
noadd: \
	CBZ R6, zero \
	ROW_BIAS(V8, V9, V10, V11) \
	ROW_BIAS(V12, V13, V14, V15) \
	ROW_BIAS(V16, V17, V18, V19) \
	ROW_BIAS(V20, V21, V22, V23) \
	ROW_BIAS(V24, V25, V26, V27) \
	ROW_BIAS(V28, V29, V30, V31) \
	B loop \
zero: \
	VEOR V8.B16, V8.B16, V8.B16 \
	VEOR V9.B16, V9.B16, V9.B16 \
	VEOR V10.B16, V10.B16, V10.B16 \
	VEOR V11.B16, V11.B16, V11.B16 \
	VEOR V12.B16, V12.B16, V12.B16 \
	VEOR V13.B16, V13.B16, V13.B16 \
	VEOR V14.B16, V14.B16, V14.B16 \
	VEOR V15.B16, V15.B16, V15.B16 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VEOR V17.B16, V17.B16, V17.B16 \
	VEOR V18.B16, V18.B16, V18.B16 \
	VEOR V19.B16, V19.B16, V19.B16 \
	VEOR V20.B16, V20.B16, V20.B16 \
	VEOR V21.B16, V21.B16, V21.B16 \
	VEOR V22.B16, V22.B16, V22.B16 \
	VEOR V23.B16, V23.B16, V23.B16 \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	VEOR V28.B16, V28.B16, V28.B16 \
	VEOR V29.B16, V29.B16, V29.B16 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16

// TILE_STORE writes the accumulators to the tile of C at R3 (row stride
// R4 bytes).
#define TILE_STORE \
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R3) \
	ADD R4, R3 \
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R3) \
	ADD R4, R3 \
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R3) \
	ADD R4, R3 \
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R3) \
	ADD R4, R3 \
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3) \
	ADD R4, R3 \
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R3)

// func gemmNEON(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmNEON(SB), NOSPLIT, $0-56
	MOVD kc+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD c+24(FP), R3
	MOVD ldc+32(FP), R4
	LSL $2, R4
	MOVBU add+40(FP), R5
	MOVD bias+48(FP), R6
	TILE_START
loop:
	KSTEP(R1, R1, R1, R1, R1, R1)
	SUBS $1, R0
	BNE loop
	TILE_STORE
	RET

// func gemmNEONDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmNEONDirect(SB), NOSPLIT, $0-64
	MOVD kc+0(FP), R0
	MOVD a+8(FP), R9
	MOVD lda+16(FP), R8
	LSL $2, R8
	ADD R8, R9, R10
	ADD R8, R10, R11
	ADD R8, R11, R12
	ADD R8, R12, R13
	ADD R8, R13, R14
	MOVD b+24(FP), R2
	MOVD c+32(FP), R3
	MOVD ldc+40(FP), R4
	LSL $2, R4
	MOVBU add+48(FP), R5
	MOVD bias+56(FP), R6
	TILE_START
loop:
	KSTEP(R9, R10, R11, R12, R13, R14)
	SUBS $1, R0
	BNE loop
	TILE_STORE
	RET

// gemmWarm asks the CPU to bring lines cache lines from p on into L1.
// func gemmWarm(p *float32, lines int)
TEXT ·gemmWarm(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD lines+8(FP), R1
	CMP $0, R1
	BLE done
warm:
	PRFM (R0), PLDL1KEEP
	ADD $64, R0
	SUBS $1, R1
	BNE warm
done:
	RET
