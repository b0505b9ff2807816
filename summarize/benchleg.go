package summarize

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
)

// loadBench reads a leg's bench points into l and returns its bench
// reasons: the files refused unread, each malformed object, two objects
// for one point, then each point with failed requests. A file that holds
// no result is a warning on l, never a reason.
func (w *walker) loadBench(l *Leg, base string, lf *legFiles) []clocks.Reason {
	var out []clocks.Reason
	add := func(code, msg string) { out = append(out, clocks.Reason{Code: code, Message: msg}) }
	dir := path.Join(subtreeBench, base)
	switch {
	case lf.benchDir == "":
		add(CodeBenchMissing, fmt.Sprintf("no bench points: %s/ does not exist; put the leg's result files there, or rerun the leg", dir))
		return out
	case len(lf.benchFiles) == 0 && len(lf.benchRefused) == 0:
		add(CodeBenchMissing, fmt.Sprintf("no bench points: no <point>.json or .jsonl file in %s/; put the leg's result files there, or rerun the leg", dir))
		return out
	}
	for _, msg := range lf.benchRefused {
		add(CodeBenchInvalid, msg)
	}
	var points []Point
	var failed []string
	formats := map[string]bool{}
	notResults := 0
	for _, rel := range lf.benchFiles {
		f, err := w.readBenchFile(rel)
		if err != nil {
			add(CodeBenchInvalid, err.Error())
			continue
		}
		if f.NotResult != "" {
			l.benchWarnings = append(l.benchWarnings, f.NotResult)
			notResults++
			continue
		}
		for _, msg := range f.Invalid {
			add(CodeBenchInvalid, msg)
		}
		for _, fm := range f.Formats {
			formats[fm] = true
		}
		points = append(points, f.Points...)
		failed = append(failed, f.Failed...)
	}
	for fm := range formats {
		l.BenchFormats = append(l.BenchFormats, fm)
	}
	sort.Strings(l.BenchFormats)

	// Two objects for one point: neither is used.
	by := map[ratio.PointID][]Point{}
	for _, p := range points {
		by[p.ID] = append(by[p.ID], p)
	}
	ids := make([]ratio.PointID, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	ratio.SortPoints(ids)
	for _, id := range ids {
		ps := by[id]
		if len(ps) > 1 {
			where := make([]string, len(ps))
			for i, p := range ps {
				where[i] = p.Where
			}
			add(CodeBenchInvalid, fmt.Sprintf("%s: want one object per point in a leg, found %d: %s; none used: keep one run of the point per leg (each repetition is a leg r<N> of its own), or rerun it",
				id, len(ps), strings.Join(where, ", ")))
			continue
		}
		l.Points = append(l.Points, ps[0])
	}
	for _, msg := range failed {
		add(CodeFailedRequests, msg)
	}
	if len(points) == 0 && len(out) == 0 && notResults > 0 {
		add(CodeBenchMissing, fmt.Sprintf("no bench points: the %d file(s) in %s/ hold no bench result (each is listed under warnings); put the leg's result files there, or rerun the leg",
			notResults, dir))
	}
	return out
}

// readBenchFile streams the bench file at rel. The error is for a file
// that cannot be read at all: not a regular file, unreadable, or larger
// than benchfmt.MaxBenchBytes (refused before a byte is read).
func (w *walker) readBenchFile(rel string) (benchfmt.File, error) {
	f, err := clocks.OpenRegular(w.abs(rel))
	if err != nil {
		return benchfmt.File{}, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), benchfmt.HintUnread)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return benchfmt.File{}, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), benchfmt.HintUnread)
	}
	if st.Size() > benchfmt.MaxBenchBytes {
		return benchfmt.File{}, fmt.Errorf("%s: %d bytes, larger than %d MiB (the bench file cap); refused unread: save one file per point, or rerun without --save-detailed",
			rel, st.Size(), benchfmt.MaxBenchBytes>>20)
	}
	// A file that grows while it is read is cut at the cap, and refused.
	lr := &io.LimitedReader{R: f, N: benchfmt.MaxBenchBytes + 1}
	bf := benchfmt.Read(rel, lr)
	if lr.N == 0 {
		return benchfmt.File{}, fmt.Errorf("%s: grew past %d MiB (the bench file cap) while it was read; refused: summarize the tree once the benchmark has stopped writing it (save one file per point, or rerun without --save-detailed)",
			rel, benchfmt.MaxBenchBytes>>20)
	}
	return bf, nil
}
