package benchfmt

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// Opener opens a file of the tree by its path relative to TREE, as a
// regular file clockgate may read (summarize refuses links that leave the
// tree and anything that is not a regular file).
type Opener func(rel string) (*os.File, error)

// Options are what a reader needs beyond the files.
type Options struct {
	// BenchTZ is the zone AIPerf's start_time and end_time were written in
	// (they name none); nil when --bench-tz was not given, and then those
	// fields place no window.
	BenchTZ *time.Location
}

// The epochs a window's instants must lie between: a timestamp outside is
// not an epoch time (a monotonic clock, a count of seconds read as
// nanoseconds), and is refused rather than placed in time.
var (
	minEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxEpoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// epochWant is what an epoch field must hold, for a message.
func epochWant(unit string) string {
	return fmt.Sprintf("epoch %s from %s to %s", unit, minEpoch.Format("2006-01-02"), maxEpoch.Format("2006-01-02"))
}

// inEpoch reports whether t lies between minEpoch and maxEpoch.
func inEpoch(t time.Time) bool { return !t.Before(minEpoch) && t.Before(maxEpoch) }

// readWhole reads a file of the tree whole, refusing one over
// MaxBenchBytes; the error is one line naming rel.
func readWhole(open Opener, rel string) ([]byte, error) {
	f, err := open(rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), HintUnread)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), HintUnread)
	}
	if st.Size() > MaxBenchBytes {
		return nil, fmt.Errorf("%s: %d bytes, larger than %d MiB (the bench file cap); refused unread", rel, st.Size(), MaxBenchBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBenchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), HintUnread)
	}
	if len(data) > MaxBenchBytes {
		return nil, fmt.Errorf("%s: grew past %d MiB (the bench file cap) while it was read; refused", rel, MaxBenchBytes>>20)
	}
	return data, nil
}

// parseStrict parses data as one strict JSON object; the error is one line
// naming rel:line.
func parseStrict(rel string, data []byte) (*strictjson.Value, error) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s:%d: %s; %s", rel, lineOf(data, se.Offset), se.Msg, hintRestore)
		}
		return nil, fmt.Errorf("%s: %v; %s", rel, err, hintRestore)
	}
	return v, nil
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	n := 1
	for _, c := range data[:off] {
		if c == '\n' {
			n++
		}
	}
	return n
}

// at is the member at a dotted path of objects, nil when any step is
// missing or not an object.
func at(v *strictjson.Value, path string) *strictjson.Value {
	for more := true; more; {
		var k string
		k, path, more = strings.Cut(path, ".")
		if v == nil || v.Kind != strictjson.Object {
			return nil
		}
		v = v.Fields[k]
	}
	return v
}

// checker collects a result's defects, each naming its key.
type checker struct{ bad []string }

func (c *checker) addf(format string, args ...any) {
	c.bad = append(c.bad, fmt.Sprintf(format, args...))
}

// num reads a finite number ≥ 0 at key; v is the value found there.
func (c *checker) num(key string, v *strictjson.Value) (float64, bool) {
	if v == nil || v.Kind != strictjson.Number || !(v.Num >= 0) || math.IsInf(v.Num, 0) {
		c.addf("%s: want a finite number ≥ 0, found %s", key, describe(v))
		return 0, false
	}
	return v.Num, true
}

// count reads a count at key: an integer from min to MaxCount, written
// with or without a fraction of zero (AIPerf writes 64.0).
func (c *checker) count(key string, v *strictjson.Value, min int64) (int, bool) {
	if v == nil || v.Kind != strictjson.Number || v.Num != math.Trunc(v.Num) || v.Num < float64(min) || v.Num > MaxCount {
		c.addf("%s: want %s, found %s", key, IntWant(min), describe(v))
		return 0, false
	}
	return int(v.Num), true
}

// describe names v for a message; nil is a missing key.
func describe(v *strictjson.Value) string {
	if v == nil {
		return "nothing (key missing)"
	}
	return v.Describe()
}
