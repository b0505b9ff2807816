package benchfmt

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/strictjson"
)

// keptObj is a point as all-runs.json keeps it, for a client whose result is
// not kept as written (AIPerf's export, one benchmark of a GuideLLM
// report): a flat object of numbers and strings. Its bytes are what
// strictjson.Canonical writes for the same map (keys sorted, two spaces
// of indent, numbers as encoding/json writes a float64), made without
// encoding/json's reflection, once per point.
type keptObj []keptMember

type keptMember struct {
	key   string
	str   string
	num   float64
	isStr bool
}

func (k *keptObj) num(key string, v float64) { *k = append(*k, keptMember{key: key, num: v}) }
func (k *keptObj) str(key, v string)         { *k = append(*k, keptMember{key: key, str: v, isStr: true}) }

// bytes is the object's canonical JSON, without a final newline.
func (k keptObj) bytes() []byte {
	slices.SortFunc(k, func(a, b keptMember) int { return strings.Compare(a.key, b.key) })
	if len(k) == 0 {
		return []byte("{}")
	}
	b := make([]byte, 0, 32*len(k))
	b = append(b, '{')
	for i, m := range k {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  "...)
		b = strictjson.AppendString(b, m.key)
		b = append(b, ": "...)
		if m.isStr {
			b = strictjson.AppendString(b, m.str)
		} else {
			b = appendFloat(b, m.num)
		}
	}
	return append(b, "\n}"...)
}

// appendFloat appends x as encoding/json writes a float64: the shortest
// decimal that reads back to it, with an exponent below 1e-6 and from
// 1e21 on ("1e-07" written "1e-7"). x is finite: the readers keep only
// numbers strictjson parsed or computed from them.
func appendFloat(b []byte, x float64) []byte {
	f := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	b = strconv.AppendFloat(b, x, f, -1, 64)
	if f == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
