//go:build !noasm

// The GEMV kernels (see gemv_amd64.go): for each block of 16 columns of C
// (32 with AVX-512), eight accumulators, two per k-step of an unrolling by
// four, summed and added to C at the end of the block.

#include "textflag.h"

// GEMV is the body of gemvAVX2 and gemvAVX512, for blocks of two vectors
// of columns (vec bytes each, 2·vec a block): eight accumulators r0…r7,
// two per k-step of an unrolling by four, summed and added to C at the
// end of the block; b0…b3 hold the broadcast values of A. ZERO is the
// instruction that zeroes a register of the width. The AVX-512 kernel
// does the AVX2 kernel's sums in the same order, lane by lane.
#define GEMV(ZERO, vec, block, r0, r1, r2, r3, r4, r5, r6, r7, b0, b1, b2, b3) \
	MOVQ k+0(FP), R9 \
	MOVQ a+8(FP), R10 \
	MOVQ b+16(FP), DI \
	MOVQ ldb+24(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (R8)(R8*2), R12 \
	MOVQ c+32(FP), DX \
	MOVQ blocks+40(FP), BX \
gemvblock: \
	MOVQ R10, SI \
	MOVQ DI, R11 \
	ZERO r0, r0, r0 \
	ZERO r1, r1, r1 \
	ZERO r2, r2, r2 \
	ZERO r3, r3, r3 \
	ZERO r4, r4, r4 \
	ZERO r5, r5, r5 \
	ZERO r6, r6, r6 \
	ZERO r7, r7, r7 \
	MOVQ R9, CX \
	SHRQ $2, CX \
	JZ gemvtail \
gemvquad: \
	VBROADCASTSS 0(SI), b0 \
	VBROADCASTSS 4(SI), b1 \
	VBROADCASTSS 8(SI), b2 \
	VBROADCASTSS 12(SI), b3 \
	VFMADD231PS 0(R11), b0, r0 \
	VFMADD231PS vec(R11), b0, r1 \
	VFMADD231PS 0(R11)(R8*1), b1, r2 \
	VFMADD231PS vec(R11)(R8*1), b1, r3 \
	VFMADD231PS 0(R11)(R8*2), b2, r4 \
	VFMADD231PS vec(R11)(R8*2), b2, r5 \
	VFMADD231PS 0(R11)(R12*1), b3, r6 \
	VFMADD231PS vec(R11)(R12*1), b3, r7 \
	LEAQ (R11)(R8*4), R11 \
	ADDQ $16, SI \
	DECQ CX \
	JNZ gemvquad \
gemvtail: \
	MOVQ R9, CX \
	ANDQ $3, CX \
	JZ gemvstore \
gemvone: \
	VBROADCASTSS 0(SI), b0 \
	VFMADD231PS 0(R11), b0, r0 \
	VFMADD231PS vec(R11), b0, r1 \
	ADDQ R8, R11 \
	ADDQ $4, SI \
	DECQ CX \
	JNZ gemvone \
gemvstore: \
	VADDPS r2, r0, r0 \
	VADDPS r3, r1, r1 \
	VADDPS r6, r4, r4 \
	VADDPS r7, r5, r5 \
	VADDPS r4, r0, r0 \
	VADDPS r5, r1, r1 \
	VADDPS 0(DX), r0, r0 \
	VADDPS vec(DX), r1, r1 \
	VMOVUPS r0, 0(DX) \
	VMOVUPS r1, vec(DX) \
	ADDQ $block, DI \
	ADDQ $block, DX \
	DECQ BX \
	JNZ gemvblock \
	VZEROUPPER \
	RET

// func gemvAVX2(k int, a, b *float32, ldb int, c *float32, blocks int)
TEXT ·gemvAVX2(SB), NOSPLIT, $0-48
	GEMV(VXORPS, 32, 64, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)

// func gemvAVX512(k int, a, b *float32, ldb int, c *float32, blocks int)
//
// GEMV on blocks of 32 columns.
TEXT ·gemvAVX512(SB), NOSPLIT, $0-48
	GEMV(VPXORD, 64, 128, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11)
