package clocks

import (
	"encoding/binary"
	"math/bits"
)

// The any-order scanner reads a line whose layout is not the learned one
// (a recorder that writes its keys in a new order on every line, say) in
// one pass: a member that repeats the memo's (below) taken from it, any
// other's key found in sampleKeys by its first eight bytes and its value
// read as its kind says, without an allocation. It reads only the plain
// form of a sample: printable ASCII strings without escapes, numbers
// without an exponent of at most 15 digits, nulls where the kind allows
// them, sample keys only, each once.
// Anything else (a duplicate, another key, an escape, a byte outside
// ASCII, an object or array value, a value of the wrong type, a syntax
// error) leaves the line to the general reading, which names its defect;
// so a line the scanner reads is one the general reading would read the
// same, value for value (the equivalence tests and fuzzing hold that).

// A member the scanner read once is most likely repeated byte for byte
// by the next lines, wherever they put it (the boot id, the GPU, the
// static clocks): the memo keeps each sample key's member as last read,
// its text as written and its value as read, and a member that repeats
// the text, and ends there, is taken from it by one comparison of at most
// eight words, without a branch on its length, instead of being read
// again. The memo is found by a member's first twelve bytes; what an entry
// holds is what its text reads as, whatever the line, so a line it reads
// is one the scanner would read the same.

// memoText bounds the text of a member the memo keeps; memoMin is the
// shortest, the bytes its index is found by.
const (
	memoText = 64
	memoMin  = 12
)

// memoMember is one sample key's member as the scanner last read it.
type memoMember struct {
	// n is the length of its text, from the key's quote to the value's
	// end; 0 when the memo holds none. w is the text as little-endian
	// words, zero past n.
	n int
	w [memoText / 8]uint64
	// value is where the value starts in the text; strFrom and strTo, a
	// string's bytes (empty for another value).
	value, strFrom, strTo int
	// What the member sets: its bits, and its value by kind.
	intBit, floatBit, nullBit uint32
	i                         int64
	f                         float64
	// misses counts the member's reads since it last repeated: a member
	// that changes on every line (the time, the clock) is kept again only
	// now and then.
	misses uint8
}

// memoRetry is how often, in its reads, a member that keeps changing is
// kept in the memo again.
const memoRetry = 32

// memoIndex holds, for each slot, the key (plus one) of the member last
// kept whose first twelve bytes choose it.
const memoBits = 9

type memoIndex [1 << memoBits]int8

func memoSlot(w0 uint64, w1 uint32) int {
	return int(((w0 ^ uint64(w1)<<32 ^ uint64(w1)) * 0x9E3779B97F4A7C15) >> (64 - memoBits))
}

// memoMasks are, for a text of n bytes, the masks of its words.
var memoMasks = func() (m [memoText + 1][memoText / 8]uint64) {
	for n := range m {
		for k := range m[n] {
			switch left := n - 8*k; {
			case left >= 8:
				m[n][k] = ^uint64(0)
			case left > 0:
				m[n][k] = 1<<(8*left) - 1
			}
		}
	}
	return m
}()

// endsMember is true for the bytes that may follow a value in a line: a
// member repeated up to one of them is repeated whole.
var endsMember = [256]bool{',': true, '}': true, ' ': true, '\t': true, '\r': true, '\n': true}

// memoWindow is the memoText bytes from b[i]: the line's, and past its end
// whatever follows it in the buffer it lies in (the masks keep only the
// member's); ok is false when the buffer ends first.
func memoWindow(b []byte, i int) (w *[memoText]byte, ok bool) {
	if cap(b)-i < memoText {
		return nil, false
	}
	return (*[memoText]byte)(b[i : i+memoText]), true
}

// recall reads the member at b[i], from its key's quote, from the memo
// when it repeats one: whole, its key and end. When only its key and the
// text before its value repeat the memo's (a clock, a time), it returns
// its key and where its value starts, whole false. key is -1 otherwise.
func (p *lineParser) recall(i int) (key, end int, whole bool) {
	b := p.b
	if len(b)-i < memoMin {
		return -1, 0, false
	}
	c, ok := memoWindow(b, i)
	if !ok {
		// The buffer ends within the window: the line's bytes in a
		// window of zeros.
		var buf [memoText]byte
		copy(buf[:], b[i:])
		c = &buf
	}
	w0 := binary.LittleEndian.Uint64(c[0:])
	w1 := binary.LittleEndian.Uint64(c[8:])
	k := int(p.memoIdx[memoSlot(w0, uint32(w1))]) - 1
	if k < 0 {
		return -1, 0, false
	}
	e := &p.memo[k]
	x0, x1, x2, x3 := w0^e.w[0], w1^e.w[1], binary.LittleEndian.Uint64(c[16:])^e.w[2], binary.LittleEndian.Uint64(c[24:])^e.w[3]
	x4, x5, x6, x7 := binary.LittleEndian.Uint64(c[32:])^e.w[4], binary.LittleEndian.Uint64(c[40:])^e.w[5],
		binary.LittleEndian.Uint64(c[48:])^e.w[6], binary.LittleEndian.Uint64(c[56:])^e.w[7]
	m := &memoMasks[e.n]
	d := x0&m[0] | x1&m[1] | x2&m[2] | x3&m[3] | x4&m[4] | x5&m[5] | x6&m[6] | x7&m[7]
	end = i + e.n
	if d == 0 && end < len(b) && endsMember[b[end]] {
		return k, end, true
	}
	m = &memoMasks[e.value]
	if x0&m[0]|x1&m[1]|x2&m[2]|x3&m[3]|x4&m[4]|x5&m[5]|x6&m[6]|x7&m[7] == 0 && i+e.value < len(b) {
		return k, i + e.value, false
	}
	return -1, 0, false
}

// memorize keeps the member of key just read, from its key's quote at
// keyAt, its value from value to end, in the memo.
func (p *lineParser) memorize(key, keyAt, value, end int) {
	n := end - keyAt
	if n < memoMin || n > memoText {
		return
	}
	b := p.b
	c, ok := memoWindow(b, keyAt)
	if !ok {
		var buf [memoText]byte
		copy(buf[:], b[keyAt:])
		c = &buf
	}
	e := &p.memo[key]
	if e.n != 0 {
		if e.misses++; e.misses > 2 && e.misses%memoRetry != 0 {
			return
		}
		// Out of the slot its old text chose, unless another took it.
		if old := &p.memoIdx[memoSlot(e.w[0], uint32(e.w[1]))]; int(*old) == key+1 {
			*old = 0
		}
	}
	e.n = n
	m := &memoMasks[n]
	for k := range e.w {
		e.w[k] = binary.LittleEndian.Uint64(c[8*k:]) & m[k]
	}
	p.memoIdx[memoSlot(e.w[0], uint32(e.w[1]))] = int8(key + 1)
	if identityKeys&(1<<key) != 0 {
		p.memoID = 0 // the identity rows read from the memo vouch for changed
	}
	e.value = value - keyAt
	bit := uint32(1) << key
	e.intBit, e.floatBit, e.nullBit = p.intBits&bit, p.hasFloat&bit, p.null_&bit
	e.strFrom, e.strTo = e.value, e.value
	if b[value] == '"' {
		e.strFrom, e.strTo = e.value+1, n-1
	}
	e.i, e.f = p.ints[key], p.floats[key]
}

// anyOrder reads p's line, reporting whether it could; when it could not,
// p's line state is to be reset.
func (p *lineParser) anyOrder() bool {
	b := p.b
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	// from is where the member's text begins: the '{' or the end of the
	// value before it.
	from := i
	i = skipWS(b, i+1)
	if i >= len(b) || b[i] == '}' {
		return false // the empty object, for the general reading to refuse
	}
	// hits marks the keys read from the memo.
	var hits uint32
	for j := 0; ; j++ {
		if b[i] != '"' || j == maxMembers {
			return false // more members than a template keeps: the general reading's
		}
		if key, end, whole := p.recall(i); key >= 0 && whole {
			bit := uint32(1) << key
			if p.seen&bit != 0 {
				return false
			}
			e := &p.memo[key]
			e.misses = 0
			p.memoHits++
			hits |= bit
			p.seen |= bit
			p.intBits |= e.intBit
			p.hasFloat |= e.floatBit
			p.null_ |= e.nullBit
			p.strs[key] = b[i+e.strFrom : i+e.strTo]
			p.ints[key], p.floats[key] = e.i, e.f
			p.members[j] = memberAt{from: from, value: i + e.value, valueEnd: end, key: int8(key)}
			i = end
		} else if key >= 0 && !p.value1(j, from, i, key, end) || key < 0 && !p.member1(j, from, i) {
			return false
		} else {
			i = p.members[j].valueEnd
		}
		from = i
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			p.n, p.end = j+1, i+1
			break
		}
		if b[i] != ',' {
			return false
		}
		if i = skipWS(b, i+1); i >= len(b) {
			return false
		}
	}
	if skipWS(b, p.end) != len(b) {
		return false
	}
	// A line whose identity members were all the memo's, unchanged since
	// the memo's vouch began, has the identity of every other such line.
	// (An AMD GPU's line, with identity keys of its own, is never read
	// here: its XCD clocks are an array.)
	p.row.StaticID = 0
	if hits&baseIdentityKeys == baseIdentityKeys {
		if p.memoID == 0 {
			p.memoID = templateIDs.Add(1)
		}
		p.row.StaticID = p.memoID
	}
	return true
}

// member1 reads the j-th member, its text begun at from, its key's quote
// at keyAt, when it is not the memo's: a sample key's, kept in the memo
// after, or another key's, skipped. ok is false for anything the scanner
// does not read.
func (p *lineParser) member1(j, from, keyAt int) (ok bool) {
	b := p.b
	i := keyAt
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
		return true
	}
	i = skipWS(b, i+len(keyNames[key])+2)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i = skipWS(b, i+1)
	if i >= len(b) {
		return false
	}
	return p.value1(j, from, keyAt, key, i)
}

// value1 reads the value at b[value] of the j-th member, of the sample
// key key, its text begun at from and its key's quote at keyAt, and keeps
// the member in the memo. ok is false for anything the scanner does not
// read.
func (p *lineParser) value1(j, from, keyAt, key, value int) (ok bool) {
	b := p.b
	bit := uint32(1) << key
	if p.seen&bit != 0 {
		return false
	}
	p.seen |= bit
	i := value
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
		end := i + 1 + asciiRun(b[i+1:])
		if end >= len(b) || b[end] != '"' {
			return false
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
	p.memorize(key, keyAt, value, i)
	return true
}

// skipWS is where the JSON white space at b[i:] ends.
func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // the common case: no white space at all
	}
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
