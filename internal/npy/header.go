package npy

import (
	"fmt"
	"math"
	"strings"
)

// header is the parsed dictionary that follows a .npy file's preamble.
type header struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseHeader parses the header dictionary, a Python literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, padded with
// spaces and ended by a newline. Its three keys are required and no others
// are allowed, as in NumPy.
func parseHeader(s string) (header, error) {
	p := &literalParser{s: s}
	var h header
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, p.fail("expected '{'")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, p.fail("duplicate key " + key)
		}
		seen[key] = true
		if !p.eat(':') {
			return h, p.fail("expected ':'")
		}
		switch key {
		case "descr":
			if p.peek() == '[' {
				return h, fmt.Errorf("%w: structured dtype", ErrUnsupported)
			}
			h.descr, err = p.str()
		case "fortran_order":
			h.fortran, err = p.boolean()
		case "shape":
			h.shape, err = p.tuple()
		default:
			return h, p.fail("unexpected key " + key)
		}
		if err != nil {
			return h, err
		}
		if !p.eat(',') && p.peek() != '}' {
			return h, p.fail("expected ',' or '}'")
		}
	}
	if strings.TrimRight(p.s[p.i:], " \t\r\n\x00") != "" {
		return h, p.fail("text after the dictionary")
	}
	if len(seen) != 3 {
		return h, fmt.Errorf("%w: header lacks descr, fortran_order or shape", ErrFormat)
	}
	return h, nil
}

// literalParser reads the small subset of Python literals .npy headers use.
type literalParser struct {
	s string
	i int
}

func (p *literalParser) fail(msg string) error {
	return fmt.Errorf("%w: header at byte %d: %s", ErrFormat, p.i, msg)
}

func (p *literalParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *literalParser) peek() byte {
	p.skipSpace()
	if p.i == len(p.s) {
		return 0
	}
	return p.s[p.i]
}

// eat consumes c if it is the next non-space byte.
func (p *literalParser) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *literalParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.fail("expected a string")
	}
	n := strings.IndexByte(p.s[p.i+1:], q)
	if n < 0 {
		return "", p.fail("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+n]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", p.fail("escape in string")
	}
	p.i += n + 2
	return v, nil
}

func (p *literalParser) boolean() (bool, error) {
	p.skipSpace()
	for _, w := range []string{"True", "False"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, p.fail("expected True or False")
}

// tuple reads a tuple of non-negative integers: (), (3,), (2, 3). Python 2
// wrote long integers with an L suffix, which is accepted.
func (p *literalParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, p.fail("expected a tuple")
	}
	dims := []int64{}
	for !p.eat(')') {
		d, err := p.integer()
		if err != nil {
			return nil, err
		}
		dims = append(dims, d)
		if !p.eat(',') && p.peek() != ')' {
			return nil, p.fail("expected ',' or ')'")
		}
	}
	return dims, nil
}

func (p *literalParser) integer() (int64, error) {
	p.skipSpace()
	start := p.i
	var v int64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		d := int64(p.s[p.i] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, p.fail("dimension too large")
		}
		v = v*10 + d
		p.i++
	}
	if p.i == start {
		return 0, p.fail("expected a dimension")
	}
	if p.i < len(p.s) && p.s[p.i] == 'L' {
		p.i++
	}
	return v, nil
}
