package clocks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// FoldStream reads a whole stream into a fold. Lines are read in place; a
// line in the exact shape Sample.AppendJSON writes is folded without
// allocating, and any other line goes through ParseSample, so the verdict
// is the strict parser's either way. The error is a *LineError.
func FoldStream(r io.Reader) (*Fold, error) {
	f := NewFold()
	br := bufio.NewReaderSize(r, MaxLineBytes+1)
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		if len(b) == 0 && err == io.EOF {
			f.finish()
			return f, nil
		}
		line++
		if errors.Is(err, bufio.ErrBufferFull) {
			f.finish()
			return f, &LineError{line, fmt.Errorf("longer than %d bytes; refused unread", MaxLineBytes)}
		}
		if err != nil && err != io.EOF {
			f.finish()
			return f, &LineError{line, err}
		}
		torn := err == io.EOF
		body := b
		if !torn {
			body = b[:len(b)-1]
		}
		if lerr := f.addLine(body, line); lerr != nil {
			f.finish()
			if torn {
				lerr = fmt.Errorf("torn final line (no newline): %v", lerr)
			}
			return f, &LineError{line, lerr}
		}
		if torn {
			f.finish()
			return f, nil
		}
	}
}

// finish materializes what the fast path kept in scratch space.
func (f *Fold) finish() {
	if f.lastFast != nil {
		f.LastT = string(f.lastFast)
		f.lastFast = nil
	}
}

// addLine folds one stream line (without its newline), refusing it exactly
// as ParseSample would.
func (f *Fold) addLine(b []byte, line int) error {
	if f.First != nil && f.addFast(b) {
		return nil
	}
	f.finish()
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty line")
	}
	s, err := ParseSample(b)
	if err != nil {
		return err
	}
	f.Add(s, line)
	return nil
}

// lineView holds the fields of a canonical line as slices of it.
type lineView struct {
	t, boot, uuid, name, driver, throttle, persist []byte
	sm, maxsm, apps, util                          int
	appsNull                                       bool
	bits                                           uint64
}

// addFast folds a line in the canonical shape and reports true, or
// reports false having changed nothing. It accepts a strict subset of what
// ParseSample accepts: every value it takes, ParseSample takes the same.
func (f *Fold) addFast(b []byte) bool {
	var v lineView
	p := cursor{b: b}
	ok := p.lit(`{"t":"`) && p.str(&v.t) && validTime(v.t) &&
		p.lit(`,"boot_id":"`) && p.str(&v.boot) &&
		p.lit(`,"gpu_index":`) && p.uint(new(int), 0) &&
		p.lit(`,"gpu_uuid":"`) && p.str(&v.uuid) &&
		p.lit(`,"gpu_name":"`) && p.str(&v.name) &&
		p.lit(`,"driver_version":"`) && p.str(&v.driver) &&
		p.lit(`,"sm_clock_mhz":`) && p.uint(&v.sm, 1) &&
		p.lit(`,"clocks_max_sm_mhz":`) && p.uint(&v.maxsm, 1) &&
		p.lit(`,"clocks_applications_graphics_mhz":`) && (p.null(&v.appsNull) || p.uint(&v.apps, 1)) &&
		p.lit(`,"throttle_reasons_active":"`) && p.str(&v.throttle) && hexBits(v.throttle, &v.bits) &&
		p.lit(`,"persistence_mode":"`) && p.str(&v.persist) &&
		p.lit(`,"pstate":"`) && p.str(new([]byte)) &&
		p.lit(`,"utilization_gpu_pct":`) && p.uint(&v.util, 0) && v.util <= 100 &&
		(!p.lit(`,"temperature_gpu_c":`) || p.decimal()) &&
		(!p.lit(`,"power_draw_w":`) || p.decimal()) &&
		(!p.lit(`,"clocks_mem_mhz":`) || p.uint(new(int), 0)) &&
		(!p.lit(`,"throttle_field":"`) || p.str(new([]byte))) &&
		p.lit(`}`) && p.i == len(b)
	if !ok || !utf8.Valid(b) {
		return false
	}
	first := f.First
	if string(v.boot) != first.BootID || string(v.uuid) != first.GPUUUID || string(v.name) != first.GPUName ||
		string(v.driver) != first.DriverVersion || v.maxsm != first.ClocksMaxSMMHz ||
		v.appsNull != (first.ClocksApplicationsGraphicsMHz == nil) ||
		(!v.appsNull && v.apps != *first.ClocksApplicationsGraphicsMHz) {
		return false // drift: the slow path records it
	}
	if v.util > 0 {
		if _, seen := f.Throttle[v.bits]; !seen {
			return false // a new throttle value: the slow path keeps its spelling
		}
	}
	if string(v.persist) != "Enabled" {
		return false
	}
	f.Total++
	f.lastFast = append(f.lastFast[:0], v.t...)
	if v.util == 0 {
		f.Idle++
		return true
	}
	f.Hist[v.sm]++
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

// str reads a string body up to its closing quote; it refuses escapes,
// control bytes and the empty string, leaving those to the strict parser.
func (c *cursor) str(out *[]byte) bool {
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		if ch == '"' {
			if c.i == start {
				return false
			}
			*out = c.b[start:c.i]
			c.i++
			return true
		}
		if ch == '\\' || ch < 0x20 {
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
