package clocks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one stream line; a longer line is refused without
// being read whole.
const MaxLineBytes = 64 << 10

// LineError is a defect at one line of a stream.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// At prints the error in the path:line: message form.
func (e *LineError) At(path string) string { return fmt.Sprintf("%s:%d: %v", path, e.Line, e.Err) }

// ErrorAt prints err as path:line: message when it is a LineError, else as
// path: message.
func ErrorAt(path string, err error) string {
	var le *LineError
	if errors.As(err, &le) {
		return le.At(path)
	}
	return fmt.Sprintf("%s: %v", path, err)
}

// Scanner reads a *.samples.jsonl stream one sample at a time, in the shape
// of bufio.Scanner. Any bad line, a torn final line included, stops it with
// an error naming the line.
type Scanner struct {
	r      *bufio.Reader
	line   int
	sample *Sample
	err    error
	done   bool
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{r: bufio.NewReaderSize(r, MaxLineBytes+1)}
}

// Scan advances to the next sample. It returns false at the end of the
// stream or at the first defect; Err tells which.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	line, err := s.r.ReadSlice('\n')
	if len(line) == 0 && err == io.EOF {
		s.done = true
		return false
	}
	s.line++
	if errors.Is(err, bufio.ErrBufferFull) {
		return s.fail(fmt.Errorf("longer than %d bytes; refused unread", MaxLineBytes))
	}
	if err != nil && err != io.EOF {
		return s.fail(err)
	}
	torn := err == io.EOF // no newline: the last line of a cut stream
	body := bytes.TrimSuffix(line, []byte("\n"))
	var sm *Sample
	var perr error
	if len(bytes.TrimSpace(body)) == 0 {
		perr = errors.New("empty line")
	} else {
		sm, perr = ParseSample(body)
	}
	if perr != nil {
		if torn {
			return s.fail(fmt.Errorf("torn final line (no newline): %v", perr))
		}
		return s.fail(perr)
	}
	s.sample = sm
	if torn {
		s.done = true
	}
	return true
}

func (s *Scanner) fail(err error) bool {
	s.err = &LineError{Line: s.line, Err: err}
	s.done = true
	s.sample = nil
	return false
}

// Sample returns the sample read by the last successful Scan.
func (s *Scanner) Sample() *Sample { return s.sample }

// Line returns the 1-based line number of the last line read.
func (s *Scanner) Line() int { return s.line }

// Err returns the first defect met, or nil at a clean end.
func (s *Scanner) Err() error { return s.err }
