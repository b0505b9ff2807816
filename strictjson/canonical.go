package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Canonical encodes v as indented JSON with every object's keys sorted and
// HTML left unescaped, ending in a newline: the same value always gives the
// same bytes.
//
// It encodes v once and then rewrites those bytes, sorting each object's
// members by key (as encoding/json sorts a map's keys) and indenting by two
// spaces: what decoding them into generic values and encoding those again
// would give, without building the values.
func Canonical(v any) ([]byte, error) {
	var first bytes.Buffer
	enc := json.NewEncoder(&first)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	src := bytes.TrimSuffix(first.Bytes(), []byte("\n"))
	c := canon{src: src, out: make([]byte, 0, len(src)+len(src)/2)}
	end, err := c.value(0, 0)
	if err != nil {
		return nil, err
	}
	if end != len(src) {
		return nil, fmt.Errorf("canonical: %d bytes after the value", len(src)-end)
	}
	return append(c.out, '\n'), nil
}

// canon rewrites compact JSON, as encoding/json writes it, canonically.
type canon struct {
	src []byte
	out []byte
	// members is scratch space for the members of the objects being
	// rewritten, one stretch per open object.
	members []member
}

// member is one object member in src: its key, decoded, and where its
// value starts and ends.
type member struct {
	key        string
	start, end int
}

// value writes the value at src[i] at the given depth and returns where it
// ends.
func (c *canon) value(i, depth int) (int, error) {
	if i >= len(c.src) {
		return 0, fmt.Errorf("canonical: unexpected end of input")
	}
	switch c.src[i] {
	case '{':
		return c.object(i, depth)
	case '[':
		return c.array(i, depth)
	}
	end, err := c.skip(i)
	if err != nil {
		return 0, err
	}
	if c.src[i] == '"' && bytes.IndexByte(c.src[i:end], '\\') >= 0 {
		// An escape (a Marshaler's \u003e, say) is written again as
		// encoding/json writes the string it stands for.
		var s string
		if err := json.Unmarshal(c.src[i:end], &s); err != nil {
			return 0, err
		}
		c.out = AppendString(c.out, s)
		return end, nil
	}
	c.out = append(c.out, c.src[i:end]...)
	return end, nil
}

func (c *canon) object(i, depth int) (int, error) {
	i++ // {
	if c.src[i] == '}' {
		c.out = append(c.out, "{}"...)
		return i + 1, nil
	}
	base := len(c.members)
	for {
		kEnd, err := c.skip(i)
		if err != nil {
			return 0, err
		}
		key := string(c.src[i+1 : kEnd-1])
		if strings.IndexByte(key, '\\') >= 0 {
			if err := json.Unmarshal(c.src[i:kEnd], &key); err != nil {
				return 0, err
			}
		}
		vEnd, err := c.skip(kEnd + 1) // past ':'
		if err != nil {
			return 0, err
		}
		c.members = append(c.members, member{key, kEnd + 1, vEnd})
		i = vEnd
		if c.src[i] == '}' {
			break
		}
		i++ // ,
	}
	ms := c.members[base:]
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	c.out = append(c.out, '{')
	for k := range ms {
		m := c.members[base+k]
		if k > 0 {
			c.out = append(c.out, ',')
		}
		c.newline(depth + 1)
		c.out = AppendString(c.out, m.key)
		c.out = append(c.out, ':', ' ')
		if _, err := c.value(m.start, depth+1); err != nil {
			return 0, err
		}
	}
	c.newline(depth)
	c.out = append(c.out, '}')
	c.members = c.members[:base]
	return i + 1, nil
}

func (c *canon) array(i, depth int) (int, error) {
	i++ // [
	if c.src[i] == ']' {
		c.out = append(c.out, "[]"...)
		return i + 1, nil
	}
	c.out = append(c.out, '[')
	for first := true; ; first = false {
		if !first {
			c.out = append(c.out, ',')
		}
		c.newline(depth + 1)
		end, err := c.value(i, depth+1)
		if err != nil {
			return 0, err
		}
		i = end
		if c.src[i] == ']' {
			break
		}
		i++ // ,
	}
	c.newline(depth)
	c.out = append(c.out, ']')
	return i + 1, nil
}

func (c *canon) newline(depth int) {
	c.out = append(c.out, '\n')
	for range depth {
		c.out = append(c.out, ' ', ' ')
	}
}

// AppendString appends s as encoding/json writes a string with HTML left
// unescaped, as Canonical writes every string and key.
func AppendString(out []byte, key string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if needsEscape(key) {
		_ = enc.Encode(key)
		return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	}
	out = append(out, '"')
	out = append(out, key...)
	return append(out, '"')
}

// needsEscape reports whether encoding/json writes s other than as its
// bytes in quotes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return true
		}
	}
	return false
}

// skip returns where the value at src[i] ends, in JSON encoding/json wrote.
func (c *canon) skip(i int) (int, error) {
	src := c.src
	if i >= len(src) {
		return 0, fmt.Errorf("canonical: unexpected end of input")
	}
	switch src[i] {
	case '"':
		for j := i + 1; j < len(src); j++ {
			switch src[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("canonical: unterminated string")
	case '{', '[':
		depth := 0
		for j := i; j < len(src); j++ {
			switch src[j] {
			case '"':
				end, err := c.skip(j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("canonical: unterminated %c", src[i])
	}
	j := i
	for j < len(src) && src[j] != ',' && src[j] != '}' && src[j] != ']' {
		j++
	}
	return j, nil
}
