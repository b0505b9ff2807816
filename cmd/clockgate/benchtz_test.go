package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummarizeBenchTZ: AIPerf legs whose only times are start_time and
// end_time (no JSONL, no epoch fields) have no window without --bench-tz
// (a warning naming the file and the flag), and every point judged with
// it; a zone Go does not know is a usage error.
func TestSummarizeBenchTZ(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "t")
	src := filepath.Join("..", "..", "testdata", "trees", "aiperf-aa")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(tree, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Name() == "profile_export.jsonl":
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() == "profile_export_aiperf.json" {
			data = []byte(strings.NewReplacer(`"min_request_timestamp"`, `"x_min"`, `"max_response_timestamp"`, `"x_max"`).Replace(string(data)))
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain("summarize", "--json", tree)
	if code != 0 || strings.Count(out, `"judged": true`) != 0 || !strings.Contains(out, "are the bench machine's local time with no zone; give --bench-tz ZONE") {
		t.Errorf("without --bench-tz: exit %d, %d judged, stderr %s", code, strings.Count(out, `"judged": true`), errs)
	}
	code, out, errs = runMain("summarize", "--json", "--bench-tz", "UTC", tree)
	if code != 0 || strings.Count(out, `"judged": true`) != 4 || strings.Contains(out, "give --bench-tz") {
		t.Errorf("with --bench-tz UTC: exit %d, %d judged, stderr %s", code, strings.Count(out, `"judged": true`), errs)
	}
	code, _, errs = runMain("summarize", "--bench-tz", "Nowhere/Zone", tree)
	if code != 2 || !strings.Contains(errs, `--bench-tz "Nowhere/Zone": not a zone Go knows`) {
		t.Errorf("unknown zone: exit %d, stderr %q", code, errs)
	}
}
