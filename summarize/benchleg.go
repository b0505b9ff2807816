package summarize

import (
	"fmt"
	"os"
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
	case len(lf.benchFiles) == 0 && len(lf.benchRefused) == 0 && len(lf.benchArtifacts) == 0:
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
	files := make([]benchfmt.File, 0, len(lf.benchFiles)+len(lf.benchArtifacts))
	for _, rel := range lf.benchFiles {
		f, err := benchfmt.ReadFile(w.open, rel, w.benchOpt)
		if err != nil {
			add(CodeBenchInvalid, err.Error())
			continue
		}
		files = append(files, f)
	}
	for _, rel := range lf.benchArtifacts {
		files = append(files, benchfmt.ReadAIPerf(w.open, rel, w.benchOpt))
	}
	for _, f := range files {
		l.benchWarnings = append(l.benchWarnings, f.Warnings...)
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
		l.bench = append(l.bench, ps[0])
	}
	l.Points = make([]LegPoint, len(l.bench))
	for i, p := range l.bench {
		l.Points[i] = LegPoint{BenchPoint: p.BenchPoint, Format: p.Format, ClientVersion: p.ClientVersion}
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

// open opens a file of the tree for the bench readers: a regular file
// only.
func (w *walker) open(rel string) (*os.File, error) { return clocks.OpenRegular(w.abs(rel)) }
