package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// streamLine is what the picture reads from one stream line.
type streamLine struct {
	t time.Time
	// boot lies in the reader's buffer: valid only during the call.
	boot      []byte
	mhz, util int
	// bits is the throttle bit set.
	bits uint64
}

// readStream reads every line of a stream as a sample, in order. A line
// in the form clockgate sample writes (clocks.Sample.AppendJSON: keys in
// its order, plain ASCII strings, integers without sign or leading zero)
// is read by a narrow scanner that accepts nothing clocks.ParseSample
// would refuse; any other line is handed to clocks.ParseSample itself.
// So the picture reads what the contract accepts, several times faster
// than the strict parser alone, and any bad line is an error.
func readStream(r io.Reader, each func(streamLine) error) error {
	br := bufio.NewReaderSize(r, clocks.MaxLineBytes+1)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("line %d: longer than %d bytes", n, clocks.MaxLineBytes)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: %w", n, err)
		}
		// A last line without its newline is read like clocks.Scanner reads
		// it: used when it is a whole sample, an error when it is not.
		last := err == io.EOF
		body := bytes.TrimSuffix(line, []byte("\n"))
		l, ok := scanCanonical(body)
		if !ok {
			s, perr := clocks.ParseSample(body)
			if perr != nil {
				return fmt.Errorf("line %d: %w", n, perr)
			}
			l = streamLine{boot: []byte(s.BootID), mhz: s.SMClockMHz, util: s.UtilizationGPUPct}
			l.t, _ = time.Parse(time.RFC3339Nano, s.T)
			l.bits, _ = hexBits(s.ThrottleReasonsActive)
		}
		if err := each(l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if last {
			return nil
		}
	}
}

// hexBits reads a throttle bit set as clocks.ParseThrottle does
// (0x and 1 to 16 hex digits), without a regular expression.
func hexBits[T string | []byte](s T) (uint64, bool) {
	if len(s) < 3 || len(s) > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return 0, false
	}
	var v uint64
	for i := 2; i < len(s); i++ {
		ch := s[i]
		var d byte
		switch {
		case ch >= '0' && ch <= '9':
			d = ch - '0'
		case ch >= 'a' && ch <= 'f':
			d = ch - 'a' + 10
		case ch >= 'A' && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// scanCanonical reads a line written by clocks.Sample.AppendJSON, and
// only such a line whose every value clocks.ParseSample accepts; for any
// other it returns false and the strict parser decides.
func scanCanonical(b []byte) (streamLine, bool) {
	c := scanner{b: b}
	var l streamLine
	var idx, maxMHz, apps, mem int
	var t, throttle, skip []byte
	ok := c.lit(`{"t":`) && c.str(&t) &&
		c.lit(`,"boot_id":`) && c.str(&l.boot) &&
		c.lit(`,"gpu_index":`) && c.int(&idx, 0) &&
		c.lit(`,"gpu_uuid":`) && c.str(&skip) &&
		c.lit(`,"gpu_name":`) && c.str(&skip) &&
		c.lit(`,"driver_version":`) && c.str(&skip) &&
		c.lit(`,"sm_clock_mhz":`) && c.int(&l.mhz, 1) &&
		c.lit(`,"clocks_max_sm_mhz":`) && c.int(&maxMHz, 1) &&
		c.lit(`,"clocks_applications_graphics_mhz":`) && (c.lit("null") || c.int(&apps, 1)) &&
		c.lit(`,"throttle_reasons_active":`) && c.str(&throttle) &&
		c.lit(`,"persistence_mode":`) && c.str(&skip) &&
		c.lit(`,"pstate":`) && c.str(&skip) &&
		c.lit(`,"utilization_gpu_pct":`) && c.int(&l.util, 0) && l.util <= 100
	if !ok {
		return l, false
	}
	// The optional keys, in AppendJSON's order, each at most once.
	if c.lit(`,"temperature_gpu_c":`) && !c.decimal() {
		return l, false
	}
	if c.lit(`,"power_draw_w":`) && !c.decimal() {
		return l, false
	}
	if c.lit(`,"clocks_mem_mhz":`) && !c.int(&mem, 0) {
		return l, false
	}
	if c.lit(`,"throttle_field":`) && !c.str(&skip) {
		return l, false
	}
	if !c.lit("}") || c.i != len(b) {
		return l, false
	}
	if l.bits, ok = hexBits(throttle); !ok {
		return l, false
	}
	var err error
	l.t, err = time.Parse(time.RFC3339Nano, string(t))
	return l, err == nil
}

type scanner struct {
	b []byte
	i int
}

func (c *scanner) lit(s string) bool {
	if len(c.b)-c.i >= len(s) && string(c.b[c.i:c.i+len(s)]) == s {
		c.i += len(s)
		return true
	}
	return false
}

// str reads a non-empty string of printable ASCII without escapes.
func (c *scanner) str(out *[]byte) bool {
	if !c.lit(`"`) {
		return false
	}
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			if c.i == start {
				return false
			}
			*out = c.b[start:c.i]
			c.i++
			return true
		case ch < 0x20 || ch > 0x7e || ch == '\\':
			return false
		}
		c.i++
	}
	return false
}

// int reads an integer without sign or leading zero, from min to 1<<40.
func (c *scanner) int(out *int, min int) bool {
	start := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' && c.i-start < 14 {
		c.i++
	}
	digits := c.b[start:c.i]
	if len(digits) == 0 || len(digits) > 13 || (len(digits) > 1 && digits[0] == '0') {
		return false
	}
	v := 0
	for _, d := range digits {
		v = v*10 + int(d-'0')
	}
	if v < min || v > 1<<40 {
		return false
	}
	*out = v
	return true
}

// decimal reads a number of at most 15 digits either side of an optional
// point, with an optional minus, no exponent and no leading zero.
func (c *scanner) decimal() bool {
	c.lit("-")
	digits := func() int {
		start := c.i
		for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
			c.i++
		}
		return c.i - start
	}
	start := c.i
	if n := digits(); n == 0 || n > 15 || (n > 1 && c.b[start] == '0') {
		return false
	}
	if c.lit(".") {
		if n := digits(); n == 0 || n > 15 {
			return false
		}
	}
	return true
}
