package strictjson

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Layout says how AppendLayout spaces an object: the order of its keys and
// its separators, as other writers of the same data choose them (Python's
// json.dumps writes ", " and ": ", another recorder its own key order).
type Layout struct {
	// Order lists the keys written first, in this order; the others follow
	// in the order they were read.
	Order []string
	// Comma separates members and Colon a key from its value; "," and ":"
	// when empty.
	Comma, Colon string
}

// AppendLayout appends v as JSON, every object laid out as l says. Strings
// are written as encoding/json writes them, without HTML escapes.
func AppendLayout(b []byte, v *Value, l Layout) []byte {
	comma, colon := l.Comma, l.Colon
	if comma == "" {
		comma = ","
	}
	if colon == "" {
		colon = ":"
	}
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		return strconv.AppendBool(b, v.Bool)
	case Number:
		return append(b, v.Raw...)
	case String:
		return appendJSONString(b, v.Str)
	case Array:
		b = append(b, '[')
		for i, e := range v.Elems {
			if i > 0 {
				b = append(b, comma...)
			}
			b = AppendLayout(b, e, l)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	written := map[string]bool{}
	n := 0
	member := func(k string) {
		if n > 0 {
			b = append(b, comma...)
		}
		n++
		b = appendJSONString(b, k)
		b = append(b, colon...)
		b = AppendLayout(b, v.Fields[k], l)
		written[k] = true
	}
	for _, k := range l.Order {
		if _, ok := v.Fields[k]; ok && !written[k] {
			member(k)
		}
	}
	for _, k := range v.Keys {
		if !written[k] {
			member(k)
		}
	}
	return append(b, '}')
}

func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
