package summarize

import (
	"testing"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/internal/benchtest"
)

// The bench helpers summarize's own tests share, by the names they use:
// the bodies are internal/benchtest's, shared with benchfmt's tests.

const realDir = "../testdata/bench-real"

const fuzzRel = "bench/m/e/r1/c1.json"

const validPoint = benchtest.ValidPoint

var pointWith = benchtest.PointWith

// pb reads data as the bench file rel and returns its points,
// bench.invalid and bench.failed_requests messages.
func pb(rel string, data []byte) ([]Point, []string, []string) {
	f := benchfmt.Parse(rel, data)
	return f.Points, f.Invalid, f.Failed
}

// kept is a point's kept object decoded, numbers as json.Number.
func kept(t *testing.T, p Point) map[string]any { return benchtest.Kept(t, p.Raw) }
