package summarize

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// BenchContract is the bench evidence's constants in force.
type BenchContract struct {
	// MaxBenchFileMiB is MaxBenchBytes, in MiB.
	MaxBenchFileMiB int `json:"max_bench_file_mib"`
	// MaxOutputDiffPct is ratio.MaxOutputDiffPct, in percent.
	MaxOutputDiffPct float64 `json:"max_output_diff_pct"`
}

// BenchInForce is the bench contract in force.
func BenchInForce() BenchContract {
	return BenchContract{MaxBenchFileMiB: MaxBenchBytes >> 20, MaxOutputDiffPct: ratio.MaxOutputDiffPct}
}

type blockRow struct {
	Model    string        `json:"model"`
	Ours     string        `json:"ours"`
	Baseline string        `json:"baseline"`
	Clock    *clocks.Block `json:"clock"`
}

// row encodes the leg's all-runs.json row, as an element of the legs
// array, and lets go of what only the row needed: the bench and memory
// objects as written.
//
// A row is an object of these members, in key order, laid out as
// strictjson.Canonical lays out the whole file:
//
//	bench             each valid point's object as kept (Point.Raw), in
//	                  point order
//	bench_formats     the formats the leg's bench results were read as
//	binding_eligible  whether the leg has no reason
//	clock             the leg's clock record as read; null when missing
//	                  or invalid
//	engine, model, run
//	memory            the memory record verbatim; null when missing or
//	                  invalid
//	reasons           the leg's reasons
//
// The points, most of a row's bytes, are canonical already and are copied
// in; only the clock record, the memory record and the reasons go through
// Canonical.
func (l *Leg) row() ([]byte, error) {
	const (
		memberIn = elemIndent + "  "
		pointIn  = memberIn + "  "
	)
	size := 512
	for i := range l.bench {
		size += len(l.bench[i].Raw) * 5 / 4
	}
	b := make([]byte, 0, size)
	b = append(b, elemIndent+"{"...)
	member := func(key string, first bool) {
		if !first {
			b = append(b, ',')
		}
		b = append(b, "\n"+memberIn+`"`...)
		b = append(b, key...)
		b = append(b, `": `...)
	}
	var err error
	value := func(v any) {
		c, e := strictjson.Canonical(v)
		if e != nil && err == nil {
			err = e
		}
		b = appendIndented(b, bytes.TrimSuffix(c, []byte("\n")), memberIn)
	}

	member("bench", true)
	if len(l.Points) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i := range l.Points {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n"+pointIn...)
			if i < len(l.bench) && l.bench[i].Raw != nil {
				b = appendIndented(b, l.bench[i].Raw, pointIn)
			} else {
				// Let go of already (a row written twice): null, as a
				// nil map encodes.
				b = append(b, "null"...)
			}
		}
		b = append(b, "\n"+memberIn+"]"...)
	}
	member("bench_formats", false)
	value(nonNil(l.BenchFormats))
	member("binding_eligible", false)
	b = strconv.AppendBool(b, l.BindingEligible())
	member("clock", false)
	value(l.Clock.Record)
	member("engine", false)
	b = strictjson.AppendString(b, l.Engine)
	member("memory", false)
	if l.Memory != nil && l.Memory.Raw != nil {
		value(l.Memory.Raw)
	} else {
		b = append(b, "null"...)
	}
	member("model", false)
	b = strictjson.AppendString(b, l.Model)
	member("reasons", false)
	value(nonNil(l.Reasons))
	member("run", false)
	b = strconv.AppendInt(b, int64(l.Run), 10)
	b = append(b, "\n"+elemIndent+"}"...)
	l.dropRaw()
	if err != nil {
		return nil, err
	}
	return b, nil
}

// appendIndented appends JSON laid out at depth 0, each line after its
// first indented by in.
func appendIndented(b, json []byte, in string) []byte {
	for {
		i := bytes.IndexByte(json, '\n')
		if i < 0 {
			return append(b, json...)
		}
		b = append(b, json[:i+1]...)
		b = append(b, in...)
		json = json[i+1:]
	}
}

// dropRaw lets go of the leg's bench and memory objects as written, and
// of its points as read, which only its all-runs.json row needs: Points
// keep what ratios and reports read.
func (l *Leg) dropRaw() {
	if l.Memory != nil {
		l.Memory.Raw = nil
	}
	l.bench = nil
}

// The indentation of a member of the top-level object, and of an element
// of an array that is such a member, as strictjson.Canonical indents them.
const (
	memberIndent = "  "
	elemIndent   = "    "
)

// indent is canonical JSON (ending in a newline) as a value at the given
// indentation: its lines after the first indented, no final newline. An
// array element gets the indentation before its first line too.
func indent(canonical []byte, in string) []byte {
	var b []byte
	if in == elemIndent {
		b = []byte(in)
	}
	return appendIndented(b, bytes.TrimSuffix(canonical, []byte("\n")), in)
}

// objectWriter writes a top-level JSON object member by member, in the
// layout strictjson.Canonical gives the whole: members must come in key
// order.
type objectWriter struct {
	w   *bufio.Writer
	n   int
	err error
}

func newObjectWriter(w io.Writer) *objectWriter {
	o := &objectWriter{w: bufio.NewWriterSize(w, 64<<10)}
	o.write([]byte("{"))
	return o
}

func (o *objectWriter) write(b []byte) {
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}

func (o *objectWriter) key(k string) {
	if o.n > 0 {
		o.write([]byte(","))
	}
	o.n++
	o.write([]byte("\n" + memberIndent + `"` + k + `": `))
}

// value writes one member whole.
func (o *objectWriter) value(k string, v any) {
	o.key(k)
	b, err := strictjson.Canonical(v)
	if err != nil && o.err == nil {
		o.err = err
	}
	o.write(indent(b, memberIndent))
}

// array writes one member that is an array of n elements, element by
// element.
func (o *objectWriter) array(k string, n int, elem func(i int) ([]byte, error)) {
	o.key(k)
	if n == 0 {
		o.write([]byte("[]"))
		return
	}
	o.write([]byte("["))
	for i := 0; i < n; i++ {
		b, err := elem(i)
		if err != nil && o.err == nil {
			o.err = err
		}
		if i > 0 {
			o.write([]byte(","))
		}
		o.write([]byte("\n"))
		o.write(b)
	}
	o.write([]byte("\n" + memberIndent + "]"))
}

// canonicalElem encodes v as an element of a member array.
func canonicalElem(v any) ([]byte, error) {
	b, err := strictjson.Canonical(v)
	if err != nil {
		return nil, err
	}
	return indent(b, elemIndent), nil
}

func (o *objectWriter) close() error {
	o.write([]byte("\n}\n"))
	if o.err != nil {
		return o.err
	}
	return o.w.Flush()
}

// WriteSummary writes summary.json: the contract in force,
// allow_cross_boot, gate_pass, every comparison's THROUGHPUT and MEMORY
// ratio, and the warnings, one comparison at a time. The same summary
// always gives the same bytes.
func (s *Summary) WriteSummary(w io.Writer) error {
	o := newObjectWriter(w)
	o.value("allow_cross_boot", s.AllowCrossBoot)
	o.value("bench_contract", BenchInForce())
	o.array("comparisons", len(s.Comparisons), func(i int) ([]byte, error) { return canonicalElem(s.Comparisons[i]) })
	o.value("contract", s.Contract)
	o.value("gate_pass", s.GatePass)
	if s.Grid != nil {
		o.value("grid", s.Grid)
	}
	o.value("warnings", nonNil(s.Warnings))
	return o.close()
}

// WriteAllRuns writes all-runs.json: every comparison's clock block, and
// one row per leg, read back from where the summary wrote them as its
// legs were read. The same summary always gives the same bytes.
func (s *Summary) WriteAllRuns(w io.Writer) error {
	if s.rows == DiscardRows {
		return errors.New("all-runs.json: the summary was read with its leg rows discarded")
	}
	o := newObjectWriter(w)
	o.value("allow_cross_boot", s.AllowCrossBoot)
	o.value("bench_contract", BenchInForce())
	o.array("comparisons", len(s.Comparisons), func(i int) ([]byte, error) {
		c := s.Comparisons[i]
		return canonicalElem(blockRow{Model: c.Model, Ours: c.Ours, Baseline: c.Baseline, Clock: c.Throughput.Clock})
	})
	o.value("contract", s.Contract)
	o.key("legs")
	if len(s.Legs)+s.released == 0 {
		o.write([]byte("[]"))
	} else {
		o.write([]byte("[\n"))
		if o.err == nil {
			if _, err := s.rows.Seek(0, io.SeekStart); err != nil {
				return err
			}
			_, o.err = io.Copy(o.w, s.rows)
		}
		o.write([]byte("\n" + memberIndent + "]"))
	}
	return o.close()
}

// SummaryJSON is summary.json's bytes.
func (s *Summary) SummaryJSON() ([]byte, error) {
	var b bytes.Buffer
	err := s.WriteSummary(&b)
	return b.Bytes(), err
}

// AllRunsJSON is all-runs.json's bytes.
func (s *Summary) AllRunsJSON() ([]byte, error) {
	var b bytes.Buffer
	err := s.WriteAllRuns(&b)
	return b.Bytes(), err
}

// memRows keeps leg rows in memory.
type memRows struct {
	b   []byte
	off int64
}

func (m *memRows) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memRows) Read(p []byte) (int, error) {
	if m.off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.off:])
	m.off += int64(n)
	return n, nil
}

func (m *memRows) Seek(off int64, whence int) (int64, error) {
	if whence != io.SeekStart || off < 0 {
		return 0, errors.New("memRows: only seeks from the start")
	}
	m.off = off
	return off, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error)    { return len(p), nil }
func (discard) Read([]byte) (int, error)       { return 0, io.EOF }
func (discard) Seek(int64, int) (int64, error) { return 0, nil }

// DiscardRows, as Options.Rows, drops every leg row: a summary whose
// all-runs.json is not wanted keeps none.
var DiscardRows io.ReadWriteSeeker = discard{}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
