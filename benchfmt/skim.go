package benchfmt

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/clockgate/clockgate/strictjson"
)

// A record line of profile_export.jsonl is read for four members of its
// metadata, while the line itself (a request's every inter-chunk latency)
// is mostly what the record does not need. skim reads such a line without
// building it: it checks the whole line as strictjson would (one object,
// strict grammar, no duplicate key, finite numbers, valid UTF-8) and keeps
// only those members. It vouches only for what it checks; a line with
// anything it does not check (an escape in a string, nesting near
// strictjson.MaxDepth, an object of many keys, a defect) is left to
// strictjson, which then gives the same members or the exact refusal.

// skimVal is one member as the record needs it: absent, a string without
// escapes (raw is its text), a number (raw as written), or other.
type skimVal struct {
	kind byte // 0 absent, 's' string, 'n' number, 'o' anything else
	raw  []byte
}

// recordFields are the members of a record's metadata aiperfRecords
// reads.
type recordFields struct {
	phase, credit, start, end skimVal
}

// fieldsOf is v's recordFields, as strictjson parsed the line.
func fieldsOf(v *strictjson.Value) recordFields {
	md := v.Fields["metadata"]
	val := func(k string) skimVal {
		f := at(md, k)
		switch {
		case f == nil:
			return skimVal{}
		case f.Kind == strictjson.String:
			return skimVal{'s', []byte(f.Str)}
		case f.Kind == strictjson.Number:
			return skimVal{'n', []byte(f.Raw)}
		}
		return skimVal{kind: 'o'}
	}
	return recordFields{val("benchmark_phase"), val("credit_phase"), val("request_start_ns"), val("request_end_ns")}
}

// The skimmer's limits, within strictjson's so that a line it vouches
// for is one strictjson accepts: nesting (strictjson.MaxDepth is 64) and
// keys per object (duplicates are found by comparing each key with the
// object's earlier ones).
const (
	skimMaxDepth = 48
	skimMaxKeys  = 64
)

// skimmer reads record lines; its buffers are kept from line to line.
type skimmer struct {
	b    []byte
	i    int
	keys [][]byte // the keys of the open objects, innermost last
	rf   recordFields
}

// The roles of an object for skim: the record itself, its metadata, or
// any other.
const (
	roleOther = iota
	roleTop
	roleMetadata
)

// line skims b: the record's fields, and whether skim vouches for them.
func (s *skimmer) line(b []byte) (recordFields, bool) {
	if !utf8.Valid(b) {
		return recordFields{}, false
	}
	s.b, s.i, s.keys, s.rf = b, 0, s.keys[:0], recordFields{}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' || !s.object(0, roleTop) {
		return recordFields{}, false
	}
	s.ws()
	return s.rf, s.i == len(s.b)
}

func (s *skimmer) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value skims the value at s.i, at depth; v is what it was, for a
// member the record reads.
func (s *skimmer) value(depth, role int) (v skimVal, ok bool) {
	if depth > skimMaxDepth || s.i >= len(s.b) {
		return v, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return skimVal{kind: 'o'}, s.object(depth, role)
	case c == '[':
		return skimVal{kind: 'o'}, s.array(depth)
	case c == '"':
		raw, ok := s.str()
		return skimVal{'s', raw}, ok
	case c == '-' || c >= '0' && c <= '9':
		raw, ok := s.number()
		return skimVal{'n', raw}, ok
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
			s.i += len(w)
			return skimVal{kind: 'o'}, true
		}
	}
	return v, false
}

// object skims the object at s.i ('{'), its keys checked for
// duplicates; the record's metadata members are kept in s.rf.
func (s *skimmer) object(depth, role int) bool {
	s.i++
	mark := len(s.keys)
	defer func() { s.keys = s.keys[:mark] }()
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		k, ok := s.str()
		if !ok || len(s.keys)-mark >= skimMaxKeys {
			return false
		}
		for _, o := range s.keys[mark:] {
			if bytes.Equal(o, k) {
				return false
			}
		}
		s.keys = append(s.keys, k)
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		inner := roleOther
		if role == roleTop && string(k) == "metadata" {
			if s.i >= len(s.b) || s.b[s.i] != '{' {
				return false // a metadata that is no object: strictjson's to read
			}
			inner = roleMetadata
		}
		v, ok := s.value(depth+1, inner)
		if !ok {
			return false
		}
		if role == roleMetadata {
			switch string(k) {
			case "benchmark_phase":
				s.rf.phase = v
			case "credit_phase":
				s.rf.credit = v
			case "request_start_ns":
				s.rf.start = v
			case "request_end_ns":
				s.rf.end = v
			}
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *skimmer) array(depth int) bool {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		s.ws()
		if _, ok := s.value(depth+1, roleOther); !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str skims the string at s.i ('"'): its text, which is the string's
// own as no escape is vouched for.
func (s *skimmer) str() ([]byte, bool) {
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// number skims the number at s.i as strictjson's grammar has it. A number
// is finite in float64 without parsing when it has no exponent and at
// most 308 digits before its point; any other is parsed, as strictjson
// parses it.
func (s *skimmer) number() ([]byte, bool) {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	intStart := s.i
	n := digits()
	if n == 0 || n > 1 && s.b[intStart] == '0' {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false
		}
	}
	exp := false
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		exp = true
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	raw := s.b[start:s.i]
	if exp || n > 308 {
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			return nil, false
		}
	}
	return raw, true
}
