//go:build !noasm

// The integer tile (see qgemm.go and qgemm_amd64.go): eight ymm
// accumulators, two per row of A, each holding eight int32 columns. Per
// pair of k: the panel's 16 columns in two ymm (the pair's two values of a
// column side by side), each row's pair broadcast as a dword, VPMADDWD
// multiplying and summing the two products of every column, VPADDD adding
// them to the row's accumulators.

#include "textflag.h"

// QTILE_START loads the tile's arguments (A at SI, its row stride in
// bytes in R8 and three rows' in R10, the panel at DI, C at DX, its row
// stride in bytes in R9, the pair count in CX) and clears the eight
// accumulators; QTILE_STORE stores them into C's four rows and returns.
#define QTILE_START \
	MOVQ pairs+0(FP), CX \
	MOVQ a+8(FP), SI \
	MOVQ lda+16(FP), R8 \
	SHLQ $1, R8 \
	LEAQ (R8)(R8*2), R10 \
	MOVQ b+24(FP), DI \
	MOVQ c+32(FP), DX \
	MOVQ ldc+40(FP), R9 \
	SHLQ $2, R9 \
	VPXOR Y0, Y0, Y0 \
	VPXOR Y1, Y1, Y1 \
	VPXOR Y2, Y2, Y2 \
	VPXOR Y3, Y3, Y3 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7

#define QTILE_STORE \
	VMOVDQU Y0, 0(DX) \
	VMOVDQU Y1, 32(DX) \
	ADDQ R9, DX \
	VMOVDQU Y2, 0(DX) \
	VMOVDQU Y3, 32(DX) \
	ADDQ R9, DX \
	VMOVDQU Y4, 0(DX) \
	VMOVDQU Y5, 32(DX) \
	ADDQ R9, DX \
	VMOVDQU Y6, 0(DX) \
	VMOVDQU Y7, 32(DX) \
	VZEROUPPER \
	RET

// func qgemmAVX2Tile(pairs int, a *int16, lda int, b *int32, c *int32, ldc int)
TEXT ·qgemmAVX2Tile(SB), NOSPLIT, $0-48
	QTILE_START

qgemmpair:
	VMOVDQU 0(DI), Y8
	VMOVDQU 32(DI), Y9
	VPBROADCASTD 0(SI), Y10
	VPBROADCASTD 0(SI)(R8*1), Y11
	VPMADDWD Y8, Y10, Y12
	VPMADDWD Y9, Y10, Y13
	VPADDD Y12, Y0, Y0
	VPADDD Y13, Y1, Y1
	VPMADDWD Y8, Y11, Y14
	VPMADDWD Y9, Y11, Y15
	VPADDD Y14, Y2, Y2
	VPADDD Y15, Y3, Y3
	VPBROADCASTD 0(SI)(R8*2), Y10
	VPBROADCASTD 0(SI)(R10*1), Y11
	VPMADDWD Y8, Y10, Y12
	VPMADDWD Y9, Y10, Y13
	VPADDD Y12, Y4, Y4
	VPADDD Y13, Y5, Y5
	VPMADDWD Y8, Y11, Y14
	VPMADDWD Y9, Y11, Y15
	VPADDD Y14, Y6, Y6
	VPADDD Y15, Y7, Y7
	ADDQ $4, SI
	ADDQ $64, DI
	DECQ CX
	JNZ qgemmpair

	QTILE_STORE

// func qgemmPairRowsAVX2(dst, r0, r1 *int32, n int)
TEXT ·qgemmPairRowsAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	VPCMPEQD Y2, Y2, Y2
	VPSRLD $16, Y2, Y2

qgemmpairrow:
	VPAND 0(SI), Y2, Y0
	VMOVDQU 0(DX), Y1
	VPSLLD $16, Y1, Y1
	VPOR Y1, Y0, Y0
	VMOVDQU Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ qgemmpairrow
	VZEROUPPER
	RET

// func qgemmVNNITile(pairs int, a *int16, lda int, b *int32, c *int32, ldc int)
//
// qgemmAVX2Tile with AVX512-VNNI: VPDPWSSD multiplies the pairs, sums each
// column's two products and adds them to the accumulator in one
// instruction, where AVX2 takes VPMADDWD and VPADDD (EVEX-encoded ymm, so
// AVX512VL as well).
TEXT ·qgemmVNNITile(SB), NOSPLIT, $0-48
	QTILE_START

qvnnipair:
	VMOVDQU 0(DI), Y8
	VMOVDQU 32(DI), Y9
	VPBROADCASTD 0(SI), Y10
	VPBROADCASTD 0(SI)(R8*1), Y11
	VPBROADCASTD 0(SI)(R8*2), Y12
	VPBROADCASTD 0(SI)(R10*1), Y13
	VPDPWSSD Y8, Y10, Y0
	VPDPWSSD Y9, Y10, Y1
	VPDPWSSD Y8, Y11, Y2
	VPDPWSSD Y9, Y11, Y3
	VPDPWSSD Y8, Y12, Y4
	VPDPWSSD Y9, Y12, Y5
	VPDPWSSD Y8, Y13, Y6
	VPDPWSSD Y9, Y13, Y7
	ADDQ $4, SI
	ADDQ $64, DI
	DECQ CX
	JNZ qvnnipair

	QTILE_STORE
