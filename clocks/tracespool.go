package clocks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// TraceSpool keeps traces' points in a file instead of memory: a summary
// of many legs puts each leg's traces there as the leg is judged, and a
// picture reads them back when it is drawn. What a trace keeps in memory
// is then its span, boots and flags, whatever its number of points.
type TraceSpool struct {
	f   TraceFile
	mu  sync.Mutex
	end int64
}

// TraceFile is where a TraceSpool writes: a temporary file, read back
// where it was written.
type TraceFile interface {
	io.ReaderAt
	io.WriterAt
}

// tracePointBytes is a point's size in the spool: T's bits, MHz, boot and
// flags, little-endian.
const tracePointBytes = 16

// The flags byte of a spooled point.
const (
	spoolIdle = 1 << iota
	spoolThrottled
	spoolPowerManaged
)

// NewTraceSpool returns a spool writing to f from its start.
func NewTraceSpool(f TraceFile) *TraceSpool { return &TraceSpool{f: f} }

// Put writes tr's points to the spool and lets go of them: tr.Points is
// nil after, and ReadPoints reads them back. A trace already in a spool,
// or without points, is left as it is.
func (s *TraceSpool) Put(tr *Trace) error {
	if tr == nil || tr.spool != nil || len(tr.Points) == 0 {
		return nil
	}
	buf := make([]byte, len(tr.Points)*tracePointBytes)
	for i, p := range tr.Points {
		b := buf[i*tracePointBytes : (i+1)*tracePointBytes]
		binary.LittleEndian.PutUint64(b[0:], math.Float64bits(p.T))
		binary.LittleEndian.PutUint32(b[8:], uint32(p.MHz))
		binary.LittleEndian.PutUint16(b[12:], p.Boot)
		var flags byte
		if p.Idle {
			flags |= spoolIdle
		}
		if p.Throttled {
			flags |= spoolThrottled
		}
		if p.PowerManaged {
			flags |= spoolPowerManaged
		}
		b[14] = flags
	}
	s.mu.Lock()
	off := s.end
	s.end += int64(len(buf))
	s.mu.Unlock()
	if _, err := s.f.WriteAt(buf, off); err != nil {
		return err
	}
	tr.spool, tr.off, tr.n = s, off, len(tr.Points)
	tr.Points = nil
	return nil
}

// Len is how many points the trace has, in memory or in its spool.
func (tr *Trace) Len() int {
	if tr.spool != nil {
		return tr.n
	}
	return len(tr.Points)
}

// ReadPoints returns the trace's points: Points, or, for a trace put in a
// spool, its points read back (a new slice each call, which the trace does
// not keep).
func (tr *Trace) ReadPoints() ([]TracePoint, error) {
	if tr.spool == nil {
		return tr.Points, nil
	}
	buf := make([]byte, tr.n*tracePointBytes)
	if _, err := tr.spool.f.ReadAt(buf, tr.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading a trace of %d points back: %w", tr.n, err)
	}
	out := make([]TracePoint, tr.n)
	for i := range out {
		b := buf[i*tracePointBytes : (i+1)*tracePointBytes]
		out[i] = TracePoint{T: math.Float64frombits(binary.LittleEndian.Uint64(b[0:])), MHz: int32(binary.LittleEndian.Uint32(b[8:])),
			Boot: binary.LittleEndian.Uint16(b[12:]), Idle: b[14]&spoolIdle != 0, Throttled: b[14]&spoolThrottled != 0,
			PowerManaged: b[14]&spoolPowerManaged != 0}
	}
	return out, nil
}
