package clocks

import (
	"encoding/binary"
	"math/bits"
)

// The any-order scanner reads a line whose layout is not the learned one
// (a recorder that writes its keys in a new order on every line, say) in
// one pass: each key found in sampleKeys by its first byte and length, each
// value read as its kind says, without a member cache, a copy or an
// allocation. It reads only the plain form of a sample: printable ASCII
// strings without escapes, numbers without an exponent of at most 15
// digits, nulls where the kind allows them, sample keys only, each once.
// Anything else (a duplicate, another key, an escape, a byte outside
// ASCII, an object or array value, a value of the wrong type, a syntax
// error) leaves the line to the general reading, which names its defect;
// so a line the scanner reads is one the general reading would read the
// same, value for value (the equivalence tests and fuzzing hold that).

// anyOrder reads p's line, reporting whether it could; when it could not,
// p's line state is to be reset.
func (p *lineParser) anyOrder() bool {
	b := p.b
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for j := 0; ; j++ {
		from := i
		if j == 0 {
			i = skipWS(b, i+1)
			if i >= len(b) || b[i] == '}' {
				return false // the empty object, for the general reading to refuse
			}
		} else {
			i = skipWS(b, i)
			if i >= len(b) {
				return false
			}
			if b[i] == '}' {
				p.end = i + 1
				break
			}
			if b[i] != ',' {
				return false
			}
			i = skipWS(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return false
		}
		key := quotedKey(b[i:])
		if key < 0 {
			// Another key (a newer recorder's reading, say): skipped when
			// it and its value are plain, refused twice as the general
			// reading refuses it.
			n, ok := p.otherMember(i)
			if !ok {
				return false
			}
			p.members[j] = memberAt{from: from, value: n.value, valueEnd: n.end, key: -1}
			p.n = j + 1
			i = n.end
			continue
		}
		bit := uint32(1) << key
		if p.seen&bit != 0 {
			return false
		}
		p.seen |= bit
		i = skipWS(b, i+len(keyNames[key])+2)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return false
		}
		value := i
		kind := sampleKeys[key].kind
		switch c := b[i]; {
		case c == 'n':
			if !kind.nullable() || len(b)-i < 4 || string(b[i:i+4]) != "null" {
				return false
			}
			p.null_ |= bit
			i += 4
		case kind == kindString || kind == kindStringOrNull:
			if c != '"' {
				return false
			}
			var end int
			if l := p.lastStr[key]; len(l) > 0 && len(b)-i > len(l) && string(b[i+1:i+1+len(l)]) == string(l) {
				// The value and closing quote of the line before.
				end = i + len(l)
			} else {
				end = i + 1 + asciiRun(b[i+1:])
				if end >= len(b) || b[end] != '"' {
					return false
				}
				p.lastStr[key] = append(l[:0], b[i+1:end+1]...)
			}
			p.strs[key] = b[i+1 : end]
			i = end + 1
		case kind == kindInt || kind == kindIntOrNull:
			v, n := plainInt(b[i:])
			if n == 0 {
				return false
			}
			p.ints[key], p.intBits = v, p.intBits|bit
			i += n
		case kind == kindNumberOrNull || kind == kindWattsOrNull:
			f, n := plainNumber(b[i:])
			if n == 0 || kind == kindWattsOrNull && !(f > 0) {
				return false
			}
			p.floats[key], p.hasFloat = f, p.hasFloat|bit
			i += n
		default:
			return false // an object or array: the general reading's
		}
		p.members[j] = memberAt{from: from, value: value, valueEnd: i, key: int8(key)}
		p.n = j + 1
	}
	return skipWS(b, p.end) == len(b)
}

// skipWS is where the JSON white space at b[i:] ends.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// asciiRun is how many bytes of b are printable ASCII other than '"' and
// '\\': eight at a time while they last.
func asciiRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte is flagged when it is zero in q or bs, below 0x20 in w,
		// or has its high bit set. The lowest flagged byte is exact.
		special := ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w | w) & highs
		if special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// plainInt reads a non-negative integer of at most 18 digits at the start
// of b, not continued as a fraction or exponent, and returns it and its
// length; 0 for anything else.
func plainInt(b []byte) (int64, int) {
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	if n == 0 || n > 18 || n > 1 && b[0] == '0' || n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return 0, 0
	}
	return v, n
}

// plainNumber reads a number without an exponent, of at most 15 digits,
// at the start of b, and returns its value as strconv.ParseFloat reads it
// and its length; 0 for anything else.
func plainNumber(b []byte) (float64, int) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	var mant uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		mant = mant*10 + uint64(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 1 && b[start] == '0' {
		return 0, 0
	}
	frac := 0
	if i < len(b) && b[i] == '.' {
		i++
		fracStart := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			mant = mant*10 + uint64(b[i]-'0')
			i++
		}
		if frac = i - fracStart; frac == 0 {
			return 0, 0
		}
	}
	if digits+frac > 15 || i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		return 0, 0
	}
	if frac == 0 {
		// An integer: its value as an int64 first, as the general
		// reading has it (so "-0" is 0).
		v := int64(mant)
		if neg {
			v = -v
		}
		return float64(v), i
	}
	// m / 10^k with both exact in float64: one correctly rounded division
	// (Clinger's fast path), as number has it.
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, i
}

// otherSpan is where another key's member lies: its value from value to end.
type otherSpan struct{ value, end int }

// otherMember reads, at b[i], a member whose key is no sample key, as the
// general reading would accept it: a plain key not seen before in the
// line, and a plain value (a number as plainNumber reads one, a string of
// printable ASCII, true, false or null). ok is false for anything else.
func (p *lineParser) otherMember(i int) (otherSpan, bool) {
	b := p.b
	end := i + 1 + asciiRun(b[i+1:])
	if end >= len(b) || b[end] != '"' {
		return otherSpan{}, false
	}
	k := b[i+1 : end]
	for _, o := range p.other {
		if string(o) == string(k) {
			return otherSpan{}, false
		}
	}
	j := skipWS(b, end+1)
	if j >= len(b) || b[j] != ':' {
		return otherSpan{}, false
	}
	j = skipWS(b, j+1)
	if j >= len(b) {
		return otherSpan{}, false
	}
	value := j
	switch c := b[j]; {
	case c == '"':
		e := j + 1 + asciiRun(b[j+1:])
		if e >= len(b) || b[e] != '"' {
			return otherSpan{}, false
		}
		j = e + 1
	case c == '-' || c >= '0' && c <= '9':
		_, n := plainNumber(b[j:])
		if n == 0 {
			return otherSpan{}, false
		}
		j += n
	default:
		w := ""
		switch c {
		case 'n':
			w = "null"
		case 't':
			w = "true"
		case 'f':
			w = "false"
		}
		if w == "" || len(b)-j < len(w) || string(b[j:j+len(w)]) != w {
			return otherSpan{}, false
		}
		j += len(w)
	}
	p.other = append(p.other, k)
	return otherSpan{value, j}, true
}
