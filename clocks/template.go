package clocks

import (
	"sync/atomic"
	"unicode/utf8"
)

// A stream's lines share one layout: the same keys in the same order with
// the same spacing, and most values the same from line to line (the boot
// id, the GPU, the driver, the static clocks), whichever recorder wrote
// them. A template is that layout learned from two consecutive lines read
// in the general way: the text that did not change between them, as
// literals, and the values that did, as holes. A line that repeats every
// literal byte for byte is read by comparing the literals and parsing only
// the holes; its literals' values are the learned line's, since the same
// bytes read the same way. Any other line is read in the general way.

// template is a learned layout; see above.
type template struct {
	ok   bool
	segs []segment
	// The static members' values, which every fitting line has: the keys
	// they mark seen, and their values by kind.
	seen, intBits, hasFloat, null_ uint32
	strs                           []strValue
	ints                           []intValue
	floats                         []floatValue
	arena                          []byte

	// The last line read in the general way, to learn from with the next.
	prev     []byte
	prevMem  [maxMembers]memberAt
	prevN    int
	prevEnd  int
	havePrev bool

	// misses counts lines in a row the template did not fit; skip, lines
	// to read without trying it; differ, lines in a row whose layout was
	// not the line's before; learnSkip, lines read without learning. A
	// stream whose layout changes on every line so costs little more than
	// the general reading.
	misses, skip, differ, learnSkip int
	// primed is true while the parser's value arrays hold the static
	// members' values.
	primed bool
	// staticID is the template's Row.StaticID: unique to it, or 0 when
	// one of the identity fields is a hole.
	staticID uint64
}

// identityKeys are the keys whose values a Row.StaticID vouches for:
// baseIdentityKeys, which every sample has, and an AMD sample's static
// keys, which must then be literals too.
const (
	baseIdentityKeys = 1<<kBootID | 1<<kGPUName | 1<<kGPUUUID | 1<<kDriverVersion | 1<<kClocksMaxSM | 1<<kApps
	identityKeys     = baseIdentityKeys | 1<<kVendor | 1<<kPerfLevel | 1<<kMemoryPartition
)

// templateIDs numbers the templates learned in the process.
var templateIDs atomic.Uint64

// segment is a literal and the hole after it: the value of key (vkey ≥ 0),
// of another key (vkey == otherKey), or none at the line's end (vkey ==
// endOfLine).
type segment struct {
	lit  []byte
	vkey int
}

const (
	otherKey  = -1
	endOfLine = -2
)

type (
	strValue struct {
		key int
		s   []byte
	}
	intValue struct {
		key int
		i   int64
	}
	floatValue struct {
		key int
		f   float64
	}
)

// fits reads p's line with the template and reports whether it fitted;
// when it did not, p's line state is to be reset.
func (t *template) fits(p *lineParser) bool {
	if !t.ok {
		return false
	}
	if t.skip > 0 {
		t.skip--
		return false
	}
	p.seen, p.intBits, p.hasFloat, p.null_ = t.seen, t.intBits, t.hasFloat, t.null_
	if !t.primed {
		// A hole never writes a static member's entry, so these stay
		// until a line is read in the general way or the template is
		// learned again.
		for _, v := range t.strs {
			p.strs[v.key] = v.s
		}
		for _, v := range t.ints {
			p.ints[v.key] = v.i
		}
		for _, v := range t.floats {
			p.floats[v.key] = v.f
		}
		t.primed = true
	}
	for k := range t.segs {
		sg := &t.segs[k]
		if len(p.b)-p.i < len(sg.lit) || string(p.b[p.i:p.i+len(sg.lit)]) != string(sg.lit) {
			return t.miss()
		}
		p.i += len(sg.lit)
		var err error
		value := p.i
		switch sg.vkey {
		case endOfLine:
			p.end = p.i
			p.ws()
			if p.i != len(p.b) {
				return t.miss()
			}
			t.misses = 0
			return true
		case otherKey:
			_, _, err = p.value(1)
		default:
			err = p.member(sg.vkey)
		}
		// The literals are valid UTF-8, being a valid line's; a hole's
		// value need not be (a number always is).
		if err != nil || p.b[value] != '-' && (p.b[value] < '0' || p.b[value] > '9') && !utf8.Valid(p.b[value:p.i]) {
			return t.miss()
		}
	}
	return t.miss() // a template always ends with the line's end
}

func (t *template) miss() bool {
	t.misses++
	if t.misses > 2 {
		t.skip = 1 << min(t.misses, 10)
	}
	return false
}

// learn learns from p's line, just read in the general way, and the one
// read that way before it: when both have one layout, the template is the
// text they share.
func (t *template) learn(p *lineParser) {
	if p.hasBad || p.n > maxMembers || p.n == 0 {
		t.havePrev = false
		return
	}
	if t.learnSkip > 0 {
		t.learnSkip--
		return
	}
	if t.havePrev {
		if t.sameLayout(p) {
			t.build(p)
			t.differ = 0
		} else if t.differ++; t.differ > 2 {
			// Lines that keep changing their layout: learn again later.
			t.learnSkip, t.havePrev = 1<<min(t.differ, 10), false
			return
		}
	}
	t.prev = append(t.prev[:0], p.b...)
	copy(t.prevMem[:p.n], p.members[:p.n])
	t.prevN, t.prevEnd, t.havePrev = p.n, p.end, true
}

// sameLayout reports whether p's line has the previous line's members, in
// the same order, with the same text between their values.
func (t *template) sameLayout(p *lineParser) bool {
	if p.n != t.prevN || string(p.b[p.members[p.n-1].valueEnd:p.end]) != string(t.prev[t.prevMem[p.n-1].valueEnd:t.prevEnd]) {
		return false
	}
	for j := 0; j < p.n; j++ {
		m, pm := p.members[j], t.prevMem[j]
		if m.key != pm.key || string(p.b[m.from:m.value]) != string(t.prev[pm.from:pm.value]) {
			return false
		}
	}
	return true
}

// build makes the template of p's line: a member whose value is the
// previous line's is part of a literal, any other is a hole.
func (t *template) build(p *lineParser) {
	t.segs, t.strs, t.ints, t.floats = t.segs[:0], t.strs[:0], t.ints[:0], t.floats[:0]
	t.seen, t.intBits, t.hasFloat, t.null_ = 0, 0, 0, 0
	// The literals and values are copied into one arena, which must not
	// move while slices of it are taken: size it first.
	need := len(p.b)
	for j := 0; j < p.n; j++ {
		if k := p.members[j].key; k >= 0 {
			need += len(p.strs[k])
		}
	}
	if cap(t.arena) < need {
		t.arena = make([]byte, 0, need)
	}
	t.arena = t.arena[:0]
	keep := func(b []byte) []byte {
		t.arena = append(t.arena, b...)
		return t.arena[len(t.arena)-len(b) : len(t.arena) : len(t.arena)]
	}
	segStart := 0
	var holes uint32
	for j := 0; j < p.n; j++ {
		m, pm := p.members[j], t.prevMem[j]
		// The counters are always a hole: a template keeps no object's value.
		if m.key != kCounters && string(p.b[m.value:m.valueEnd]) == string(t.prev[pm.value:pm.valueEnd]) {
			if k := int(m.key); k >= 0 {
				bit := uint32(1) << k
				t.seen |= bit
				switch {
				case p.null_&bit != 0:
					t.null_ |= bit
				case p.hasFloat&bit != 0:
					t.hasFloat |= bit
					t.floats = append(t.floats, floatValue{k, p.floats[k]})
				case p.intBits&bit != 0:
					t.intBits |= bit
					t.ints = append(t.ints, intValue{k, p.ints[k]})
				default:
					t.strs = append(t.strs, strValue{k, keep(p.strs[k])})
				}
			}
			continue
		}
		vkey := otherKey
		if m.key >= 0 {
			vkey = int(m.key)
			t.seen |= 1 << vkey
			holes |= 1 << vkey
		}
		t.segs = append(t.segs, segment{lit: keep(p.b[segStart:m.value]), vkey: vkey})
		segStart = m.valueEnd
	}
	t.segs = append(t.segs, segment{lit: keep(p.b[segStart:p.end]), vkey: endOfLine})
	t.ok, t.misses, t.skip = true, 0, 0
	t.staticID = 0
	if holes&identityKeys == 0 && t.seen&baseIdentityKeys == baseIdentityKeys {
		t.staticID = templateIDs.Add(1)
	}
}
