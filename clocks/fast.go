package clocks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// FoldStream reads a whole stream into a fold. Lines are read in place; a
// line in the exact shape Sample.AppendJSON writes is folded without
// allocating, and any other line goes through ParseSample, so the verdict
// is the strict parser's either way. The error is a *LineError.
func FoldStream(r io.Reader) (*Fold, error) {
	f := NewFold()
	err := eachLine(r, f.addLine)
	f.finish()
	return f, err
}

// LineView is what one stream line says of the clock. For a line in the
// shape Sample.AppendJSON writes, T and BootID lie in the reader's buffer
// and are valid only during the call.
type LineView struct {
	// Line is the 1-based line number.
	Line              int
	T                 []byte
	BootID            []byte
	SMClockMHz        int
	UtilizationGPUPct int
	// ThrottleBits is the active throttle bit set.
	ThrottleBits uint64
}

// Time is T as a time.
func (v *LineView) Time() (time.Time, error) {
	if validTime(v.T) {
		d := func(i, j int) int {
			n := 0
			for _, c := range v.T[i:j] {
				n = n*10 + int(c-'0')
			}
			return n
		}
		return time.Date(d(0, 4), time.Month(d(5, 7)), d(8, 10), d(11, 13), d(14, 16), d(17, 19), d(20, 23)*1e6, time.UTC), nil
	}
	return time.Parse(time.RFC3339Nano, string(v.T))
}

// EachLine reads a stream and calls fn with every sample in order. It
// accepts and refuses exactly what Scanner does, reading canonical lines in
// place; the first bad line, or error from fn, stops it as a *LineError.
func EachLine(r io.Reader, fn func(*LineView) error) error {
	var shape *fastShape
	var v LineView
	return eachLine(r, func(b []byte, line int) error {
		if shape != nil && shape.parse(b, &v) {
			v.Line = line
			return fn(&v)
		}
		s, err := parseLine(b)
		if err != nil {
			return err
		}
		if shape == nil {
			shape = newFastShape(s)
		}
		bits, _ := ParseThrottle(s.ThrottleReasonsActive)
		v = LineView{Line: line, T: []byte(s.T), BootID: []byte(s.BootID), SMClockMHz: s.SMClockMHz,
			UtilizationGPUPct: s.UtilizationGPUPct, ThrottleBits: bits}
		return fn(&v)
	})
}

// eachLine reads a stream's lines in place and hands each, without its
// newline, to fn. A line over MaxLineBytes is refused unread; a final line
// without a newline is used when fn takes it, else it is a torn line.
func eachLine(r io.Reader, fn func(b []byte, line int) error) error {
	br := bufio.NewReaderSize(r, MaxLineBytes+1)
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		if len(b) == 0 && err == io.EOF {
			return nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return &LineError{line, fmt.Errorf("longer than %d bytes; refused unread", MaxLineBytes)}
		}
		if err != nil && err != io.EOF {
			return &LineError{line, err}
		}
		torn := err == io.EOF
		if !torn {
			b = b[:len(b)-1]
		}
		if lerr := fn(b, line); lerr != nil {
			if torn {
				lerr = fmt.Errorf("torn final line (no newline): %v", lerr)
			}
			return &LineError{line, lerr}
		}
		if torn {
			return nil
		}
	}
}

// parseLine is ParseSample with the empty line named.
func parseLine(b []byte) (*Sample, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty line")
	}
	return ParseSample(b)
}

// finish materializes what the fast path kept in scratch space.
func (f *Fold) finish() {
	f.flushLast()
	for i, n := range f.dense {
		if n > 0 {
			f.Hist[f.denseBase+i] += int(n)
		}
	}
	f.dense, f.denseBase = nil, 0
}

// flushLast sets LastT from the last line the fast path read.
func (f *Fold) flushLast() {
	if f.lastFast != nil {
		f.LastT = string(f.lastFast)
		f.lastFast = nil
	}
}

// addLine folds one stream line (without its newline), refusing it exactly
// as ParseSample would.
func (f *Fold) addLine(b []byte, line int) error {
	if f.First != nil && !strictOnly && f.addFast(b, line) {
		return nil
	}
	f.flushLast()
	s, err := parseLine(b)
	if err != nil {
		return err
	}
	f.Add(s, line)
	return nil
}

// fastShape is what a canonical line must hold, byte for byte, between its
// variable values, taken from the window's first sample.
type fastShape struct {
	// afterT runs from the end of t to the start of sm_clock_mhz's value.
	afterT string
	// afterSM runs from sm_clock_mhz's value to the throttle bits.
	afterSM string
	// ok is false when the first sample's strings are not plain printable
	// ASCII, so their JSON text is not the string itself.
	ok bool
	// bootID is the first sample's, which every canonical line repeats.
	bootID []byte
}

func plainASCII(ss ...string) bool {
	for _, s := range ss {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
	}
	return true
}

func newFastShape(s *Sample) *fastShape {
	if !plainASCII(s.BootID, s.GPUUUID, s.GPUName, s.DriverVersion) {
		return &fastShape{}
	}
	apps := "null"
	if s.ClocksApplicationsGraphicsMHz != nil {
		apps = strconv.Itoa(*s.ClocksApplicationsGraphicsMHz)
	}
	return &fastShape{
		afterT: `,"boot_id":"` + s.BootID + `","gpu_index":` + strconv.Itoa(s.GPUIndex) +
			`,"gpu_uuid":"` + s.GPUUUID + `","gpu_name":"` + s.GPUName +
			`","driver_version":"` + s.DriverVersion + `","sm_clock_mhz":`,
		afterSM: `,"clocks_max_sm_mhz":` + strconv.Itoa(s.ClocksMaxSMMHz) +
			`,"clocks_applications_graphics_mhz":` + apps + `,"throttle_reasons_active":"`,
		ok:     true,
		bootID: []byte(s.BootID),
	}
}

// strictOnly turns the fast path off, for tests that hold the two paths'
// verdicts equal.
var strictOnly bool

// denseSpan is how many clock values around the first busy one are counted
// in an array rather than the map.
const denseSpan = 4096

// parse reads a line in the canonical shape whose static fields are the
// shape's and whose persistence is Enabled into v, and reports true; or
// reports false. Every line it takes, ParseSample takes to the same sample.
func (sh *fastShape) parse(b []byte, v *LineView) bool {
	if !sh.ok {
		return false
	}
	var hex []byte
	p := cursor{b: b}
	ok := p.lit(`{"t":"`) && p.take(24, &v.T) && validTime(v.T) &&
		p.lit(sh.afterT) && p.uint(&v.SMClockMHz, 1) &&
		p.lit(sh.afterSM) && p.hex(&hex, &v.ThrottleBits) &&
		p.lit(`,"persistence_mode":"Enabled","pstate":"`) && p.ascii() &&
		p.lit(`,"utilization_gpu_pct":`) && p.uint(&v.UtilizationGPUPct, 0) && v.UtilizationGPUPct <= 100 &&
		(!p.lit(`,"temperature_gpu_c":`) || p.decimal()) &&
		(!p.lit(`,"power_draw_w":`) || p.decimal()) &&
		(!p.lit(`,"clocks_mem_mhz":`) || p.uint(new(int), 0)) &&
		(!p.lit(`,"throttle_field":"`) || p.ascii()) &&
		p.lit(`}`) && p.i == len(b)
	v.BootID = sh.bootID
	return ok
}

// addFast folds a line in the canonical shape, with the first sample's
// static fields and persistence Enabled, and reports true; or reports false
// having changed nothing. Every line it takes, ParseSample takes to the
// same sample, so the fold is the strict path's.
func (f *Fold) addFast(b []byte, line int) bool {
	if f.shape == nil {
		f.shape = newFastShape(f.First)
	}
	var v LineView
	if !f.shape.parse(b, &v) {
		return false
	}
	if v.UtilizationGPUPct > 0 {
		if _, seen := f.Throttle[v.ThrottleBits]; !seen {
			return false // a new throttle value: the slow path keeps its spelling
		}
	}
	f.Total++
	f.fastLines++
	f.lastFast = append(f.lastFast[:0], v.T...)
	sec, nsec := canonicalTime(v.T)
	f.gap(sec, nsec, v.T, line)
	if v.UtilizationGPUPct == 0 {
		f.Idle++
		return true
	}
	sm := v.SMClockMHz
	if f.dense == nil {
		f.dense, f.denseBase = make([]int32, denseSpan), sm-denseSpan/2
	}
	if d := sm - f.denseBase; uint(d) < uint(len(f.dense)) {
		f.dense[d]++
	} else {
		f.Hist[sm]++
	}
	return true
}

type cursor struct {
	b []byte
	i int
}

func (c *cursor) lit(s string) bool {
	if len(c.b)-c.i < len(s) || string(c.b[c.i:c.i+len(s)]) != s {
		return false
	}
	c.i += len(s)
	return true
}

// take reads n bytes of a string and its closing quote.
func (c *cursor) take(n int, out *[]byte) bool {
	if len(c.b)-c.i < n+1 || c.b[c.i+n] != '"' {
		return false
	}
	*out = c.b[c.i : c.i+n]
	c.i += n + 1
	return true
}

// hex reads a throttle bit set and its closing quote.
func (c *cursor) hex(out *[]byte, bits *uint64) bool {
	start := c.i
	for c.i < len(c.b) && c.b[c.i] != '"' {
		c.i++
	}
	if c.i == len(c.b) || !hexBits(c.b[start:c.i], bits) {
		return false
	}
	*out = c.b[start:c.i]
	c.i++
	return true
}

// ascii reads a non-empty string of printable ASCII without escapes and its
// closing quote; anything else is the strict parser's.
func (c *cursor) ascii() bool {
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		if ch == '"' {
			c.i++
			return c.i-1 > start
		}
		if ch < 0x20 || ch > 0x7e || ch == '\\' {
			return false
		}
		c.i++
	}
	return false
}

// uint reads a decimal integer without sign, leading zero or fraction, of
// at most 12 digits, that is at least min.
func (c *cursor) uint(out *int, min int) bool {
	start, n := c.i, 0
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' && c.i-start < 12 {
		n = n*10 + int(c.b[c.i]-'0')
		c.i++
	}
	digits := c.i - start
	if digits == 0 || (digits > 1 && c.b[start] == '0') || n < min || n > 1<<40 {
		return false
	}
	if c.i < len(c.b) {
		switch c.b[c.i] {
		case ',', '}':
		default:
			return false
		}
	}
	*out = n
	return true
}

// decimal reads a number with at most 15 digits and no exponent, so it is
// always finite; other numbers go to the strict parser.
func (c *cursor) decimal() bool {
	if c.i < len(c.b) && c.b[c.i] == '-' {
		c.i++
	}
	start, digits := c.i, 0
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
		digits++
	}
	if digits == 0 || (digits > 1 && c.b[start] == '0') {
		return false
	}
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		frac := 0
		for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
			c.i++
			frac++
		}
		if frac == 0 {
			return false
		}
		digits += frac
	}
	return digits <= 15 && c.i < len(c.b) && (c.b[c.i] == ',' || c.b[c.i] == '}')
}

func (c *cursor) null(isNull *bool) bool {
	if c.lit("null") {
		*isNull = true
		return true
	}
	return false
}

func hexBits(s []byte, out *uint64) bool {
	if len(s) < 3 || len(s) > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	var n uint64
	for _, ch := range s[2:] {
		var d byte
		switch {
		case ch >= '0' && ch <= '9':
			d = ch - '0'
		case ch >= 'a' && ch <= 'f':
			d = ch - 'a' + 10
		case ch >= 'A' && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return false
		}
		n = n<<4 | uint64(d)
	}
	*out = n
	return true
}

// canonicalTime is a time validTime accepts, as Unix seconds and
// nanoseconds, for every year it accepts.
func canonicalTime(t []byte) (sec, nsec int64) {
	d := func(i, j int) int64 {
		n := int64(0)
		for _, c := range t[i:j] {
			n = n*10 + int64(c-'0')
		}
		return n
	}
	// Days from the civil date (proleptic Gregorian), as in Howard
	// Hinnant's days_from_civil, with floor division for year 0.
	y, m, day := d(0, 4), d(5, 7), d(8, 10)
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return days*86400 + d(11, 13)*3600 + d(14, 16)*60 + d(17, 19), d(20, 23) * 1e6
}

// validTime accepts exactly the sampler's form, 2026-08-12T10:15:03.123Z,
// with every field in range; anything else goes to time.Parse.
func validTime(t []byte) bool {
	if len(t) != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.' || t[23] != 'Z' {
		return false
	}
	num := func(i, j int) int {
		n := 0
		for k := i; k < j; k++ {
			if t[k] < '0' || t[k] > '9' {
				return -1
			}
			n = n*10 + int(t[k]-'0')
		}
		return n
	}
	y, mo, d, h, mi, s, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}
