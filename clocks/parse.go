package clocks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// lineParser parses one line. What it learns of one line serves the
// next: the line's template, and each string value as written.
type lineParser struct {
	lineState
	tmpl    template
	cache   [cacheSlots][cacheWays]cachedMember
	times   times
	scratch []byte
	// lastThrottle is the last throttle bit set read, and lastBits its value.
	lastThrottle []byte
	lastBits     uint64
	// xcd holds an AMD sample's XCD clocks, read from the array's text.
	xcd []int
	// memo holds each sample key's member as the any-order scanner last
	// read it, and memoIdx finds it (anyorder.go).
	memo    [numKeys]memoMember
	memoIdx memoIndex
	// memoID is the Row.StaticID of the lines whose identity members are
	// all the memo's: 0 until one is, and again once one of them changes.
	memoID uint64
	// anyOrderLines counts the lines the any-order scanner read, and
	// memoHits the members it took from its memo, for tests.
	anyOrderLines, memoHits int
}

// lineState is what the parser knows of the line being read.
type lineState struct {
	b   []byte
	i   int
	row *Row
	// seen marks the sample keys met in this line; other holds the other
	// keys, rarely any, for the duplicate check.
	seen  uint32
	other [][]byte
	// bad holds, for a key whose value has the wrong type, what was found.
	bad    [numKeys]string
	hasBad bool
	// strs holds the string keys' values; ints the integer keys' values as
	// written, before their range is checked; floats the optional readings.
	strs   [numKeys][]byte
	ints   [numKeys]int64
	floats [numKeys]float64
	// counterVals are event_counters_us, where the line has them.
	counterVals Counters
	// Each array entry counts only where its bit is set: intBits marks the
	// integers, hasFloat the optional readings given as numbers, null_ the
	// keys given as null, and seen every key; strs holds only keys seen.
	intBits, hasFloat, null_ uint32
	// members are the line's members as read, for a template to learn.
	members [maxMembers]memberAt
	n       int
	// end is where the object ended.
	end int
}

// maxMembers bounds the members of a line a template is learned from.
const maxMembers = 32

// memberAt is where one member of a line lies: its text from the end of
// the previous value (or the '{'), its value from value to valueEnd.
type memberAt struct {
	from, value, valueEnd int
	key                   int8
}

// The member cache's size: slots chosen by a member's first eight bytes,
// which the sample keys' spread over distinct slots (a test holds that),
// and two ways in each for keys that begin alike (throttle_reasons_active
// and throttle_field, clocks_max_sm_mhz and clocks_mem_mhz).
const (
	cacheBits  = 6
	cacheSlots = 1 << cacheBits
	cacheWays  = 2
)

// cachedMember is one member of a sample as last read, key and value, as
// written and as read: a line in any key order most likely repeats most
// of its members byte for byte (the boot id, the GPU, the static clocks),
// and a member that repeats is not read again.
type cachedMember struct {
	// tag is the member's first eight bytes, from its key's quote.
	tag uint64
	key int
	// text is the member's text, from its key's quote to its value's end;
	// valueOff is where its value starts in it. volatile says the text
	// changed the last time the member was read; number, that the value
	// is a number, which a longer one could continue.
	text     []byte
	valueOff int
	volatile bool
	number   bool
	// What the member sets: bits, and the value by kind.
	intBit, floatBit, nullBit uint32
	str                       []byte
	i                         int64
	f                         float64
}

func cacheSlot(tag uint64) int { return int((tag * 0x9E3779B97F4A7C15) >> (64 - cacheBits)) }

// cached reads the j-th member, begun at from, from the member cache when
// the line repeats it byte for byte, and reports whether it did.
func (p *lineParser) cached(j, from int) bool {
	if len(p.b)-p.i < 8 {
		return false
	}
	tag := binary.LittleEndian.Uint64(p.b[p.i:])
	slot := &p.cache[cacheSlot(tag)]
	for w := range slot {
		e := &slot[w]
		end := p.i + len(e.text)
		if e.tag != tag || e.volatile || e.text == nil || end > len(p.b) || string(p.b[p.i:end]) != string(e.text) || p.seen&(1<<e.key) != 0 {
			continue
		}
		if e.number && end < len(p.b) {
			// The number must end where the cached one did.
			if c := p.b[end]; c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' {
				continue
			}
		}
		k := e.key
		p.seen |= 1 << k
		p.intBits |= e.intBit
		p.hasFloat |= e.floatBit
		p.null_ |= e.nullBit
		p.strs[k], p.ints[k], p.floats[k] = e.str, e.i, e.f
		if j < maxMembers {
			p.members[j] = memberAt{from: from, value: p.i + e.valueOff, valueEnd: end, key: int8(k)}
		}
		p.n = j + 1
		p.i = end
		return true
	}
	return false
}

// remember keeps the member just read, key key from keyAt with its value
// from value, in the member cache.
func (p *lineParser) remember(key, keyAt, value int) {
	if key < 0 || key == kCounters || len(p.b)-keyAt < 8 || p.hasBad && p.bad[key] != "" {
		return
	}
	tag := binary.LittleEndian.Uint64(p.b[keyAt:])
	slot := &p.cache[cacheSlot(tag)]
	text := p.b[keyAt:p.i]
	e := &slot[0]
	switch {
	case slot[0].tag == tag && slot[0].key == key && slot[0].text != nil:
	case slot[1].tag == tag && slot[1].key == key && slot[1].text != nil:
		e = &slot[1]
	default:
		// A new member: it takes the way not used last, with buffers of
		// its own, since the line's row may still hold the old ones.
		if slot[0].text != nil {
			slot[0], slot[1] = slot[1], slot[0]
		}
		*e = cachedMember{tag: tag, key: key}
	}
	switch {
	case e.text != nil && string(e.text) != string(text):
		// The member changed since it was last read: keep its text, and
		// its value only once it repeats.
		e.text, e.volatile = append(e.text[:0], text...), true
		return
	case e.text != nil && !e.volatile:
		return // unchanged, and cached already
	}
	e.text, e.volatile = append(e.text[:0], text...), false
	e.valueOff = value - keyAt
	bit := uint32(1) << key
	e.intBit, e.floatBit, e.nullBit = p.intBits&bit, p.hasFloat&bit, p.null_&bit
	e.number = e.intBit|e.floatBit != 0
	// The row may hold e.str: a new value gets a new buffer.
	e.str = append([]byte(nil), p.strs[key]...)
	e.i, e.f = p.ints[key], p.floats[key]
}

// syntaxError is a defect of the JSON itself, at a byte offset of the line.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func (p *lineParser) errAt(off int, format string, args ...any) error {
	return &syntaxError{off, fmt.Sprintf(format, args...)}
}

func (p *lineParser) errf(format string, args ...any) error {
	return p.errAt(p.i, format, args...)
}

func (p *lineParser) peekDesc() string {
	if p.i >= len(p.b) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.b[p.i:])
	return strconv.QuoteRune(r)
}

func (p *lineParser) ws() {
	if p.i < len(p.b) && p.b[p.i] > ' ' {
		return // the common case: no white space at all
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// parse reads line into row. The error is a syntax error (with the 1-based
// column returned) or the first field defect in key order (column 0).
func (p *lineParser) parse(line []byte, row *Row) (int, error) {
	err := p.parseJSON(line, row)
	if se, ok := err.(*syntaxError); ok {
		return se.off + 1, err
	}
	if err != nil {
		return 0, err
	}
	return 0, p.fields()
}

// reset readies the parser for line. The large arrays are not cleared: an
// entry counts only where its bit is set.
func (p *lineParser) reset(line []byte, row *Row) {
	if p.hasBad {
		p.bad = [numKeys]string{}
	}
	s := &p.lineState
	s.b, s.i, s.row, s.seen, s.other, s.hasBad = line, 0, row, 0, s.other[:0], false
	s.intBits, s.hasFloat, s.null_, s.n, s.end = 0, 0, 0, 0, 0
}

func (p *lineParser) parseJSON(line []byte, row *Row) error {
	p.reset(line, row)
	p.scratch = p.scratch[:0]
	*row = Row{}
	if p.tmpl.fits(p) {
		row.StaticID = p.tmpl.staticID
		return nil
	}
	// Not the learned layout: scan it in any key order, or else read it
	// in the general way. Both write any member's entry, and learn the
	// layout from the lines they read.
	p.reset(line, row)
	p.tmpl.primed = false
	if p.anyOrder() {
		p.anyOrderLines++
		p.tmpl.learn(p)
		return nil
	}
	p.reset(line, row)
	if !utf8.Valid(line) {
		off := 0
		for off < len(line) {
			r, n := utf8.DecodeRune(line[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return p.errAt(off, "invalid UTF-8")
	}
	if len(line) == 0 || isBlank(line) {
		return errors.New("empty line")
	}
	p.ws()
	if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
		return p.errAt(0, "byte order mark is not allowed")
	}
	var kind string
	if p.i < len(p.b) && p.b[p.i] == '{' {
		if err := p.object(); err != nil {
			return err
		}
		p.end = p.i
	} else {
		// Not an object: the value is still read whole, so that its first
		// defect is the one named.
		k, _, err := p.value(0)
		if err != nil {
			return err
		}
		kind = k
	}
	p.ws()
	if p.i != len(p.b) {
		return p.errf("unexpected %s after the value", p.peekDesc())
	}
	if kind != "" {
		return p.errAt(0, "want an object, found %s", kind)
	}
	p.tmpl.learn(p)
	return nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// object reads the line's object, typing each sample key as it goes.
func (p *lineParser) object() error {
	for j := 0; ; j++ {
		from := p.i
		if done, err := p.separator(j); err != nil || done {
			return err
		}
		if p.cached(j, from) {
			continue
		}
		keyAt := p.i
		key, err := p.key()
		if err != nil {
			return err
		}
		value := p.i
		if key >= 0 {
			err = p.member(key)
		} else {
			_, _, err = p.value(1)
		}
		if err != nil {
			return err
		}
		if j < maxMembers {
			p.members[j] = memberAt{from: from, value: value, valueEnd: p.i, key: int8(key)}
		}
		p.n = j + 1
		p.remember(key, keyAt, value)
	}
}

// separator reads what comes before the j-th member: the '{', or the ','
// after the member before, and the white space around them. It reports
// done at the object's end, and leaves p.i at the member's key.
func (p *lineParser) separator(j int) (done bool, err error) {
	if j == 0 {
		p.i++ // {
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return true, nil
		}
	} else {
		p.ws()
		if p.i >= len(p.b) {
			return false, p.errf("unexpected end of input in an object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true, nil
		default:
			return false, p.errf("want ',' or '}' in an object, found %s", p.peekDesc())
		}
	}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false, p.errf("want a key string, found %s", p.peekDesc())
	}
	return false, nil
}

// key reads a member's key, refused if seen before, and the colon after
// it; it returns the sample key, or -1 for another.
func (p *lineParser) key() (key int, err error) {
	keyAt := p.i
	var k []byte
	if key = quotedKey(p.b[p.i:]); key >= 0 {
		k = p.b[p.i+1 : p.i+1+len(keyNames[key])]
		p.i += len(keyNames[key]) + 2
	} else {
		if k, err = p.str(); err != nil {
			return 0, err
		}
		key = keyOf(k)
	}
	if key >= 0 {
		if p.seen&(1<<key) != 0 {
			return 0, p.errAt(keyAt, "duplicate key %q", string(k))
		}
		p.seen |= 1 << key
	} else if err := p.otherKey(keyAt, k); err != nil {
		return 0, err
	}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return 0, p.errf("want ':' after key %q, found %s", string(k), p.peekDesc())
	}
	p.i++
	p.ws()
	return key, nil
}

// otherKey notes a key a sample does not have, refusing it twice.
func (p *lineParser) otherKey(at int, k []byte) error {
	for _, o := range p.other {
		if string(o) == string(k) {
			return p.errAt(at, "duplicate key %q", string(k))
		}
	}
	p.other = append(p.other, k)
	return nil
}

// member reads the value of sample key key into the row, as its kind
// says. A value of the wrong type is read whole and remembered as the
// key's defect.
func (p *lineParser) member(key int) error {
	c := byte(0)
	if p.i < len(p.b) {
		c = p.b[p.i]
	}
	kind := sampleKeys[key].kind
	if c == 'n' && kind.nullable() {
		// A null optional reading is an absent one; a null persistence
		// mode or pstate is what an AMD sample has, and fields says
		// whether this one may.
		return p.null(key)
	}
	switch kind {
	case kindString, kindStringOrNull:
		if c != '"' {
			return p.wrongType(key)
		}
		s, err := p.str()
		if err != nil {
			return err
		}
		p.strs[key] = s
		return nil
	case kindNumberOrNull, kindWattsOrNull:
		if c != '-' && (c < '0' || c > '9') {
			return p.wrongType(key)
		}
		start := p.i
		n, err := p.number()
		if err != nil {
			return err
		}
		if kind == kindWattsOrNull && !(n.float > 0) {
			p.bad[key], p.hasBad = "want a positive number of W, found number "+string(p.b[start:p.i]), true
			return nil
		}
		p.floats[key] = n.float
		p.hasFloat |= 1 << key
		return nil
	case kindCounters:
		if c != '{' {
			return p.wrongType(key)
		}
		return p.counters()
	case kindIntArray:
		if c != '[' {
			return p.wrongType(key)
		}
		// Kept as written; fields reads its elements.
		start := p.i
		if err := p.skipNumbers(); err != nil {
			return err
		}
		p.strs[key] = p.b[start:p.i]
		return nil
	}
	// kindInt, kindIntOrNull.
	if c != '-' && (c < '0' || c > '9') {
		return p.wrongType(key)
	}
	start := p.i
	n, err := p.number()
	if err != nil {
		return err
	}
	if n.isInt {
		p.ints[key], p.intBits = n.int, p.intBits|1<<key
	} else {
		p.bad[key], p.hasBad = "want an integer, found number "+string(p.b[start:p.i]), true
	}
	return nil
}

// nullable reports whether a null is read for the kind (as an absent
// reading), rather than refused as the wrong type.
func (k valueKind) nullable() bool {
	return k == kindStringOrNull || k == kindIntOrNull || k == kindNumberOrNull || k == kindWattsOrNull || k == kindCounters
}

// null reads a null for an optional key, which is then as good as absent.
func (p *lineParser) null(key int) error {
	if _, _, err := p.value(1); err != nil {
		return err
	}
	// A null optional reading is an absent one.
	p.null_ |= 1 << key
	return nil
}

// wrongType reads a value of the wrong type whole and remembers it.
func (p *lineParser) wrongType(key int) error {
	_, desc, err := p.value(1)
	if err != nil {
		return err
	}
	want := "want a string, found "
	switch sampleKeys[key].kind {
	case kindCounters:
		want = "want an object of counters, found "
	case kindNumberOrNull, kindWattsOrNull:
		want = "want a number, found "
	case kindInt, kindIntOrNull:
		want = "want an integer, found "
	case kindIntArray:
		want = "want an array of integers, found "
	}
	p.bad[key], p.hasBad = want+desc, true
	return nil
}

// counters reads event_counters_us, an object of the driver's counters
// (CounterNames), each a non-negative integer of µs. A syntax error is
// the line's; any other defect (a key that is not a counter, a value of
// the wrong type or out of range, then a counter missing) is the key's:
// the first met in the object's order, else the first missing in
// CounterNames' order.
func (p *lineParser) counters() error {
	start := p.i
	if _, _, err := p.value(1); err != nil {
		return err
	}
	end := p.i
	// The object is valid JSON with no duplicate key: read it again.
	p.i = start + 1
	var c Counters
	have := 0
	defect := ""
	for {
		p.ws()
		if p.b[p.i] == '}' {
			break
		}
		if p.b[p.i] == ',' {
			p.i++
			p.ws()
		}
		k, _ := p.str()
		name := string(k)
		p.ws()
		p.i++ // ':'
		p.ws()
		vstart := p.i
		kind, desc, _ := p.value(2)
		if defect != "" {
			continue
		}
		i := counterIndex(name)
		if i < 0 {
			defect = fmt.Sprintf("%s is not a counter (want %s)", strconv.Quote(name), strings.Join(CounterNames[:], ", "))
			continue
		}
		var v int64
		ok := false
		if kind == "number" {
			save := p.i
			p.i = vstart
			if n, err := p.number(); err == nil && n.isInt {
				v, ok = n.int, true
			}
			p.i = save
		}
		switch {
		case !ok:
			defect = fmt.Sprintf("%s: want an integer of µs, found %s", name, desc)
		case v < 0 || v > maxCounterUS:
			defect = fmt.Sprintf("%s: want an integer of µs from 0 to 2^53, found %d", name, v)
		}
		c.Set(i, v)
		have |= 1 << i
	}
	p.i = end
	if defect == "" && have != 1<<len(CounterNames)-1 {
		for i, n := range CounterNames {
			if have&(1<<i) == 0 {
				defect = n + ": missing"
				break
			}
		}
	}
	if defect != "" {
		p.bad[kCounters], p.hasBad = defect, true
		return nil
	}
	p.counterVals = c
	return nil
}

// value reads any JSON value at depth and returns its kind and its
// description for messages ("number 1.5", "string \"x\"", "null", …).
func (p *lineParser) value(depth int) (kind, desc string, err error) {
	if depth > maxDepth {
		return "", "", p.errf("nesting deeper than %d", maxDepth)
	}
	if p.i >= len(p.b) {
		return "", "", p.errf("unexpected end of input")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return "object", "object", p.skipObject(depth)
	case c == '[':
		return "array", "array", p.skipArray(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return "", "", err
		}
		if len(s) > 40 {
			return "string", "string " + strconv.Quote(string(s[:40])+"…"), nil
		}
		return "string", "string " + strconv.Quote(string(s)), nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		if _, err := p.number(); err != nil {
			return "", "", err
		}
		return "number", "number " + string(p.b[start:p.i]), nil
	case c == 't':
		return "boolean", "true", p.literal("true")
	case c == 'f':
		return "boolean", "false", p.literal("false")
	case c == 'n':
		return "null", "null", p.literal("null")
	case c == 'N' || c == 'I':
		return "", "", p.errf("unexpected %s: NaN and Infinity are not JSON numbers", p.peekDesc())
	}
	return "", "", p.errf("unexpected %s", p.peekDesc())
}

func (p *lineParser) literal(word string) error {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return nil
	}
	return p.errf("unexpected %s (NaN, Infinity and other non-JSON words are refused)", p.peekDesc())
}

func (p *lineParser) skipObject(depth int) error {
	p.i++ // {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	var keys [][]byte
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.errf("want a key string, found %s", p.peekDesc())
		}
		keyAt := p.i
		k, err := p.str()
		if err != nil {
			return err
		}
		for _, o := range keys {
			if string(o) == string(k) {
				return p.errAt(keyAt, "duplicate key %q", string(k))
			}
		}
		keys = append(keys, k)
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.errf("want ':' after key %q, found %s", string(k), p.peekDesc())
		}
		p.i++
		p.ws()
		if _, _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.errf("unexpected end of input in an object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.errf("want ',' or '}' in an object, found %s", p.peekDesc())
		}
	}
}

func (p *lineParser) skipArray(depth int) error {
	p.i++ // [
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if _, _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.errf("unexpected end of input in an array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.errf("want ',' or ']' in an array, found %s", p.peekDesc())
		}
	}
}

// skipNumbers is skipArray(1) for an array of numbers, which it reads
// without describing each (a described value costs an allocation); any
// other element is read as skipArray reads it, with the same errors.
func (p *lineParser) skipNumbers() error {
	p.i++ // [
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
			if _, err := p.number(); err != nil {
				return err
			}
		} else if _, _, err := p.value(2); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.errf("unexpected end of input in an array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.errf("want ',' or ']' in an array, found %s", p.peekDesc())
		}
	}
}

// str reads a string at p.i and returns its value: the line's own bytes
// when it has no escape, else its decoding in the scratch space.
func (p *lineParser) str() ([]byte, error) {
	p.i++ // opening quote
	start := p.i
	p.i += plainRun(p.b[p.i:])
	if p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], nil
		case c < 0x20:
			return nil, p.errf("control character %#x in a string", c)
		}
	}
	from := len(p.scratch)
	p.scratch = append(p.scratch, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.scratch[from:len(p.scratch):len(p.scratch)], nil
		case c < 0x20:
			return nil, p.errf("control character %#x in a string", c)
		case c != '\\':
			p.scratch = append(p.scratch, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			break
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			p.scratch = append(p.scratch, e)
		case 'b':
			p.scratch = append(p.scratch, '\b')
		case 'f':
			p.scratch = append(p.scratch, '\f')
		case 'n':
			p.scratch = append(p.scratch, '\n')
		case 'r':
			p.scratch = append(p.scratch, '\r')
		case 't':
			p.scratch = append(p.scratch, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					r2, err := p.hex4()
					if err != nil {
						return nil, err
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
				if r == utf8.RuneError {
					return nil, p.errf("unpaired surrogate in a \\u escape")
				}
			}
			p.scratch = utf8.AppendRune(p.scratch, r)
		default:
			return nil, p.errf("invalid escape \\%c", e)
		}
	}
	return nil, p.errf("unterminated string")
}

// plainRun is how many bytes of b hold no '"', '\\' or control character:
// eight at a time while they last.
func plainRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte is flagged when it is zero in q or bs, or below 0x20 in w.
		// The lowest flagged byte is exact; those above it may not be.
		special := ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w) & highs
		if special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

func (p *lineParser) hex4() (rune, error) {
	if len(p.b)-p.i < 4 {
		return 0, p.errf("short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, p.errf("invalid \\u escape")
	}
	p.i += 4
	return rune(n), nil
}

// num is a number as read: whether it is an integer (no fraction or
// exponent, within int64) and its value then.
type num struct {
	isInt bool
	int   int64
	// float is the number's value in float64, as strconv.ParseFloat reads it.
	float float64
}

// pow10 are the powers of ten exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads a JSON number at p.i: its syntax, that it is finite in
// float64, and its value.

func (p *lineParser) number() (num, error) {
	start := p.i
	neg := p.b[p.i] == '-'
	if neg {
		p.i++
		if p.i < len(p.b) && p.b[p.i] == 'I' {
			return num{}, p.errf("-Infinity is not a JSON number")
		}
	}
	intStart := p.i
	var n uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + uint64(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - intStart
	if digits == 0 {
		return num{}, p.errf("want a digit in a number, found %s", p.peekDesc())
	}
	if digits > 1 && p.b[intStart] == '0' {
		return num{}, p.errAt(intStart, "leading zero in a number")
	}
	isInt := true
	// mant and frac are the digits and fraction digits of a plain decimal
	// (no exponent), for the exact path below.
	mant, frac := n, 0
	if p.i < len(p.b) && p.b[p.i] == '.' {
		isInt = false
		p.i++
		fracStart := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			mant = mant*10 + uint64(p.b[p.i]-'0')
			p.i++
		}
		frac = p.i - fracStart
		if frac == 0 {
			return num{}, p.errf("want a digit after '.', found %s", p.peekDesc())
		}
		if p.i == len(p.b) || (p.b[p.i] != 'e' && p.b[p.i] != 'E') {
			if digits+frac <= 15 && frac < len(pow10) {
				// A decimal of at most 15 digits is m / 10^k with both
				// exact in float64; one correctly rounded division gives
				// what strconv.ParseFloat gives (Clinger's fast path).
				f := float64(mant) / pow10[frac]
				if neg {
					f = -f
				}
				return num{float: f}, nil
			}
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		isInt = false
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		expStart := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		if p.i == expStart {
			return num{}, p.errf("want a digit in an exponent, found %s", p.peekDesc())
		}
	}
	if isInt && digits <= 18 {
		// Exact, and finite in float64 at this size.
		v := int64(n)
		if neg {
			v = -v
		}
		return num{isInt: true, int: v, float: float64(v)}, nil
	}
	raw := unsafe.String(&p.b[start], p.i-start)
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return num{}, p.errAt(start, "number %s is not finite in float64", raw)
	}
	if isInt {
		if v, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return num{isInt: true, int: v, float: f}, nil
		}
	}
	return num{float: f}, nil
}

// moduleWithoutLimit refuses a module's power limit in a sample that
// records no enforced limit of its own: it would judge nothing, and a
// record could not say it.
const moduleWithoutLimit = "present without enforced_power_limit_w: a module's limit is recorded beside the GPU's own"

// requiredKeys are the keys every sample has.
const requiredKeys = 1<<kTemperature - 1

// amdKeys are the keys only an AMD GPU's sample has; a line with any of
// them, or with a null persistence_mode or pstate, is checked key by key.
const (
	amdKeys   = 1<<kVendor | 1<<kPerfLevel | 1<<kMemoryPartition | 1<<kXCDClocks
	nullModes = 1<<kPersistence | 1<<kPState
)

// fields checks the sample's keys in key order and fills the row's typed
// values; the first defect is the error, naming its key.
func (p *lineParser) fields() error {
	r := p.row
	r.T, r.BootID, r.GPUUUID, r.GPUName = p.strs[kT], p.strs[kBootID], p.strs[kGPUUUID], p.strs[kGPUName]
	r.DriverVersion, r.Throttle, r.Persistence, r.PState = p.strs[kDriverVersion], p.strs[kThrottle], p.strs[kPersistence], p.strs[kPState]
	if p.seen&(1<<kThrottleField) != 0 {
		r.HasThrottleField, r.ThrottleField = true, p.strs[kThrottleField]
	}
	if p.null_&(1<<kPersistence) != 0 {
		r.Persistence = nil
	}
	if p.null_&(1<<kPState) != 0 {
		r.PState = nil
	}
	r.AppsNull = p.null_&(1<<kApps) != 0
	if p.hasFloat&(1<<kTemperature) != 0 {
		r.HasTemperature, r.TemperatureGPUC = true, p.floats[kTemperature]
	}
	if p.hasFloat&(1<<kPower) != 0 {
		r.HasPower, r.PowerDrawW = true, p.floats[kPower]
	}
	if p.hasFloat&(1<<kModuleLimit) != 0 && p.hasFloat&(1<<kPowerLimit) == 0 {
		p.bad[kModuleLimit], p.hasBad = moduleWithoutLimit, true
	}
	if p.hasFloat&(1<<kPowerLimit) != 0 {
		r.HasPowerLimit, r.PowerLimitW = true, p.floats[kPowerLimit]
	}
	if p.hasFloat&(1<<kModuleLimit) != 0 {
		r.HasModuleLimit, r.ModuleLimitW = true, p.floats[kModuleLimit]
	}
	if p.seen&(1<<kCounters) != 0 && p.null_&(1<<kCounters) == 0 {
		r.HasCounters, r.Counters = true, p.counterVals
	}
	hasVbios := p.seen&(1<<kVbios) != 0 && p.null_&(1<<kVbios) == 0
	if hasVbios {
		r.HasVbios, r.Vbios = true, p.strs[kVbios]
	}
	hasScope := p.seen&(1<<kEnergyScope) != 0 && p.null_&(1<<kEnergyScope) == 0
	if hasScope {
		r.HasEnergyScope, r.EnergyScope = true, p.strs[kEnergyScope]
	}
	ints := &p.ints
	if p.seen&requiredKeys != requiredKeys || p.hasBad || p.seen&amdKeys != 0 || p.null_&nullModes != 0 ||
		len(r.T) == 0 || len(r.BootID) == 0 || len(r.GPUUUID) == 0 || len(r.GPUName) == 0 ||
		len(r.DriverVersion) == 0 || len(r.Throttle) == 0 || len(r.Persistence) == 0 || len(r.PState) == 0 ||
		uint64(ints[kGPUIndex]) > maxSampleInt || uint64(ints[kUtilization]) > maxSampleInt ||
		p.intBits&(1<<kClocksMem) != 0 && uint64(ints[kClocksMem]) > maxSampleInt ||
		uint64(ints[kSMClock]-1) >= maxSampleInt || uint64(ints[kClocksMaxSM]-1) >= maxSampleInt ||
		p.intBits&(1<<kApps) != 0 && uint64(ints[kApps]-1) >= maxSampleInt ||
		hasVbios && len(r.Vbios) == 0 ||
		p.intBits&(1<<kEnergy) != 0 && uint64(ints[kEnergy]) > maxEnergyMJ ||
		hasScope && !validScope(r.EnergyScope) ||
		p.intBits&pcieKeys != 0 && !p.pcieValid() {
		// A defect: name the first, in key order.
		if err := p.firstDefect(); err != nil {
			return err
		}
	}
	if err := p.crossChecks(); err != nil {
		return err
	}
	r.GPUIndex = int(ints[kGPUIndex])
	r.SMClockMHz = int(ints[kSMClock])
	r.ClocksMaxSMMHz = int(ints[kClocksMaxSM])
	r.UtilizationGPUPct = int(ints[kUtilization])
	if p.intBits&(1<<kApps) != 0 {
		r.AppsMHz = int(ints[kApps])
	}
	if p.intBits&(1<<kClocksMem) != 0 {
		r.HasClocksMem, r.ClocksMemMHz = true, int(ints[kClocksMem])
	}
	if p.intBits&(1<<kEnergy) != 0 {
		r.HasEnergy, r.EnergyMJ = true, ints[kEnergy]
	}
	if p.intBits&pcieKeys != 0 {
		p.pcieRow()
	}
	if p.seen&amdKeys != 0 {
		// Only an AMD sample gets here (firstDefect refused any other).
		r.Vendor, r.PerfLevel = p.strs[kVendor], p.strs[kPerfLevel]
		if p.seen&(1<<kMemoryPartition) != 0 {
			r.MemoryPartition = p.strs[kMemoryPartition]
		}
		r.XCDClocksMHz = p.xcd
	}
	return nil
}

// validScope reports whether b is an energy_scope value.
func validScope(b []byte) bool {
	return string(b) == EnergyScopeGPU || string(b) == EnergyScopeModule
}

// amd reports whether the line is an AMD GPU's sample: its vendor key a
// string "amd".
func (p *lineParser) amd() bool {
	return p.seen&(1<<kVendor) != 0 && p.bad[kVendor] == "" && string(p.strs[kVendor]) == VendorAMD
}

// onlyAMD is the defect of an AMD key in another vendor's sample.
const onlyAMD = `only an AMD GPU's sample (vendor "amd") has it`

// missingAMD is the defect of an AMD sample without one of its keys.
const missingAMD = `missing: every AMD GPU's sample (vendor "amd") has it`

// describeString describes a string value as strictjson.Value.Describe
// does, for messages.
func describeString(b []byte) string {
	s := string(b)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return "string " + strconv.Quote(s)
}

// xcdClocks reads the elements of the line's xcd_clocks_mhz array, whose
// text is valid JSON already, into p.xcd: each a clock in MHz, the lowest
// of them sm_clock_mhz.
func (p *lineParser) xcdClocks() error {
	b, i := p.b, p.i
	defer func() { p.b, p.i = b, i }()
	p.b, p.i = p.strs[kXCDClocks], 1
	p.xcd = p.xcd[:0]
	p.ws()
	if p.b[p.i] == ']' {
		return fieldError(kXCDClocks, "empty array: want the GFX clock of every XCD")
	}
	lowest := 0
	for n := 0; ; n++ {
		p.ws()
		at := p.i
		if c := p.b[p.i]; c == '-' || c >= '0' && c <= '9' {
			v, _ := p.number() // valid: the array was read whole
			switch {
			case !v.isInt:
				return fieldError(kXCDClocks, fmt.Sprintf("element %d: want a positive integer, found number %s", n, p.b[at:p.i]))
			case v.int < 1 || v.int > maxSampleInt:
				return fieldError(kXCDClocks, fmt.Sprintf("element %d: want a positive integer, found %d", n, v.int))
			}
			p.xcd = append(p.xcd, int(v.int))
			if n == 0 || int(v.int) < lowest {
				lowest = int(v.int)
			}
		} else {
			_, desc, _ := p.value(2)
			return fieldError(kXCDClocks, fmt.Sprintf("element %d: want a positive integer, found %s", n, desc))
		}
		p.ws()
		if p.b[p.i] == ']' {
			break
		}
		p.i++ // ','
	}
	if sm := int(p.ints[kSMClock]); lowest != sm {
		return fieldError(kXCDClocks, fmt.Sprintf("lowest XCD clock %d MHz, but sm_clock_mhz is %d: it must be the lowest of them", lowest, sm))
	}
	return nil
}

// firstDefect names the first defect of the line's keys, in key order, up
// to the checks of values against each other; nil when there is none
// before them (a defect of an optional key comes after those).
func (p *lineParser) firstDefect() error {
	amd := p.amd()
	for k := 0; k < numKeys; k++ {
		present := p.seen&(1<<k) != 0
		switch {
		case !present && k < kTemperature:
			return fieldError(k, "missing")
		case p.bad[k] != "":
			return fieldError(k, p.bad[k])
		case !present && amd && (k == kPerfLevel || k == kXCDClocks):
			return fieldError(k, missingAMD)
		case !present:
			continue
		}
		switch k {
		case kPersistence, kPState:
			null := p.null_&(1<<k) != 0
			switch {
			case null && !amd:
				return fieldError(k, "want a string, found null")
			case !null && amd:
				return fieldError(k, `want null for vendor "amd" (AMD GPUs have none), found `+describeString(p.strs[k]))
			case !null && len(p.strs[k]) == 0:
				return fieldError(k, "empty string")
			}
		case kVendor:
			if !amd {
				return fieldError(k, `want "amd" (NVIDIA samples have no vendor key), found `+describeString(p.strs[k]))
			}
		case kPerfLevel, kMemoryPartition, kXCDClocks:
			switch {
			case !amd:
				return fieldError(k, onlyAMD)
			case k == kXCDClocks:
				if err := p.xcdClocks(); err != nil {
					return err
				}
			case len(p.strs[k]) == 0:
				return fieldError(k, "empty string")
			}
		case kVbios:
			if len(p.strs[k]) == 0 && p.null_&(1<<k) == 0 {
				return fieldError(k, "empty string")
			}
		case kEnergy:
			if v := p.ints[k]; p.intBits&(1<<k) != 0 && (v < 0 || v > maxEnergyMJ) {
				return fieldError(k, fmt.Sprintf("want an integer of mJ from 0 to %d, found %d", int64(maxEnergyMJ), v))
			}
		case kEnergyScope:
			if p.null_&(1<<k) == 0 && !validScope(p.strs[k]) {
				return fieldError(k, fmt.Sprintf("want %q or %q, found %s", EnergyScopeGPU, EnergyScopeModule, describeString(p.strs[k])))
			}
		case kPCIeGen, kPCIeWidth, kPCIeGenMax, kPCIeWidthMax:
			if v := p.ints[k]; p.intBits&(1<<k) != 0 && (v < 1 || v > maxPCIe) {
				return fieldError(k, fmt.Sprintf("want a positive integer up to %d, found %d", maxPCIe, v))
			}
		case kT, kBootID, kGPUUUID, kGPUName, kDriverVersion, kThrottle:
			if len(p.strs[k]) == 0 {
				return fieldError(k, "empty string")
			}
		case kGPUIndex, kUtilization, kClocksMem:
			if v := p.ints[k]; p.intBits&(1<<k) != 0 && (v < 0 || v > maxSampleInt) {
				return fieldError(k, fmt.Sprintf("want an integer ≥ 0, found %d", v))
			}
		case kSMClock, kClocksMaxSM, kApps:
			if v := p.ints[k]; p.intBits&(1<<k) != 0 && (v < 1 || v > maxSampleInt) {
				return fieldError(k, fmt.Sprintf("want a positive integer, found %d", v))
			}
		}
		if k == kApps {
			// The last required key: the checks of values against each
			// other come next, as they always have.
			if err := p.crossChecks(); err != nil {
				return err
			}
		}
	}
	return nil
}

// crossChecks are the checks of a value beyond its type: utilization in
// 0..100, the time RFC 3339, the throttle bit set hex.
func (p *lineParser) crossChecks() error {
	r := p.row
	if u := p.ints[kUtilization]; u > 100 {
		return fieldError(kUtilization, fmt.Sprintf("want 0 to 100, found %d", u))
	}
	var ok bool
	if r.Sec, r.Nsec, ok = p.times.read(r.T); !ok {
		return fieldError(kT, fmt.Sprintf("want an RFC 3339 time, found %q", string(r.T)))
	}
	if string(r.Throttle) == string(p.lastThrottle) && p.lastThrottle != nil {
		r.ThrottleBits = p.lastBits
	} else {
		if !hexBits(r.Throttle, &r.ThrottleBits) {
			return fieldError(kThrottle, fmt.Sprintf("%q is not a hex bit set like 0x0000000000000000", string(r.Throttle)))
		}
		p.lastThrottle, p.lastBits = append(p.lastThrottle[:0], r.Throttle...), r.ThrottleBits
	}
	return nil
}

// times reads a stream's time stamps: the sampler's form, with the minute
// a stamp falls in remembered from the stamp before, and any other RFC
// 3339 form through time.Parse.
type times struct {
	minute   [17]byte // "2026-08-12T10:15:"
	base     int64    // its Unix seconds
	haveBase bool
}

func (c *times) read(t []byte) (sec, nsec int64, ok bool) {
	if len(t) == 24 && c.haveBase && t[19] == '.' && t[23] == 'Z' && string(t[:17]) == string(c.minute[:]) {
		s0, s1, m0, m1, m2 := t[17]-'0', t[18]-'0', t[20]-'0', t[21]-'0', t[22]-'0'
		if s0 <= 5 && s1 <= 9 && m0 <= 9 && m1 <= 9 && m2 <= 9 {
			return c.base + int64(s0)*10 + int64(s1), (int64(m0)*100 + int64(m1)*10 + int64(m2)) * 1e6, true
		}
	}
	if validTime(t) {
		sec, nsec = canonicalTime(t)
		copy(c.minute[:], t[:17])
		c.base, c.haveBase = sec-int64(t[17]-'0')*10-int64(t[18]-'0'), true
		return sec, nsec, true
	}
	tm, err := time.Parse(time.RFC3339Nano, unsafe.String(&t[0], len(t)))
	if err != nil {
		return 0, 0, false
	}
	return tm.Unix(), int64(tm.Nanosecond()), true
}

func fieldError(k int, msg string) error {
	return fmt.Errorf("%s: %s", keyNames[k], msg)
}
