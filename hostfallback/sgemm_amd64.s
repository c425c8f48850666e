//go:build !noasm

// Single-precision GEMM micro-kernels and the CPU feature probes that
// choose among them (see sgemm_amd64.go). Each kernel computes a full
// MR×NR tile of C from packed strips: a (kc·MR values, MR per k-step) and
// b (kc·NR values, NR per k-step), storing it into c (row stride ldc
// floats) or, when add is set, adding it to c; storing, it first adds
// bias[i] to row i when bias is not nil. kc must be at least 1. The
// Direct variants read A unpacked instead: mr rows of row stride lda floats.
// The Half variants compute only the first NR/2 columns of the tile.

#include "textflag.h"

// CONV_SHIFT is the body of the shifted-convolution tile kernels (see
// convShiftKernel): ZERO clears the sums, KSTEP adds one k-step (B at DX,
// A packed at SI, astep bytes a k-step), BIAS adds the bias at AX, STORE
// stores the tile at DI (row stride R10 bytes).
#define CONV_SHIFT(ZERO, KSTEP, astep, BIAS, STORE) \
	MOVQ a+8(FP), SI \
	MOVQ b+16(FP), DI \
	MOVQ plane+24(FP), R12 \
	SHLQ $2, R12 \
	MOVQ offs+32(FP), R13 \
	MOVQ taps+40(FP), BX \
	ZERO \
tap: \
	MOVQ (R13), DX \
	LEAQ (DI)(DX*4), DX \
	MOVQ c+0(FP), CX \
loop: \
	KSTEP \
	ADDQ $astep, SI \
	ADDQ R12, DX \
	DECQ CX \
	JNZ loop \
	ADDQ $8, R13 \
	DECQ BX \
	JNZ tap \
	MOVQ bias+64(FP), AX \
	BIAS \
	MOVQ out+48(FP), DI \
	MOVQ ldc+56(FP), R10 \
	SHLQ $2, R10 \
	STORE \
	VZEROUPPER \
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// ZERO_Y4_Y15 clears the twelve accumulators of the AVX2 tiles.
#define ZERO_Y4_Y15 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14 \
	VXORPS Y15, Y15, Y15

// The rows of the 16-wide AVX2 tiles, a row's two halves in lo and hi
// (DI its first value in C, AX the bias, Y0 and Y1 the k-step of the B
// strip): ROW_FMA adds the A value at addr (broadcast in y) times the
// B strip, ROW_ADD adds the row to C, ROW_BIAS adds the bias value at
// off(AX), ROW_STORE stores the row.
#define ROW_FMA(addr, y, lo, hi) \
	VBROADCASTSS addr, y \
	VFMADD231PS Y0, y, lo \
	VFMADD231PS Y1, y, hi

#define ROW_ADD(lo, hi) \
	VADDPS 0(DI), lo, lo \
	VMOVUPS lo, 0(DI) \
	VADDPS 32(DI), hi, hi \
	VMOVUPS hi, 32(DI)

#define ROW_BIAS(off, lo, hi) \
	VBROADCASTSS off(AX), Y0 \
	VADDPS Y0, lo, lo \
	VADDPS Y0, hi, hi

#define ROW_STORE(lo, hi) \
	VMOVUPS lo, 0(DI) \
	VMOVUPS hi, 32(DI)

// TILE16_ADD, TILE16_BIAS and TILE16_STORE are ROW_ADD, ROW_BIAS and
// ROW_STORE over the six rows of a 6×16 tile (Y4-Y15), ld the row stride
// of C in bytes.
#define TILE16_ADD(ld) \
	ROW_ADD(Y4, Y5) \
	ADDQ ld, DI \
	ROW_ADD(Y6, Y7) \
	ADDQ ld, DI \
	ROW_ADD(Y8, Y9) \
	ADDQ ld, DI \
	ROW_ADD(Y10, Y11) \
	ADDQ ld, DI \
	ROW_ADD(Y12, Y13) \
	ADDQ ld, DI \
	ROW_ADD(Y14, Y15)

#define TILE16_BIAS \
	ROW_BIAS(0, Y4, Y5) \
	ROW_BIAS(4, Y6, Y7) \
	ROW_BIAS(8, Y8, Y9) \
	ROW_BIAS(12, Y10, Y11) \
	ROW_BIAS(16, Y12, Y13) \
	ROW_BIAS(20, Y14, Y15)

#define TILE16_STORE(ld) \
	ROW_STORE(Y4, Y5) \
	ADDQ ld, DI \
	ROW_STORE(Y6, Y7) \
	ADDQ ld, DI \
	ROW_STORE(Y8, Y9) \
	ADDQ ld, DI \
	ROW_STORE(Y10, Y11) \
	ADDQ ld, DI \
	ROW_STORE(Y12, Y13) \
	ADDQ ld, DI \
	ROW_STORE(Y14, Y15)

// KSTEP_6X16 is the k-step of the packed 6×16 AVX2 tile: B's two vectors
// loaded from DX, A's six values from SI, the sums in Y4–Y15.
#define KSTEP_6X16 \
	VMOVUPS 0(DX), Y0 \
	VMOVUPS 32(DX), Y1 \
	ROW_FMA(0(SI), Y2, Y4, Y5) \
	ROW_FMA(4(SI), Y3, Y6, Y7) \
	ROW_FMA(8(SI), Y2, Y8, Y9) \
	ROW_FMA(12(SI), Y3, Y10, Y11) \
	ROW_FMA(16(SI), Y2, Y12, Y13) \
	ROW_FMA(20(SI), Y3, Y14, Y15)

// func gemmAVX2(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	ZERO_Y4_Y15
loop:
	KSTEP_6X16
	ADDQ $24, SI
	ADDQ $64, DX
	DECQ CX
	JNZ loop
	CMPB add+40(FP), $0
	JEQ store
	TILE16_ADD(R8)
	VZEROUPPER
	RET
store:
	MOVQ bias+48(FP), AX
	TESTQ AX, AX
	JZ plain
	TILE16_BIAS
plain:
	TILE16_STORE(R8)
	VZEROUPPER
	RET

// func gemmAVX2Direct(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2Direct(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R11
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Y4_Y15
loop:
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	ROW_FMA((SI), Y2, Y4, Y5)
	ROW_FMA((SI)(R8*1), Y3, Y6, Y7)
	ROW_FMA((SI)(R8*2), Y2, Y8, Y9)
	ROW_FMA((SI)(R9*1), Y3, Y10, Y11)
	ROW_FMA((R11), Y2, Y12, Y13)
	ROW_FMA((R11)(R8*1), Y3, Y14, Y15)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $64, DX
	DECQ CX
	JNZ loop
	CMPB add+48(FP), $0
	JEQ store
	TILE16_ADD(R10)
	VZEROUPPER
	RET
store:
	MOVQ bias+56(FP), AX
	TESTQ AX, AX
	JZ plain
	TILE16_BIAS
plain:
	TILE16_STORE(R10)
	VZEROUPPER
	RET

// ZERO_Y4_Y11 and ZERO_Y4_Y7 clear the accumulators of 4- and 2-row
// tiles.
#define ZERO_Y4_Y7 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

#define ZERO_Y4_Y11 \
	ZERO_Y4_Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11

// gemmAVX2Direct4 and gemmAVX2Direct2 are gemmAVX2Direct for the 4 and 2
// rows of a partial strip of A (4×16 and 2×16 tiles).
// func gemmAVX2Direct4(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2Direct4(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Y4_Y11
direct4Loop:
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	ROW_FMA((SI), Y2, Y4, Y5)
	ROW_FMA((SI)(R8*1), Y3, Y6, Y7)
	ROW_FMA((SI)(R8*2), Y2, Y8, Y9)
	ROW_FMA((SI)(R9*1), Y3, Y10, Y11)
	ADDQ $4, SI
	ADDQ $64, DX
	DECQ CX
	JNZ direct4Loop
	CMPB add+48(FP), $0
	JEQ direct4Store
	ROW_ADD(Y4, Y5)
	ADDQ R10, DI
	ROW_ADD(Y6, Y7)
	ADDQ R10, DI
	ROW_ADD(Y8, Y9)
	ADDQ R10, DI
	ROW_ADD(Y10, Y11)
	VZEROUPPER
	RET
direct4Store:
	MOVQ bias+56(FP), AX
	TESTQ AX, AX
	JZ direct4Plain
	ROW_BIAS(0, Y4, Y5)
	ROW_BIAS(4, Y6, Y7)
	ROW_BIAS(8, Y8, Y9)
	ROW_BIAS(12, Y10, Y11)
direct4Plain:
	ROW_STORE(Y4, Y5)
	ADDQ R10, DI
	ROW_STORE(Y6, Y7)
	ADDQ R10, DI
	ROW_STORE(Y8, Y9)
	ADDQ R10, DI
	ROW_STORE(Y10, Y11)
	VZEROUPPER
	RET

// func gemmAVX2Direct2(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2Direct2(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Y4_Y7
direct2Loop:
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	ROW_FMA((SI), Y2, Y4, Y5)
	ROW_FMA((SI)(R8*1), Y3, Y6, Y7)
	ADDQ $4, SI
	ADDQ $64, DX
	DECQ CX
	JNZ direct2Loop
	CMPB add+48(FP), $0
	JEQ direct2Store
	ROW_ADD(Y4, Y5)
	ADDQ R10, DI
	ROW_ADD(Y6, Y7)
	VZEROUPPER
	RET
direct2Store:
	MOVQ bias+56(FP), AX
	TESTQ AX, AX
	JZ direct2Plain
	ROW_BIAS(0, Y4, Y5)
	ROW_BIAS(4, Y6, Y7)
direct2Plain:
	ROW_STORE(Y4, Y5)
	ADDQ R10, DI
	ROW_STORE(Y6, Y7)
	VZEROUPPER
	RET

// The epilogue of the 6×8 tiles (Y4-Y9 the even k-steps' sums, Y10-Y15
// the odd ones', DI the tile's first row of C, R10 the row stride in
// bytes): HALF_SUM adds the halves, HALF_ADD adds the tile to C,
// HALF_BIAS adds bias[i] (at AX) to row i, HALF_STORE stores the tile.
#define HALF_SUM \
	VADDPS Y10, Y4, Y4 \
	VADDPS Y11, Y5, Y5 \
	VADDPS Y12, Y6, Y6 \
	VADDPS Y13, Y7, Y7 \
	VADDPS Y14, Y8, Y8 \
	VADDPS Y15, Y9, Y9

#define HALF_ADD \
	VADDPS 0(DI), Y4, Y4 \
	VMOVUPS Y4, 0(DI) \
	ADDQ R10, DI \
	VADDPS 0(DI), Y5, Y5 \
	VMOVUPS Y5, 0(DI) \
	ADDQ R10, DI \
	VADDPS 0(DI), Y6, Y6 \
	VMOVUPS Y6, 0(DI) \
	ADDQ R10, DI \
	VADDPS 0(DI), Y7, Y7 \
	VMOVUPS Y7, 0(DI) \
	ADDQ R10, DI \
	VADDPS 0(DI), Y8, Y8 \
	VMOVUPS Y8, 0(DI) \
	ADDQ R10, DI \
	VADDPS 0(DI), Y9, Y9 \
	VMOVUPS Y9, 0(DI)

#define HALF_BIAS \
	VBROADCASTSS 0(AX), Y0 \
	VADDPS Y0, Y4, Y4 \
	VBROADCASTSS 4(AX), Y0 \
	VADDPS Y0, Y5, Y5 \
	VBROADCASTSS 8(AX), Y0 \
	VADDPS Y0, Y6, Y6 \
	VBROADCASTSS 12(AX), Y0 \
	VADDPS Y0, Y7, Y7 \
	VBROADCASTSS 16(AX), Y0 \
	VADDPS Y0, Y8, Y8 \
	VBROADCASTSS 20(AX), Y0 \
	VADDPS Y0, Y9, Y9

#define HALF_STORE \
	VMOVUPS Y4, 0(DI) \
	ADDQ R10, DI \
	VMOVUPS Y5, 0(DI) \
	ADDQ R10, DI \
	VMOVUPS Y6, 0(DI) \
	ADDQ R10, DI \
	VMOVUPS Y7, 0(DI) \
	ADDQ R10, DI \
	VMOVUPS Y8, 0(DI) \
	ADDQ R10, DI \
	VMOVUPS Y9, 0(DI)

// func gemmAVX2Half(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2Half(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R10
	SHLQ $2, R10
	ZERO_Y4_Y15
	MOVQ CX, BX
	SHRQ $1, BX
	JZ single
pair:
	VMOVUPS 0(DX), Y0
	VMOVUPS 64(DX), Y1
	VBROADCASTSS 0(SI), Y2
	VFMADD231PS Y0, Y2, Y4
	VBROADCASTSS 24(SI), Y3
	VFMADD231PS Y1, Y3, Y10
	VBROADCASTSS 4(SI), Y2
	VFMADD231PS Y0, Y2, Y5
	VBROADCASTSS 28(SI), Y3
	VFMADD231PS Y1, Y3, Y11
	VBROADCASTSS 8(SI), Y2
	VFMADD231PS Y0, Y2, Y6
	VBROADCASTSS 32(SI), Y3
	VFMADD231PS Y1, Y3, Y12
	VBROADCASTSS 12(SI), Y2
	VFMADD231PS Y0, Y2, Y7
	VBROADCASTSS 36(SI), Y3
	VFMADD231PS Y1, Y3, Y13
	VBROADCASTSS 16(SI), Y2
	VFMADD231PS Y0, Y2, Y8
	VBROADCASTSS 40(SI), Y3
	VFMADD231PS Y1, Y3, Y14
	VBROADCASTSS 20(SI), Y2
	VFMADD231PS Y0, Y2, Y9
	VBROADCASTSS 44(SI), Y3
	VFMADD231PS Y1, Y3, Y15
	ADDQ $48, SI
	ADDQ $128, DX
	DECQ BX
	JNZ pair
single:
	TESTQ $1, CX
	JZ sum
	VMOVUPS 0(DX), Y0
	VBROADCASTSS 0(SI), Y2
	VFMADD231PS Y0, Y2, Y4
	VBROADCASTSS 4(SI), Y2
	VFMADD231PS Y0, Y2, Y5
	VBROADCASTSS 8(SI), Y2
	VFMADD231PS Y0, Y2, Y6
	VBROADCASTSS 12(SI), Y2
	VFMADD231PS Y0, Y2, Y7
	VBROADCASTSS 16(SI), Y2
	VFMADD231PS Y0, Y2, Y8
	VBROADCASTSS 20(SI), Y2
	VFMADD231PS Y0, Y2, Y9
sum:
	HALF_SUM
	CMPB add+40(FP), $0
	JEQ store
	HALF_ADD
	VZEROUPPER
	RET
store:
	MOVQ bias+48(FP), AX
	TESTQ AX, AX
	JZ plain
	HALF_BIAS
plain:
	HALF_STORE
	VZEROUPPER
	RET

// func gemmAVX2HalfDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX2HalfDirect(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R11
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Y4_Y15
	MOVQ CX, BX
	SHRQ $1, BX
	JZ single
pair:
	VMOVUPS 0(DX), Y0
	VMOVUPS 64(DX), Y1
	VBROADCASTSS (SI), Y2
	VFMADD231PS Y0, Y2, Y4
	VBROADCASTSS 4(SI), Y3
	VFMADD231PS Y1, Y3, Y10
	VBROADCASTSS (SI)(R8*1), Y2
	VFMADD231PS Y0, Y2, Y5
	VBROADCASTSS 4(SI)(R8*1), Y3
	VFMADD231PS Y1, Y3, Y11
	VBROADCASTSS (SI)(R8*2), Y2
	VFMADD231PS Y0, Y2, Y6
	VBROADCASTSS 4(SI)(R8*2), Y3
	VFMADD231PS Y1, Y3, Y12
	VBROADCASTSS (SI)(R9*1), Y2
	VFMADD231PS Y0, Y2, Y7
	VBROADCASTSS 4(SI)(R9*1), Y3
	VFMADD231PS Y1, Y3, Y13
	VBROADCASTSS (R11), Y2
	VFMADD231PS Y0, Y2, Y8
	VBROADCASTSS 4(R11), Y3
	VFMADD231PS Y1, Y3, Y14
	VBROADCASTSS (R11)(R8*1), Y2
	VFMADD231PS Y0, Y2, Y9
	VBROADCASTSS 4(R11)(R8*1), Y3
	VFMADD231PS Y1, Y3, Y15
	ADDQ $8, SI
	ADDQ $8, R11
	ADDQ $128, DX
	DECQ BX
	JNZ pair
single:
	TESTQ $1, CX
	JZ sum
	VMOVUPS 0(DX), Y0
	VBROADCASTSS (SI), Y2
	VFMADD231PS Y0, Y2, Y4
	VBROADCASTSS (SI)(R8*1), Y2
	VFMADD231PS Y0, Y2, Y5
	VBROADCASTSS (SI)(R8*2), Y2
	VFMADD231PS Y0, Y2, Y6
	VBROADCASTSS (SI)(R9*1), Y2
	VFMADD231PS Y0, Y2, Y7
	VBROADCASTSS (R11), Y2
	VFMADD231PS Y0, Y2, Y8
	VBROADCASTSS (R11)(R8*1), Y2
	VFMADD231PS Y0, Y2, Y9
sum:
	HALF_SUM
	CMPB add+48(FP), $0
	JEQ store
	HALF_ADD
	VZEROUPPER
	RET
store:
	MOVQ bias+56(FP), AX
	TESTQ AX, AX
	JZ plain
	HALF_BIAS
plain:
	HALF_STORE
	VZEROUPPER
	RET

// ZERO_Z16_Z31 clears the sums of the 8×32 AVX-512 tiles, two registers
// a row.
#define ZERO_Z16_Z31 \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// ZROW_ADD adds one row of sums (lo, hi) to the row at dst and stores
// them there; ZROW_STORE stores them; ZROW_BIAS adds the value at b to
// both; ZROW_FMA adds a times B's two vectors (Z0, Z1).
#define ZROW_ADD(dst, lo, hi) \
	VADDPS 0(dst), lo, lo; \
	VMOVUPS lo, 0(dst); \
	VADDPS 64(dst), hi, hi; \
	VMOVUPS hi, 64(dst)
#define ZROW_STORE(dst, lo, hi) \
	VMOVUPS lo, 0(dst); \
	VMOVUPS hi, 64(dst)
#define ZROW_BIAS(b, lo, hi) \
	VADDPS.BCST b, lo, lo; \
	VADDPS.BCST b, hi, hi
#define ZROW_FMA(a, lo, hi) \
	VFMADD231PS Z0, a, lo; \
	VFMADD231PS Z1, a, hi

// ADD_8X32 adds the sums to the 8×32 tile at dst (row stride ld bytes)
// and stores them there; dst ends at the last row.
#define ADD_8X32(dst, ld) \
	ZROW_ADD(dst, Z16, Z17); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z18, Z19); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z20, Z21); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z22, Z23); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z24, Z25); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z26, Z27); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z28, Z29); \
	ADDQ ld, dst; \
	ZROW_ADD(dst, Z30, Z31)

// BIAS_8X32 adds b[i] to row i of the sums.
#define BIAS_8X32(b) \
	ZROW_BIAS(0(b), Z16, Z17); \
	ZROW_BIAS(4(b), Z18, Z19); \
	ZROW_BIAS(8(b), Z20, Z21); \
	ZROW_BIAS(12(b), Z22, Z23); \
	ZROW_BIAS(16(b), Z24, Z25); \
	ZROW_BIAS(20(b), Z26, Z27); \
	ZROW_BIAS(24(b), Z28, Z29); \
	ZROW_BIAS(28(b), Z30, Z31)

// STORE_8X32 stores the sums into the 8×32 tile at dst (row stride ld
// bytes); dst ends at the last row.
#define STORE_8X32(dst, ld) \
	ZROW_STORE(dst, Z16, Z17); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z18, Z19); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z20, Z21); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z22, Z23); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z24, Z25); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z26, Z27); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z28, Z29); \
	ADDQ ld, dst; \
	ZROW_STORE(dst, Z30, Z31)

// FMA_8X32 is the k-step of the 8×32 AVX-512 tiles: B's two vectors in
// Z0 and Z1, A's eight values broadcast in Z2–Z9, one register a row (an
// FMA with a broadcast memory operand would load each value twice), and
// the sums in Z16–Z31, two a row.
#define FMA_8X32 \
	ZROW_FMA(Z2, Z16, Z17); \
	ZROW_FMA(Z3, Z18, Z19); \
	ZROW_FMA(Z4, Z20, Z21); \
	ZROW_FMA(Z5, Z22, Z23); \
	ZROW_FMA(Z6, Z24, Z25); \
	ZROW_FMA(Z7, Z26, Z27); \
	ZROW_FMA(Z8, Z28, Z29); \
	ZROW_FMA(Z9, Z30, Z31)

// KSTEP_8X32 is FMA_8X32 with B's vectors loaded from DX and A's eight
// values from SI, packed.
#define KSTEP_8X32 \
	VMOVUPS 0(DX), Z0; \
	VMOVUPS 64(DX), Z1; \
	VBROADCASTSS 0(SI), Z2; \
	VBROADCASTSS 4(SI), Z3; \
	VBROADCASTSS 8(SI), Z4; \
	VBROADCASTSS 12(SI), Z5; \
	VBROADCASTSS 16(SI), Z6; \
	VBROADCASTSS 20(SI), Z7; \
	VBROADCASTSS 24(SI), Z8; \
	VBROADCASTSS 28(SI), Z9; \
	FMA_8X32

// func gemmAVX512(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX512(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	ZERO_Z16_Z31
loop:
	KSTEP_8X32
	ADDQ $32, SI
	ADDQ $128, DX
	DECQ CX
	JNZ loop
	CMPB add+40(FP), $0
	JEQ store
	ADD_8X32(DI, R8)
	VZEROUPPER
	RET
store:
	MOVQ bias+48(FP), AX
	TESTQ AX, AX
	JZ plain
	BIAS_8X32(AX)
plain:
	STORE_8X32(DI, R8)
	VZEROUPPER
	RET

// func gemmAVX512Direct(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX512Direct(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R11
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Z16_Z31
loop:
	VMOVUPS 0(DX), Z0
	VMOVUPS 64(DX), Z1
	VBROADCASTSS (SI), Z2
	VBROADCASTSS (SI)(R8*1), Z3
	VBROADCASTSS (SI)(R8*2), Z4
	VBROADCASTSS (SI)(R9*1), Z5
	VBROADCASTSS (R11), Z6
	VBROADCASTSS (R11)(R8*1), Z7
	VBROADCASTSS (R11)(R8*2), Z8
	VBROADCASTSS (R11)(R9*1), Z9
	FMA_8X32
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $128, DX
	DECQ CX
	JNZ loop
	CMPB add+48(FP), $0
	JEQ store
	ADD_8X32(DI, R10)
	VZEROUPPER
	RET
store:
	MOVQ bias+56(FP), AX
	TESTQ AX, AX
	JZ plain
	BIAS_8X32(AX)
plain:
	STORE_8X32(DI, R10)
	VZEROUPPER
	RET


// The 8×16 AVX-512 tiles: the even k-steps' sums in Z16–Z23, the odd
// ones' in Z24–Z31, one register a row, so that sixteen independent sums
// hide the FMA latency; A's values are broadcast by the FMAs themselves
// (each is read once). ZHALF_SUM adds the halves, ZHALF_ADD adds the tile
// to C at dst (row stride ld bytes), ZHALF_BIAS adds b[i] to row i,
// ZHALF_STORE stores the tile.
#define ZHALF_SUM \
	VADDPS Z24, Z16, Z16; \
	VADDPS Z25, Z17, Z17; \
	VADDPS Z26, Z18, Z18; \
	VADDPS Z27, Z19, Z19; \
	VADDPS Z28, Z20, Z20; \
	VADDPS Z29, Z21, Z21; \
	VADDPS Z30, Z22, Z22; \
	VADDPS Z31, Z23, Z23

#define ZHALF_ADD(dst, ld) \
	VADDPS 0(dst), Z16, Z16; \
	VMOVUPS Z16, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z17, Z17; \
	VMOVUPS Z17, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z18, Z18; \
	VMOVUPS Z18, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z19, Z19; \
	VMOVUPS Z19, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z20, Z20; \
	VMOVUPS Z20, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z21, Z21; \
	VMOVUPS Z21, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z22, Z22; \
	VMOVUPS Z22, 0(dst); \
	ADDQ ld, dst; \
	VADDPS 0(dst), Z23, Z23; \
	VMOVUPS Z23, 0(dst)

#define ZHALF_BIAS(b) \
	VADDPS.BCST 0(b), Z16, Z16; \
	VADDPS.BCST 4(b), Z17, Z17; \
	VADDPS.BCST 8(b), Z18, Z18; \
	VADDPS.BCST 12(b), Z19, Z19; \
	VADDPS.BCST 16(b), Z20, Z20; \
	VADDPS.BCST 20(b), Z21, Z21; \
	VADDPS.BCST 24(b), Z22, Z22; \
	VADDPS.BCST 28(b), Z23, Z23

#define ZHALF_STORE(dst, ld) \
	VMOVUPS Z16, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z17, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z18, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z19, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z20, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z21, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z22, 0(dst); \
	ADDQ ld, dst; \
	VMOVUPS Z23, 0(dst)

// ZHALF_EPILOGUE sums the halves and adds the tile to C at DI (row stride
// ld bytes) when add (at addoff(FP)) is set, else stores it, with the bias
// at biasoff(FP) when that is not nil.
#define ZHALF_EPILOGUE(ld, add, bias) \
	ZHALF_SUM; \
	CMPB add, $0; \
	JEQ store; \
	ZHALF_ADD(DI, ld); \
	VZEROUPPER; \
	RET; \
store: \
	MOVQ bias, AX; \
	TESTQ AX, AX; \
	JZ plain; \
	ZHALF_BIAS(AX); \
plain: \
	ZHALF_STORE(DI, ld); \
	VZEROUPPER; \
	RET
// func gemmAVX512Half(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX512Half(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	ZERO_Z16_Z31
	MOVQ CX, BX
	SHRQ $1, BX
	JZ single
pair:
	VMOVUPS 0(DX), Z0
	VMOVUPS 128(DX), Z1
	VFMADD231PS.BCST 0(SI), Z0, Z16
	VFMADD231PS.BCST 32(SI), Z1, Z24
	VFMADD231PS.BCST 4(SI), Z0, Z17
	VFMADD231PS.BCST 36(SI), Z1, Z25
	VFMADD231PS.BCST 8(SI), Z0, Z18
	VFMADD231PS.BCST 40(SI), Z1, Z26
	VFMADD231PS.BCST 12(SI), Z0, Z19
	VFMADD231PS.BCST 44(SI), Z1, Z27
	VFMADD231PS.BCST 16(SI), Z0, Z20
	VFMADD231PS.BCST 48(SI), Z1, Z28
	VFMADD231PS.BCST 20(SI), Z0, Z21
	VFMADD231PS.BCST 52(SI), Z1, Z29
	VFMADD231PS.BCST 24(SI), Z0, Z22
	VFMADD231PS.BCST 56(SI), Z1, Z30
	VFMADD231PS.BCST 28(SI), Z0, Z23
	VFMADD231PS.BCST 60(SI), Z1, Z31
	ADDQ $64, SI
	ADDQ $256, DX
	DECQ BX
	JNZ pair
single:
	TESTQ $1, CX
	JZ sum
	VMOVUPS 0(DX), Z0
	VFMADD231PS.BCST 0(SI), Z0, Z16
	VFMADD231PS.BCST 4(SI), Z0, Z17
	VFMADD231PS.BCST 8(SI), Z0, Z18
	VFMADD231PS.BCST 12(SI), Z0, Z19
	VFMADD231PS.BCST 16(SI), Z0, Z20
	VFMADD231PS.BCST 20(SI), Z0, Z21
	VFMADD231PS.BCST 24(SI), Z0, Z22
	VFMADD231PS.BCST 28(SI), Z0, Z23
sum:
	ZHALF_EPILOGUE(R8, add+40(FP), bias+48(FP))
// func gemmAVX512HalfDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
TEXT ·gemmAVX512HalfDirect(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R11
	MOVQ b+24(FP), DX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	ZERO_Z16_Z31
	MOVQ CX, BX
	SHRQ $1, BX
	JZ single
pair:
	VMOVUPS 0(DX), Z0
	VMOVUPS 128(DX), Z1
	VFMADD231PS.BCST (SI), Z0, Z16
	VFMADD231PS.BCST 4(SI), Z1, Z24
	VFMADD231PS.BCST (SI)(R8*1), Z0, Z17
	VFMADD231PS.BCST 4(SI)(R8*1), Z1, Z25
	VFMADD231PS.BCST (SI)(R8*2), Z0, Z18
	VFMADD231PS.BCST 4(SI)(R8*2), Z1, Z26
	VFMADD231PS.BCST (SI)(R9*1), Z0, Z19
	VFMADD231PS.BCST 4(SI)(R9*1), Z1, Z27
	VFMADD231PS.BCST (R11), Z0, Z20
	VFMADD231PS.BCST 4(R11), Z1, Z28
	VFMADD231PS.BCST (R11)(R8*1), Z0, Z21
	VFMADD231PS.BCST 4(R11)(R8*1), Z1, Z29
	VFMADD231PS.BCST (R11)(R8*2), Z0, Z22
	VFMADD231PS.BCST 4(R11)(R8*2), Z1, Z30
	VFMADD231PS.BCST (R11)(R9*1), Z0, Z23
	VFMADD231PS.BCST 4(R11)(R9*1), Z1, Z31
	ADDQ $8, SI
	ADDQ $8, R11
	ADDQ $256, DX
	DECQ BX
	JNZ pair
single:
	TESTQ $1, CX
	JZ sum
	VMOVUPS 0(DX), Z0
	VFMADD231PS.BCST (SI), Z0, Z16
	VFMADD231PS.BCST (SI)(R8*1), Z0, Z17
	VFMADD231PS.BCST (SI)(R8*2), Z0, Z18
	VFMADD231PS.BCST (SI)(R9*1), Z0, Z19
	VFMADD231PS.BCST (R11), Z0, Z20
	VFMADD231PS.BCST (R11)(R8*1), Z0, Z21
	VFMADD231PS.BCST (R11)(R8*2), Z0, Z22
	VFMADD231PS.BCST (R11)(R9*1), Z0, Z23
sum:
	ZHALF_EPILOGUE(R10, add+48(FP), bias+56(FP))

#define BIAS_8X32_AX BIAS_8X32(AX)
#define STORE_8X32_R10 STORE_8X32(DI, R10)
#define TILE16_STORE_R10 TILE16_STORE(R10)

// func convShiftAVX512(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)
//
// The 8×32 tile of a convolution over padded phase planes (see
// convShiftKernel): for each of the taps t, for each of the c channels,
// the sums gain A's next eight values (A packed eight a k-step, taps
// outer, channels inner) times the 32 floats of B at b + offs[t] +
// ch·plane; then bias[i] is added to row i and the tile stored at out
// (row stride ldc floats).
TEXT ·convShiftAVX512(SB), NOSPLIT, $0-72
	CONV_SHIFT(ZERO_Z16_Z31, KSTEP_8X32, 32, BIAS_8X32_AX, STORE_8X32_R10)

// func convShiftAVX2(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)
//
// convShiftAVX512 on the 6×16 AVX2 tile (A packed six a k-step).
TEXT ·convShiftAVX2(SB), NOSPLIT, $0-72
	CONV_SHIFT(ZERO_Y4_Y15, KSTEP_6X16, 24, TILE16_BIAS, TILE16_STORE_R10)

// func gemmDotAVX2(a, b *float32, n int) float32
TEXT ·gemmDotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dotloop:
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS 0(DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ dotloop
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// gemmWarm issues a PREFETCHT0 for each of lines cache lines from p on.
// func gemmWarm(p *float32, lines int)
TEXT ·gemmWarm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE done
warm:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	DECQ CX
	JNZ warm
done:
	RET
