package grid

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/ratio"
)

// The bench formats a plan's [bench] format names (SPEC §12.5): the
// client whose result each point writes.
const (
	FormatVLLM     = "vllm"
	FormatSGLang   = "sglang"
	FormatAIPerf   = "aiperf"
	FormatGuideLLM = "guidellm"
)

// benchFormats are the formats a plan may name, in the order a message
// lists them.
var benchFormats = []string{FormatVLLM, FormatSGLang, FormatAIPerf, FormatGuideLLM}

// parseBenchFormat reads [bench] format: vllm when absent.
func parseBenchFormat(s *string) (string, error) {
	if s == nil {
		return FormatVLLM, nil
	}
	for _, f := range benchFormats {
		if *s == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("format: want one of %q, found %q", benchFormats, *s)
}

// pointResultDir is what {result_dir} is while point pt runs: the leg's
// bench directory, or for AIPerf the point's own artifact directory
// inside it (--artifact-dir {result_dir}).
func pointResultDir(format, benchDir string, pt ratio.PointID) string {
	if format == FormatAIPerf {
		return filepath.Join(benchDir, strings.TrimSuffix(ResultName(pt), ".json"))
	}
	return benchDir
}

// checkPointResult refuses point pt's result unless the reader of the
// plan's format reads it as one bench point of pt's concurrency, written
// by that client: the same reader summarize uses, with the same options
// (grid --bench-tz: AIPerf's zoneless start_time and end_time read in that
// zone, and refused when they do not read).
func checkPointResult(format, benchDir string, pt ratio.PointID, opt benchfmt.Options) error {
	if format == FormatVLLM || format == FormatSGLang {
		return checkResult(filepath.Join(benchDir, ResultName(pt)), pt)
	}
	open := func(rel string) (*os.File, error) { return os.Open(filepath.Join(benchDir, filepath.FromSlash(rel))) }
	var f benchfmt.File
	rel := ResultName(pt)
	if format == FormatAIPerf {
		rel = strings.TrimSuffix(rel, ".json")
		if _, err := os.Stat(filepath.Join(benchDir, rel, benchfmt.AIPerfJSON)); err != nil {
			return fmt.Errorf("the bench wrote no %s in %s: pass {result_dir} to aiperf profile as --artifact-dir", benchfmt.AIPerfJSON, filepath.Join(benchDir, rel))
		}
		f = benchfmt.ReadAIPerf(open, rel, opt)
	} else {
		if _, err := os.Lstat(filepath.Join(benchDir, rel)); err != nil {
			return fmt.Errorf("the bench wrote no result at %s: pass {result_dir}/{result_name} to guidellm benchmark as --output-path", filepath.Join(benchDir, rel))
		}
		var err error
		if f, err = benchfmt.ReadFile(open, rel, opt); err != nil {
			return fmt.Errorf("the result is not readable: %v", err)
		}
	}
	if len(f.Invalid) > 0 {
		return fmt.Errorf("the result is not a readable bench point: %s", strings.Join(f.Invalid, "; "))
	}
	if len(f.Points) != 1 {
		return fmt.Errorf("%s holds %d bench points: want exactly one, the point's", rel, len(f.Points))
	}
	p := f.Points[0]
	if p.Format != format {
		return fmt.Errorf("%s is a %s result, not %s's as the plan's [bench] format says", rel, p.Format, format)
	}
	if got := p.ID.MaxConcurrency; got != pt.MaxConcurrency {
		return fmt.Errorf("%s is a point of max_concurrency %d, not %s's: the bench was not given {concurrency}", rel, got, pt.Label())
	}
	return nil
}
