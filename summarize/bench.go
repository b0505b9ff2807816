package summarize

import "github.com/clockgate/clockgate/benchfmt"

// Point is one bench point of a leg, as package benchfmt reads it.
type Point = benchfmt.Point

// The bench formats clockgate reads, as named in all-runs.json (package
// benchfmt's).
const (
	FormatVLLM       = benchfmt.FormatVLLM
	FormatVLLMLegacy = benchfmt.FormatVLLMLegacy
	FormatSGLang     = benchfmt.FormatSGLang
)

// MaxBenchBytes bounds one bench file (benchfmt.MaxBenchBytes).
const MaxBenchBytes = benchfmt.MaxBenchBytes
