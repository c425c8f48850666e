// Package shaders holds onnxvk's GLSL compute shaders and their SPIR-V,
// compiled by glslc and committed beside the sources. Run go generate after
// editing a .comp file; a test fails when a .spv is stale. A variant of a
// shader (NAME_VARIANT.spv) is the same .comp compiled with a -D define on
// its own go:generate line, such as matmul_f16w.spv: matmul.comp with
// HALF_WEIGHTS, which reads the weights as fp16; NAME_f16.spv, compiled
// with HALF, whose tensors are float16 (see half.glsl); and NAME_sg.spv
// and NAME_f16_sg.spv, compiled with SUBGROUP, which reduce through
// subgroup operations (see subgroup.glsl). NAME_f16_cm.spv, compiled with
// HALF and COOPMAT, multiply on the matrix units and need a glslc that
// knows GL_KHR_cooperative_matrix: Debian 12's (shaderc 2023.2) does not,
// Debian 13's (shaderc 2025.2) and sid's (2026.4, which
// bench/gpucheck/lavapipe-next.sh fetches), which built the committed
// files, do.
package shaders

import (
	"embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

//go:generate glslc --target-env=vulkan1.1 -O -o argmax.spv argmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o argmax_f16.spv argmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o argmax_f16_sg.spv argmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o argmax_sg.spv argmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -o attention.spv attention.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o attention_f16.spv attention.comp
//go:generate glslc --target-env=vulkan1.1 -O -o batchnorm.spv batchnorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o batchnorm_f16.spv batchnorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -o binary.spv binary.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o binary_f16.spv binary.comp
//go:generate glslc --target-env=vulkan1.1 -O -o cast.spv cast.comp
//go:generate glslc --target-env=vulkan1.1 -O -o chain.spv chain.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o chain_f16.spv chain.comp
//go:generate glslc --target-env=vulkan1.1 -O -o clip.spv clip.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o clip_f16.spv clip.comp
//go:generate glslc --target-env=vulkan1.1 -O -o conv.spv conv.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o conv_f16.spv conv.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF_WEIGHTS -o conv_f16w.spv conv.comp
//go:generate glslc --target-env=vulkan1.1 -O -o convgemm.spv convgemm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o convgemm_f16.spv convgemm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DCOOPMAT -o convgemm_f16_cm.spv convgemm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF_WEIGHTS -o convgemm_f16w.spv convgemm.comp
//go:generate glslc --target-env=vulkan1.1 -O -o copy.spv copy.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o copy_f16.spv copy.comp
//go:generate glslc --target-env=vulkan1.1 -O -o cumsum.spv cumsum.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o cumsum_f16.spv cumsum.comp
//go:generate glslc --target-env=vulkan1.1 -O -o dwconv.spv dwconv.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o dwconv_f16.spv dwconv.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF_WEIGHTS -o dwconv_f16w.spv dwconv.comp
//go:generate glslc --target-env=vulkan1.1 -O -o dynquant.spv dynquant.comp
//go:generate glslc --target-env=vulkan1.1 -O -o flashattn.spv flashattn.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o flashattn_f16.spv flashattn.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o flashattn_f16_sg.spv flashattn.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o flashattn_sg.spv flashattn.comp
//go:generate glslc --target-env=vulkan1.1 -O -o gather.spv gather.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o gather_f16.spv gather.comp
//go:generate glslc --target-env=vulkan1.1 -O -o gatherelements.spv gatherelements.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o gatherelements_f16.spv gatherelements.comp
//go:generate glslc --target-env=vulkan1.1 -O -o integer.spv integer.comp
//go:generate glslc --target-env=vulkan1.1 -O -DDOT -o integer_dot.spv integer.comp
//go:generate glslc --target-env=vulkan1.1 -O -o intops.spv intops.comp
//go:generate glslc --target-env=vulkan1.1 -O -o layernorm.spv layernorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o layernorm_f16.spv layernorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o layernorm_f16_sg.spv layernorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o layernorm_sg.spv layernorm.comp
//go:generate glslc --target-env=vulkan1.1 -O -o loss.spv loss.comp
//go:generate glslc --target-env=vulkan1.1 -O -o matmul.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o matmul_f16.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DCOOPMAT -o matmul_f16_cm.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o matmul_f16_sg.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF_WEIGHTS -o matmul_f16w.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF_WEIGHTS -DSUBGROUP -o matmul_f16w_sg.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o matmul_sg.spv matmul.comp
//go:generate glslc --target-env=vulkan1.1 -O -o pad.spv pad.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o pad_f16.spv pad.comp
//go:generate glslc --target-env=vulkan1.1 -O -o pool.spv pool.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o pool_f16.spv pool.comp
//go:generate glslc --target-env=vulkan1.1 -O -o predicate.spv predicate.comp
//go:generate glslc --target-env=vulkan1.1 -O -o qdq.spv qdq.comp
//go:generate glslc --target-env=vulkan1.1 -O -o reduce.spv reduce.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o reduce_f16.spv reduce.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o reduce_f16_sg.spv reduce.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o reduce_sg.spv reduce.comp
//go:generate glslc --target-env=vulkan1.1 -O -o requant.spv requant.comp
//go:generate glslc --target-env=vulkan1.1 -O -o resize.spv resize.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o resize_f16.spv resize.comp
//go:generate glslc --target-env=vulkan1.1 -O -o rotary.spv rotary.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o rotary_f16.spv rotary.comp
//go:generate glslc --target-env=vulkan1.1 -O -o softmax.spv softmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o softmax_f16.spv softmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -DSUBGROUP -o softmax_f16_sg.spv softmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -DSUBGROUP -o softmax_sg.spv softmax.comp
//go:generate glslc --target-env=vulkan1.1 -O -o tensorscatter.spv tensorscatter.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o tensorscatter_f16.spv tensorscatter.comp
//go:generate glslc --target-env=vulkan1.1 -O -o transpose.spv transpose.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o transpose_f16.spv transpose.comp
//go:generate glslc --target-env=vulkan1.1 -O -o trilu.spv trilu.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o trilu_f16.spv trilu.comp
//go:generate glslc --target-env=vulkan1.1 -O -o unary.spv unary.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o unary_f16.spv unary.comp
//go:generate glslc --target-env=vulkan1.1 -O -o where.spv where.comp
//go:generate glslc --target-env=vulkan1.1 -O -DHALF -o where_f16.spv where.comp
//go:generate go test -run ^TestSPIRVSum$ -update .

//go:embed *.spv
var spirv embed.FS

// includes holds the GLSL included by the shaders, which declare the op
// codes that Go passes as specialization constants or in params.
//
//go:embed *.glsl
var includes embed.FS

// GlslcFlags are the flags go generate passes to glslc (besides -o).
var GlslcFlags = []string{"--target-env=vulkan1.1", "-O"}

// SPIRV returns the SPIR-V words of the named shader ("unary" for
// unary.comp), copied into a []uint32: embedded bytes are not 4-byte
// aligned.
func SPIRV(name string) ([]uint32, error) {
	b, err := spirv.ReadFile(name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("shaders: %w", err)
	}
	if len(b)%4 != 0 || len(b) == 0 {
		return nil, fmt.Errorf("shaders: %s.spv: %d bytes is not a whole number of words", name, len(b))
	}
	words := make([]uint32, len(b)/4)
	for i := range words {
		words[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	return words, nil
}

// constDecl matches a GLSL integer constant declaration.
var constDecl = regexp.MustCompile(`^const int ([A-Za-z_][A-Za-z0-9_]*) = (-?[0-9]+);`)

// Constants returns the integer constants that the named include file
// ("unary.glsl") declares on lines of the form "const int PREFIXNAME = N;",
// keyed by NAME: the op codes of its shaders, so that Go states none of
// them again. Two names with one code are an error.
func Constants(file, prefix string) (map[string]int32, error) {
	src, err := includes.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("shaders: %w", err)
	}
	out := map[string]int32{}
	names := map[int32]string{}
	for line := range strings.Lines(string(src)) {
		m := constDecl.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], prefix) {
			continue
		}
		v, err := strconv.ParseInt(m[2], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("shaders: %s: %s: %w", file, m[1], err)
		}
		name, code := strings.TrimPrefix(m[1], prefix), int32(v)
		if other, dup := names[code]; dup {
			return nil, fmt.Errorf("shaders: %s: %s%s and %s%s are both %d", file, prefix, other, prefix, name, code)
		}
		out[name], names[code] = code, name
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("shaders: %s declares no constant %sNAME", file, prefix)
	}
	return out, nil
}
