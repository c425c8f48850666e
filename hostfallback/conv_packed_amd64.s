//go:build !noasm

// The AVX2 packing of im2col panel strips (see conv_packed_amd64.go).
// VMASKMOVPS (strides 1 and 2) and VGATHERDPS (other strides) load only
// the lanes that their mask selects; masked-off lanes do not fault, so a
// segment's base may point before its plane.

#include "textflag.h"

// The lane numbers 0…15.
DATA convPackLanes<>+0(SB)/4, $0
DATA convPackLanes<>+4(SB)/4, $1
DATA convPackLanes<>+8(SB)/4, $2
DATA convPackLanes<>+12(SB)/4, $3
DATA convPackLanes<>+16(SB)/4, $4
DATA convPackLanes<>+20(SB)/4, $5
DATA convPackLanes<>+24(SB)/4, $6
DATA convPackLanes<>+28(SB)/4, $7
DATA convPackLanes<>+32(SB)/4, $8
DATA convPackLanes<>+36(SB)/4, $9
DATA convPackLanes<>+40(SB)/4, $10
DATA convPackLanes<>+44(SB)/4, $11
DATA convPackLanes<>+48(SB)/4, $12
DATA convPackLanes<>+52(SB)/4, $13
DATA convPackLanes<>+56(SB)/4, $14
DATA convPackLanes<>+60(SB)/4, $15
GLOBL convPackLanes<>(SB), RODATA|NOPTR, $64

// STRIDE2_LOAD loads the 16 lanes of the stride-2 segment at BX (its
// base in R9) into Y12 and Y14: the two halves of the 32 values from the
// base load under the lane masks widened to every other value (VPMOVZXDQ
// puts a zero after each lane's mask), so that exactly the values a
// gather would read are read; VSHUFPS keeps the even ones and VPERMPD
// puts them in order.
#define STRIDE2_LOAD \
	VMOVDQU 8(BX), Y2 \
	VMOVDQU 40(BX), Y3 \
	VPMOVZXDQ X2, Y8 \
	VEXTRACTI128 $1, Y2, X9 \
	VPMOVZXDQ X9, Y9 \
	VPMOVZXDQ X3, Y10 \
	VEXTRACTI128 $1, Y3, X11 \
	VPMOVZXDQ X11, Y11 \
	VMASKMOVPS 0(R9), Y8, Y12 \
	VMASKMOVPS 32(R9), Y9, Y13 \
	VMASKMOVPS 64(R9), Y10, Y14 \
	VMASKMOVPS 96(R9), Y11, Y15 \
	VSHUFPS $0x88, Y13, Y12, Y12 \
	VPERMPD $0xD8, Y12, Y12 \
	VSHUFPS $0x88, Y15, Y14, Y14 \
	VPERMPD $0xD8, Y14, Y14

// func convPackAVX2(dst, plane *float32, segs *convVecSeg, np, nt, t, rows, stride, st, pitch int)
TEXT ·convPackAVX2(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ plane+8(FP), SI
	MOVQ segs+16(FP), R10
	MOVQ np+24(FP), DX
	MOVQ nt+32(FP), R11
	MOVQ t+40(FP), R12
	MOVQ rows+48(FP), CX
	MOVQ stride+56(FP), R13
	SHLQ $2, R13
	MOVQ st+64(FP), R14
	// Y6, Y7: the lane indices 0…15 times st.
	MOVL R14, X8
	VPBROADCASTD X8, Y8
	VMOVDQU convPackLanes<>+0(SB), Y6
	VMOVDQU convPackLanes<>+32(SB), Y7
	VPMULLD Y8, Y6, Y6
	VPMULLD Y8, Y7, Y7
	// R15: the bytes from one row of dst to the next (loaded after the
	// lane table, whose global access clobbers R15 when dynamic linking).
	MOVQ pitch+72(FP), R15
	SHLQ $2, R15
	// BX: the segments of tap t, 72 bytes each.
	MOVQ R12, AX
	IMULQ DX, AX
	IMULQ $72, AX
	LEAQ (R10)(AX*1), BX
	CMPQ DX, $1
	JNE several
	CMPQ R14, $2
	JEQ single2
	CMPQ R14, $1
	JEQ single
	JMP row

several:
	CMPQ R14, $1
	JNE row
	CMPQ DX, $2
	JEQ double

row:
	TESTQ CX, CX
	JZ done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ DX, R8

	CMPQ R14, $1
	JEQ seg
	CMPQ R14, $2
	JEQ pair
	JMP gather

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
	JMP store

pair:
	// Stride 2: lane k reads plane[off+2k] (see STRIDE2_LOAD).
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	STRIDE2_LOAD
	VORPS Y12, Y0, Y0
	VORPS Y14, Y1, Y1
	ADDQ $72, BX
	DECQ R8
	JNZ pair
	JMP store

gather:
	// Lane k reads plane[off+k·st]: VGATHERDPS with indices k·st (Y6,
	// Y7), under the mask (which it clears) into zeroed registers.
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	VMOVDQU 8(BX), Y2
	VMOVDQU 40(BX), Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VGATHERDPS Y2, (R9)(Y6*4), Y4
	VGATHERDPS Y3, (R9)(Y7*4), Y5
	VORPS Y4, Y0, Y0
	VORPS Y5, Y1, Y1
	ADDQ $72, BX
	DECQ R8
	JNZ gather

store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R15, DI
	DECQ CX
	INCQ R12
	CMPQ R12, R11
	JLT row
	// Next channel: tap 0 of the next plane.
	XORQ R12, R12
	MOVQ R10, BX
	ADDQ R13, SI
	JMP row

single:
	// One segment a tap, stride 1: its masked loads are the row.
	TESTQ CX, CX
	JZ done
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	VMOVDQU 8(BX), Y2
	VMOVDQU 40(BX), Y3
	VMASKMOVPS 0(R9), Y2, Y4
	VMASKMOVPS 32(R9), Y3, Y5
	VMOVUPS Y4, 0(DI)
	VMOVUPS Y5, 32(DI)
	ADDQ R15, DI
	ADDQ $72, BX
	DECQ CX
	INCQ R12
	CMPQ R12, R11
	JLT single
	XORQ R12, R12
	MOVQ R10, BX
	ADDQ R13, SI
	JMP single

single2:
	// One segment a tap, stride 2: its lanes are the row.
	TESTQ CX, CX
	JZ done
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	STRIDE2_LOAD
	VMOVUPS Y12, 0(DI)
	VMOVUPS Y14, 32(DI)
	ADDQ R15, DI
	ADDQ $72, BX
	DECQ CX
	INCQ R12
	CMPQ R12, R11
	JLT single2
	XORQ R12, R12
	MOVQ R10, BX
	ADDQ R13, SI
	JMP single2

double:
	// Two segments a tap, stride 1: the second's masked loads ORed
	// into the first's.
	TESTQ CX, CX
	JZ done
	MOVQ 0(BX), AX
	LEAQ (SI)(AX*4), R9
	VMOVDQU 8(BX), Y2
	VMOVDQU 40(BX), Y3
	VMASKMOVPS 0(R9), Y2, Y0
	VMASKMOVPS 32(R9), Y3, Y1
	MOVQ 72(BX), AX
	LEAQ (SI)(AX*4), R9
	VMOVDQU 80(BX), Y2
	VMOVDQU 112(BX), Y3
	VMASKMOVPS 0(R9), Y2, Y4
	VMASKMOVPS 32(R9), Y3, Y5
	VORPS Y4, Y0, Y0
	VORPS Y5, Y1, Y1
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R15, DI
	ADDQ $144, BX
	DECQ CX
	INCQ R12
	CMPQ R12, R11
	JLT double
	XORQ R12, R12
	MOVQ R10, BX
	ADDQ R13, SI
	JMP double

done:
	VZEROUPPER
	RET
