package benchfmt

import (
	"os"
	"strconv"
	"time"
)

// PointsSuffix ends a leg's points file, written by clockgate mark beside
// its clock stream: clocks/<model>/<engine>/r<N>.points.jsonl.
const PointsSuffix = ".points.jsonl"

// The events of a points file's lines.
const (
	MarkBegin = "begin"
	MarkEnd   = "end"
)

// MarkLine is one line of a points file, as clockgate mark writes it:
// the point, the event, the time in the sampler's format, and the exit
// status on an end line (exit nil on a begin line).
func MarkLine(point, event string, t time.Time, exit *int) string {
	s := `{"point":` + strconv.Quote(point) + `,"event":"` + event + `","t":"` + t.UTC().Format("2006-01-02T15:04:05.000Z") + `"`
	if exit != nil {
		s += `,"exit":` + strconv.Itoa(*exit)
	}
	return s + "}"
}

// AppendMark appends one whole line to the points file at path, in one
// write, and syncs it.
func AppendMark(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(line + "\n")); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
