//go:build !noasm

// The AVX2 packing of im2col panel strips (see conv_packed_amd64.go).
// VMASKMOVPS loads only the lanes that its mask selects and zeroes the
// others; masked-off lanes do not fault, so a segment's base may point
// before its plane.

#include "textflag.h"

// func convPackAVX2(dst, plane *float32, segs *convVecSeg, np, nt, t, rows, stride int)
TEXT ·convPackAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ plane+8(FP), SI
	MOVQ segs+16(FP), R10
	MOVQ np+24(FP), DX
	MOVQ nt+32(FP), R11
	MOVQ t+40(FP), R12
	MOVQ rows+48(FP), CX
	MOVQ stride+56(FP), R13
	SHLQ $2, R13
	// BX: the segments of tap t, 72 bytes each.
	MOVQ R12, AX
	IMULQ DX, AX
	IMULQ $72, AX
	LEAQ (R10)(AX*1), BX

row:
	TESTQ CX, CX
	JZ done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ DX, R8

seg:
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	VMOVDQU 8(BX), Y2
	VMOVDQU 40(BX), Y3
	VMASKMOVPS 0(R9), Y2, Y4
	VMASKMOVPS 32(R9), Y3, Y5
	VORPS Y4, Y0, Y0
	VORPS Y5, Y1, Y1
	ADDQ $72, BX
	DECQ R8
	JNZ seg

	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, DI
	DECQ CX
	INCQ R12
	CMPQ R12, R11
	JLT row
	// Next channel: tap 0 of the next plane.
	XORQ R12, R12
	MOVQ R10, BX
	ADDQ R13, SI
	JMP row

done:
	VZEROUPPER
	RET
