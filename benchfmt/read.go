package benchfmt

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clockgate/clockgate/strictjson"
)

// MaxBenchBytes bounds one bench file. A detailed result (vLLM's
// per-request arrays, SGLang's --output-details) of 10,000 prompts runs to a
// few hundred MiB; a larger file is refused unread.
const MaxBenchBytes = 1 << 30

// The bounds of what the bench reader holds in memory while it streams a
// file. None of them is near what vLLM or SGLang write.
const (
	// MaxKeptString bounds a top-level string kept for all-runs.json; a
	// longer one is kept as {"string_len": N}.
	MaxKeptString = 64 << 10
	// maxKeyBytes bounds a top-level key.
	maxKeyBytes = 4 << 10
	// maxNumberBytes bounds the text of a top-level number.
	maxNumberBytes = 1 << 10
	// maxOpenKeyBytes bounds the keys held, to find duplicates, of the
	// nested objects open at one time.
	maxOpenKeyBytes = 1 << 20
	// benchBufSize is the read buffer.
	benchBufSize = 64 << 10
)

// kind is the JSON type of a top-level value, with Python's NaN, Infinity
// and -Infinity (json.dumps writes them for float nan and inf) as a kind of
// their own.
type kind int

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
	kPython
)

// field is one top-level member of a bench object, as read: scalars are
// kept, arrays and objects only counted.
type field struct {
	kind kind
	// text is a number's text as written, a string's value, or the Python
	// literal as written.
	text string
	// strLen is a string's length in bytes when it was longer than
	// MaxKeptString (text is then empty).
	strLen int64
	b      bool
	// n is an array's element count or an object's key count.
	n int64
	// nonEmpty counts an array's elements that are non-empty strings.
	nonEmpty int64
}

// describe names f for a message: "number 24.0", `string "8"`, "null",
// "Infinity", "an array of 10".
func (f *field) describe() string {
	if f == nil {
		return "nothing (key missing)"
	}
	switch f.kind {
	case kNull:
		return "null"
	case kBool:
		return strconv.FormatBool(f.b)
	case kNumber:
		return "number " + f.text
	case kString:
		if f.strLen > 0 {
			return fmt.Sprintf("a string of %d bytes", f.strLen)
		}
		s := f.text
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return "string " + strconv.Quote(s)
	case kArray:
		return fmt.Sprintf("an array of %d", f.n)
	case kObject:
		return fmt.Sprintf("an object of %d keys", f.n)
	}
	return f.text
}

// benchValue is one top-level value of a bench file: an object's members,
// or the kind of anything else.
type benchValue struct {
	line   int
	kind   kind
	keys   []string
	fields map[string]*field
}

// syntaxError is a defect of a bench file's bytes, at a line.
type syntaxError struct {
	line int
	msg  string
	// atEnd says the input had ended where the defect was found.
	atEnd bool
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d: %s", e.line, e.msg) }

// benchReader streams a bench file: strict JSON (UTF-8, no duplicate
// keys at any depth, nesting bounded by strictjson.MaxDepth) plus Python's
// NaN, Infinity and -Infinity, one or more top-level values each on lines
// of its own. It keeps the top-level scalars of each value and only counts
// arrays and objects, so its memory does not grow with the file.
type benchReader struct {
	r    io.Reader
	buf  []byte
	i, n int
	eof  bool
	rerr error
	line int
	// base is the file offset of buf[0]; bol the file offset of the
	// line the reader is in, once a newline has been read.
	base, bol int64
	// openKeys holds the keys of the nested objects open now; openBytes
	// is their size.
	openKeys  []map[string]struct{}
	openBytes int
	// started counts the top-level values begun, whole or not.
	started int
	// scratch collects a string or number being kept.
	scratch []byte
	// lastBool and lastPython are the last boolean and Python literal
	// read.
	lastBool   bool
	lastPython string
}

func newBenchReader(r io.Reader) *benchReader {
	// scratch is never nil: a kept empty string is an empty slice, and a
	// nil one means "too long to keep".
	return &benchReader{r: r, buf: benchBufs.Get().(*[benchBufSize]byte)[:], line: 1, scratch: make([]byte, 0, 256)}
}

// benchBufs keeps read buffers between bench files: a tree has a file per
// point per leg, and a new buffer for each would be most of what a
// summarize allocates, and collects.
var benchBufs = sync.Pool{New: func() any { return new([benchBufSize]byte) }}

// release hands the reader's buffer back for the next file; the reader is
// done.
func (b *benchReader) release() {
	if len(b.buf) == benchBufSize {
		benchBufs.Put((*[benchBufSize]byte)(b.buf))
	}
	b.buf, b.r = nil, nil
}

// fill makes at least want bytes available unless the input ends first.
func (b *benchReader) fill(want int) bool {
	if b.n-b.i >= want {
		return true
	}
	if b.eof {
		return false
	}
	copy(b.buf, b.buf[b.i:b.n])
	b.base += int64(b.i)
	b.n -= b.i
	b.i = 0
	for b.n < want && !b.eof {
		m, err := b.r.Read(b.buf[b.n:])
		b.n += m
		if err != nil {
			b.eof = true
			if err != io.EOF {
				b.rerr = err
			}
		}
	}
	return b.n-b.i >= want
}

// off is the file offset of the next byte.
func (b *benchReader) off() int64 { return b.base + int64(b.i) }

// newline counts the newline at the reader's position, and consumes it.
func (b *benchReader) newline() {
	b.i++
	b.line++
	b.bol = b.off()
}

func (b *benchReader) errf(format string, args ...any) error {
	return &syntaxError{line: b.line, msg: fmt.Sprintf(format, args...), atEnd: b.eof && b.i >= b.n}
}

// peek returns the next byte without consuming it; ok is false at the end.
func (b *benchReader) peek() (byte, bool) {
	if b.i < b.n || b.fill(1) {
		return b.buf[b.i], true
	}
	return 0, false
}

// peekDesc names the next character for a message.
func (b *benchReader) peekDesc() string {
	if !b.fill(1) {
		return "end of input"
	}
	b.fill(utf8.UTFMax)
	r, _ := utf8.DecodeRune(b.buf[b.i:b.n])
	return strconv.QuoteRune(r)
}

// ws skips white space and reports whether it held a newline.
func (b *benchReader) ws() bool {
	nl := false
	for {
		c, ok := b.peek()
		if !ok {
			return nl
		}
		switch c {
		case '\n':
			b.newline()
			nl = true
			continue
		case ' ', '\t', '\r':
		default:
			return nl
		}
		b.i++
	}
}

// maxSyntaxErrors bounds the syntax errors read past in one bench file: a
// file broken that often is not results, and its first errors say why.
const maxSyntaxErrors = 10

// item is one top-level value of a bench file as read, in file order:
// the value, or the syntax error that ended it.
type item struct {
	v   *benchValue
	err *syntaxError
}

// readAll reads every top-level value of the file, in file order. A syntax
// error spoils only the value it is in: reading resumes at the next line
// that starts with '{' (a new object, as --append-result and SGLang write
// them), so the values before and after it are still read. Reading stops
// for good at a NUL byte (the file is not text from there) and after
// maxSyntaxErrors errors; the last error says so. The error is one the
// reader returned; the items are what was read before it.
func (b *benchReader) readAll() ([]item, error) {
	var items []item
	if b.fill(3) && b.buf[0] == 0xEF && b.buf[1] == 0xBB && b.buf[2] == 0xBF {
		items = append(items, item{err: &syntaxError{line: 1, msg: "byte order mark is not allowed: a benchmark writes UTF-8 without one"}})
		b.i += 3
	}
	errs := len(items)
	for {
		b.ws()
		if _, ok := b.peek(); !ok {
			break
		}
		from := b.off()
		v, err := b.topValue()
		if err == nil {
			items = append(items, item{v: v})
			continue
		}
		var se *syntaxError
		if !errors.As(err, &se) {
			return items, err
		}
		if b.rerr != nil && se.atEnd {
			break // the read error ended the input, not the file
		}
		if se.line != v.line {
			se.msg += fmt.Sprintf(" (in the value that starts on line %d)", v.line)
		}
		items = append(items, item{err: se})
		errs++
		more, nul := b.resync(from)
		switch {
		case nul:
			se.msg += fmt.Sprintf(" (a NUL byte at line %d: the file is not text from there; the rest of it is unread)", b.line)
		case more && errs == maxSyntaxErrors:
			se.msg += fmt.Sprintf(" (%d syntax errors, the most read past in one file: the rest of it, from line %d, is unread)", maxSyntaxErrors, b.line)
		case more:
			continue
		}
		break
	}
	if b.rerr != nil {
		return items, b.rerr
	}
	if len(items) == 0 {
		items = append(items, item{err: &syntaxError{line: 1, msg: "empty file: want one bench result object per point"}})
	}
	return items, nil
}

// topValue reads one top-level value and what follows it on its line.
func (b *benchReader) topValue() (*benchValue, error) {
	b.started++
	v := &benchValue{line: b.line}
	c, _ := b.peek()
	var err error
	if c == '{' {
		v.kind = kObject
		err = b.topObject(v)
	} else {
		v.kind, err = b.value(0, nil)
	}
	if err != nil {
		return v, err
	}
	// The next value, if any, must start on a line of its own.
	for {
		c, ok := b.peek()
		if !ok || (c != ' ' && c != '\t' && c != '\r') {
			break
		}
		b.i++
	}
	if c, ok := b.peek(); ok && c != '\n' {
		what := "an object"
		if v.kind != kObject {
			what = "a value"
		}
		return v, b.errf("want a newline after %s, found %s", what, b.peekDesc())
	}
	return v, nil
}

// resync skips past a syntax error in the value that started at file
// offset from, to the next line that starts with '{' (the reader may be
// there already: a torn object followed by the next one). more reports
// whether there is one; nul that a NUL byte came first.
func (b *benchReader) resync(from int64) (more, nul bool) {
	for {
		c, ok := b.peek()
		switch {
		case !ok:
			return false, false
		case c == 0:
			return false, true
		case c == '{' && b.off() == b.bol && b.off() > from:
			return true, false
		case c == '\n':
			b.newline()
		default:
			b.i++
		}
	}
}

// topObject reads a top-level object into v: each member's scalar kept,
// arrays and objects counted.
func (b *benchReader) topObject(v *benchValue) error {
	b.i++ // {
	v.fields = map[string]*field{}
	b.ws()
	if c, ok := b.peek(); ok && c == '}' {
		b.i++
		return nil
	}
	for {
		b.ws()
		c, ok := b.peek()
		if !ok || c != '"' {
			if !ok {
				return b.errf("unexpected end of input in an object")
			}
			return b.errf("want a key string, found %s", b.peekDesc())
		}
		key, _, err := b.str(maxKeyBytes, true)
		if err != nil {
			return err
		}
		if key == nil {
			return b.errf("a key longer than %d bytes", maxKeyBytes)
		}
		k := string(key)
		if _, dup := v.fields[k]; dup {
			return b.errf("duplicate key %q", k)
		}
		b.ws()
		if c, ok := b.peek(); !ok || c != ':' {
			return b.errf("want ':' after key %q, found %s", k, b.peekDesc())
		}
		b.i++
		b.ws()
		f, err := b.topMember()
		if err != nil {
			return err
		}
		v.keys = append(v.keys, k)
		v.fields[k] = f
		b.ws()
		c, ok = b.peek()
		if !ok {
			return b.errf("unexpected end of input in an object")
		}
		switch c {
		case ',':
			b.i++
		case '}':
			b.i++
			return nil
		default:
			return b.errf("want ',' or '}' in an object, found %s", b.peekDesc())
		}
	}
}

// topMember reads the value of a top-level member.
func (b *benchReader) topMember() (*field, error) {
	c, ok := b.peek()
	if !ok {
		return nil, b.errf("unexpected end of input")
	}
	f := &field{}
	switch {
	case c == '"':
		s, n, err := b.str(MaxKeptString, true)
		if err != nil {
			return nil, err
		}
		f.kind = kString
		if s == nil {
			f.strLen = n
		} else {
			f.text = string(s)
		}
		return f, nil
	case c == '[':
		f.kind = kArray
		return f, b.array(1, f)
	case c == '{':
		f.kind = kObject
		return f, b.object(1, f)
	case c == '-' || (c >= '0' && c <= '9'):
		text, py, err := b.number(true)
		if err != nil {
			return nil, err
		}
		f.kind, f.text = kNumber, text
		if py {
			f.kind = kPython
		}
		return f, nil
	}
	k, err := b.value(1, nil)
	if err != nil {
		return nil, err
	}
	f.kind = k
	switch k {
	case kBool:
		f.b = b.lastBool
	case kPython:
		f.text = b.lastPython
	}
	return f, nil
}

// value reads any value at depth, keeping nothing. counter, when not nil,
// is the array it is an element of.
func (b *benchReader) value(depth int, counter *field) (kind, error) {
	if depth > strictjson.MaxDepth {
		return 0, b.errf("nesting deeper than %d", strictjson.MaxDepth)
	}
	c, ok := b.peek()
	if !ok {
		return 0, b.errf("unexpected end of input")
	}
	switch {
	case c == '{':
		return kObject, b.object(depth+1, nil)
	case c == '[':
		return kArray, b.array(depth+1, nil)
	case c == '"':
		_, n, err := b.str(0, false)
		if err == nil && counter != nil && n > 0 {
			counter.nonEmpty++
		}
		return kString, err
	case c == '-' || (c >= '0' && c <= '9'):
		_, py, err := b.number(false)
		if py {
			return kPython, err
		}
		return kNumber, err
	case c == 't':
		b.lastBool = true
		return kBool, b.literal("true")
	case c == 'f':
		b.lastBool = false
		return kBool, b.literal("false")
	case c == 'n':
		return kNull, b.literal("null")
	case c == 'N':
		b.lastPython = "NaN"
		return kPython, b.literal("NaN")
	case c == 'I':
		b.lastPython = "Infinity"
		return kPython, b.literal("Infinity")
	}
	return 0, b.errf("unexpected %s: want a JSON value", b.peekDesc())
}

func (b *benchReader) literal(word string) error {
	if !b.fill(len(word)) || string(b.buf[b.i:b.i+len(word)]) != word {
		return b.errf("unexpected %s (want %s; other words are not JSON)", b.peekDesc(), word)
	}
	b.i += len(word)
	return nil
}

// array reads an array at depth, counting its elements into f when f is
// not nil.
func (b *benchReader) array(depth int, f *field) error {
	if depth > strictjson.MaxDepth {
		return b.errf("nesting deeper than %d", strictjson.MaxDepth)
	}
	b.i++ // [
	b.ws()
	if c, ok := b.peek(); ok && c == ']' {
		b.i++
		return nil
	}
	for {
		b.ws()
		if _, err := b.value(depth, f); err != nil {
			return err
		}
		if f != nil {
			f.n++
		}
		b.ws()
		c, ok := b.peek()
		if !ok {
			return b.errf("unexpected end of input in an array")
		}
		switch c {
		case ',':
			b.i++
		case ']':
			b.i++
			return nil
		default:
			return b.errf("want ',' or ']' in an array, found %s", b.peekDesc())
		}
	}
}

// object reads a nested object at depth, counting its keys into f when f
// is not nil. Its keys are held until it closes, to find duplicates.
func (b *benchReader) object(depth int, f *field) error {
	if depth > strictjson.MaxDepth {
		return b.errf("nesting deeper than %d", strictjson.MaxDepth)
	}
	b.i++ // {
	keys := map[string]struct{}{}
	b.openKeys = append(b.openKeys, keys)
	held := 0
	defer func() {
		b.openKeys = b.openKeys[:len(b.openKeys)-1]
		b.openBytes -= held
	}()
	b.ws()
	if c, ok := b.peek(); ok && c == '}' {
		b.i++
		return nil
	}
	for {
		b.ws()
		c, ok := b.peek()
		if !ok {
			return b.errf("unexpected end of input in an object")
		}
		if c != '"' {
			return b.errf("want a key string, found %s", b.peekDesc())
		}
		key, _, err := b.str(maxOpenKeyBytes-b.openBytes, true)
		if err != nil {
			return err
		}
		if key == nil {
			return b.errf("the objects open at once hold more than %d bytes of keys; refused", maxOpenKeyBytes)
		}
		k := string(key)
		if _, dup := keys[k]; dup {
			return b.errf("duplicate key %q", k)
		}
		keys[k] = struct{}{}
		held += len(k) + 16
		b.openBytes += len(k) + 16
		if f != nil {
			f.n++
		}
		b.ws()
		if c, ok := b.peek(); !ok || c != ':' {
			return b.errf("want ':' after key %q, found %s", k, b.peekDesc())
		}
		b.i++
		b.ws()
		if _, err := b.value(depth, nil); err != nil {
			return err
		}
		b.ws()
		c, ok = b.peek()
		if !ok {
			return b.errf("unexpected end of input in an object")
		}
		switch c {
		case ',':
			b.i++
		case '}':
			b.i++
			return nil
		default:
			return b.errf("want ',' or '}' in an object, found %s", b.peekDesc())
		}
	}
}

// str reads a string, validating its escapes and UTF-8. When keep is set
// and the decoded string is at most max bytes, it is returned; otherwise
// the result is nil and n is its decoded length in bytes.
func (b *benchReader) str(max int, keep bool) ([]byte, int64, error) {
	b.i++ // opening quote
	b.scratch = b.scratch[:0]
	var n int64
	add := func(p []byte) {
		n += int64(len(p))
		if keep && n <= int64(max) {
			b.scratch = append(b.scratch, p...)
		}
	}
	for {
		if b.i >= b.n && !b.fill(1) {
			return nil, n, b.errf("unterminated string")
		}
		// A run of plain ASCII at once.
		j := b.i
		for j < b.n {
			c := b.buf[j]
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				break
			}
			j++
		}
		if j > b.i {
			add(b.buf[b.i:j])
			b.i = j
			continue
		}
		c := b.buf[b.i]
		switch {
		case c == '"':
			b.i++
			if keep && n <= int64(max) {
				return b.scratch, n, nil
			}
			return nil, n, nil
		case c < 0x20:
			return nil, n, b.errf("control character %#x in a string", c)
		case c >= 0x80:
			b.fill(utf8.UTFMax)
			r, size := utf8.DecodeRune(b.buf[b.i:b.n])
			if r == utf8.RuneError && size <= 1 {
				return nil, n, b.errf("invalid UTF-8")
			}
			add(b.buf[b.i : b.i+size])
			b.i += size
		default: // backslash
			if !b.fill(2) {
				return nil, n, b.errf("unterminated string")
			}
			e := b.buf[b.i+1]
			b.i += 2
			var one [1]byte
			switch e {
			case '"', '\\', '/':
				one[0] = e
			case 'b':
				one[0] = '\b'
			case 'f':
				one[0] = '\f'
			case 'n':
				one[0] = '\n'
			case 'r':
				one[0] = '\r'
			case 't':
				one[0] = '\t'
			case 'u':
				r, err := b.hex4()
				if err != nil {
					return nil, n, err
				}
				if utf16.IsSurrogate(r) {
					if b.fill(2) && b.buf[b.i] == '\\' && b.buf[b.i+1] == 'u' {
						b.i += 2
						r2, err := b.hex4()
						if err != nil {
							return nil, n, err
						}
						r = utf16.DecodeRune(r, r2)
					} else {
						r = utf8.RuneError
					}
					if r == utf8.RuneError {
						return nil, n, b.errf("unpaired surrogate in a \\u escape")
					}
				}
				add(utf8.AppendRune(nil, r))
				continue
			default:
				return nil, n, b.errf("invalid escape \\%c", e)
			}
			add(one[:])
		}
	}
}

func (b *benchReader) hex4() (rune, error) {
	if !b.fill(4) {
		return 0, b.errf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(b.buf[b.i:b.i+4]), 16, 32)
	if err != nil {
		return 0, b.errf("invalid \\u escape")
	}
	b.i += 4
	return rune(v), nil
}

// number reads a number, or Python's -Infinity. When keep is set its text
// is returned (and checked to be finite in float64); py reports -Infinity.
func (b *benchReader) number(keep bool) (string, bool, error) {
	b.scratch = b.scratch[:0]
	tooLong := false
	take := func() {
		c := b.buf[b.i]
		b.i++
		if keep {
			if len(b.scratch) < maxNumberBytes {
				b.scratch = append(b.scratch, c)
			} else {
				tooLong = true
			}
		}
	}
	digits := func() int {
		m := 0
		for {
			c, ok := b.peek()
			if !ok || c < '0' || c > '9' {
				return m
			}
			take()
			m++
		}
	}
	if c, _ := b.peek(); c == '-' {
		take()
		if c, ok := b.peek(); ok && c == 'I' {
			if err := b.literal("Infinity"); err != nil {
				return "", false, err
			}
			b.lastPython = "-Infinity"
			return "-Infinity", true, nil
		}
	}
	first, _ := b.peek()
	switch m := digits(); {
	case m == 0:
		return "", false, b.errf("want a digit in a number, found %s", b.peekDesc())
	case m > 1 && first == '0':
		return "", false, b.errf("leading zero in a number")
	}
	if c, ok := b.peek(); ok && c == '.' {
		take()
		if digits() == 0 {
			return "", false, b.errf("want a digit after '.', found %s", b.peekDesc())
		}
	}
	if c, ok := b.peek(); ok && (c == 'e' || c == 'E') {
		take()
		if c, ok := b.peek(); ok && (c == '+' || c == '-') {
			take()
		}
		if digits() == 0 {
			return "", false, b.errf("want a digit in an exponent, found %s", b.peekDesc())
		}
	}
	if !keep {
		return "", false, nil
	}
	if tooLong {
		return "", false, b.errf("a number longer than %d bytes", maxNumberBytes)
	}
	text := string(b.scratch)
	if x, err := strconv.ParseFloat(text, 64); (err != nil && !errors.Is(err, strconv.ErrRange)) || math.IsInf(x, 0) {
		return "", false, b.errf("number %s is not finite in float64", text)
	}
	return text, false, nil
}
