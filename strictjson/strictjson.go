// Package strictjson parses the strict JSON that clockgate accepts as
// evidence: one value, valid UTF-8, no duplicate object keys, and numbers
// that are finite in float64.
//
// encoding/json accepts duplicate keys (the last one wins) and replaces
// invalid UTF-8 silently; both would let doubtful evidence pass, so evidence
// is parsed here and only then read field by field.
package strictjson

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind int

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "unknown"
}

// Value is one parsed JSON value.
type Value struct {
	Kind Kind
	// Bool holds a boolean's value.
	Bool bool
	// Str holds a string's value.
	Str string
	// Raw holds a number's text as written.
	Raw string
	// Num holds a number's value.
	Num float64
	// Elems holds an array's elements.
	Elems []*Value
	// Keys holds an object's keys in the order written.
	Keys []string
	// Fields holds an object's members by key.
	Fields map[string]*Value
}

// MaxDepth bounds nesting so that hostile input cannot exhaust the stack.
const MaxDepth = 64

// Error is a parse error at a byte offset of the input.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Parse parses data as exactly one JSON value surrounded by optional white space.
func Parse(data []byte) (*Value, error) {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, &Error{off, "invalid UTF-8"}
	}
	p := &parser{data: data}
	p.ws()
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, &Error{0, "byte order mark is not allowed"}
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos != len(p.data) {
		return nil, p.errf("unexpected %s after the value", p.peekDesc())
	}
	return v, nil
}

// ParseObject parses data and requires the value to be an object.
func ParseObject(data []byte) (*Value, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if v.Kind != Object {
		return nil, &Error{0, fmt.Sprintf("want an object, found %s", v.Kind)}
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errf(format string, args ...any) error {
	return &Error{p.pos, fmt.Sprintf(format, args...)}
}

func (p *parser) peekDesc() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Value, error) {
	if depth > MaxDepth {
		return nil, p.errf("nesting deeper than %d", MaxDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", &Value{Kind: Bool, Bool: true})
	case c == 'f':
		return p.literal("false", &Value{Kind: Bool})
	case c == 'n':
		return p.literal("null", &Value{Kind: Null})
	case c == 'N' || c == 'I':
		return nil, p.errf("unexpected %s: NaN and Infinity are not JSON numbers", p.peekDesc())
	}
	return nil, p.errf("unexpected %s", p.peekDesc())
}

func (p *parser) literal(word string, v *Value) (*Value, error) {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return v, nil
	}
	return nil, p.errf("unexpected %s (NaN, Infinity and other non-JSON words are refused)", p.peekDesc())
}

func (p *parser) object(depth int) (*Value, error) {
	p.pos++ // {
	v := &Value{Kind: Object, Fields: map[string]*Value{}}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errf("want a key string, found %s", p.peekDesc())
		}
		keyAt := p.pos
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := v.Fields[k]; dup {
			return nil, &Error{keyAt, fmt.Sprintf("duplicate key %q", k)}
		}
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errf("want ':' after key %q, found %s", k, p.peekDesc())
		}
		p.pos++
		p.ws()
		m, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Keys = append(v.Keys, k)
		v.Fields[k] = m
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.errf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return nil, p.errf("want ',' or '}' in an object, found %s", p.peekDesc())
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	p.pos++ // [
	v := &Value{Kind: Array}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.ws()
		e, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.errf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, p.errf("want ',' or ']' in an array, found %s", p.peekDesc())
		}
	}
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errf("control character %#x in a string", c)
		}
		p.pos++
	}
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errf("control character %#x in a string", c)
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			break
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					p.pos += 2
					r2, err := p.hex4()
					if err != nil {
						return "", err
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
				if r == utf8.RuneError {
					return "", p.errf("unpaired surrogate in a \\u escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errf("invalid escape \\%c", e)
		}
	}
	return "", p.errf("unterminated string")
}

func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.errf("short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.errf("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}

func (p *parser) number() (*Value, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
		if p.pos < len(p.data) && p.data[p.pos] == 'I' {
			return nil, p.errf("-Infinity is not a JSON number")
		}
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if n := digits(); n == 0 {
		return nil, p.errf("want a digit in a number, found %s", p.peekDesc())
	} else if n > 1 && p.data[intStart] == '0' {
		return nil, &Error{intStart, "leading zero in a number"}
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errf("want a digit after '.', found %s", p.peekDesc())
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errf("want a digit in an exponent, found %s", p.peekDesc())
		}
	}
	raw := string(p.data[start:p.pos])
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &Error{start, fmt.Sprintf("number %s is not finite in float64", raw)}
	}
	return &Value{Kind: Number, Raw: raw, Num: f}, nil
}

// Int reports v as an integer when it is a number written without a
// fraction or exponent that fits in int64.
func (v *Value) Int() (int64, bool) {
	if v == nil || v.Kind != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	return n, err == nil
}

// Describe names v for an error message: its kind, and its text when short.
func (v *Value) Describe() string {
	if v == nil {
		return "nothing"
	}
	switch v.Kind {
	case Number:
		return "number " + v.Raw
	case String:
		s := v.Str
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return "string " + strconv.Quote(s)
	case Bool:
		return strconv.FormatBool(v.Bool)
	}
	return v.Kind.String()
}
