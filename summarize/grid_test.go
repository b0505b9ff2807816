package summarize_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

// gridJournal is a journal as clockgate grid writes it for clean-grid's
// llama legs: fastengine r1 failed once (its server exited before it was
// ready) and was committed on its second attempt; vllm r2 failed at its
// bench after the other three were committed, and the grid stopped.
const gridJournal = `{"event":"grid.start","t":"2026-12-01T10:00:00.000Z","plan_sha256":"ab12","model":"llama-3.1-8b-instruct","order":"abba","legs":["vllm/r1","fastengine/r1","fastengine/r2","vllm/r2"],"boot_id":"b","gpu_uuids":["GPU-1"],"driver":"590.44.01","idle_temp_c":[34]}
{"event":"leg.idle","t":"2026-12-01T10:00:31.000Z","engine":"vllm","n":1,"block":1,"slot":1,"attempt":1,"temp_c":[34],"slope_c_per_min":[0.1],"wait_s":0.5}
{"event":"server.start","t":"2026-12-01T10:00:31.000Z","engine":"vllm","n":1,"block":1,"slot":1,"attempt":1,"pid":10}
{"event":"leg.commit","t":"2026-12-01T10:05:00.000Z","engine":"vllm","n":1,"block":1,"slot":1,"attempt":1,"files":{"x":"y"},"verdict":"ok"}
{"event":"leg.idle","t":"2026-12-01T10:06:00.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":1,"temp_c":[35],"wait_s":61}
{"event":"server.start","t":"2026-12-01T10:06:00.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":1,"pid":11}
{"event":"leg.fail","t":"2026-12-01T10:06:10.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":1,"phase":"ready","cause":"the server exited 3 before it was ready"}
{"event":"leg.idle","t":"2026-12-01T10:06:11.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":2,"temp_c":[35.5],"wait_s":1.5}
{"event":"server.start","t":"2026-12-01T10:06:11.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":2,"pid":12}
{"event":"leg.commit","t":"2026-12-01T10:10:00.000Z","engine":"fastengine","n":1,"block":1,"slot":2,"attempt":2,"files":{"x":"y"},"verdict":"ok"}
{"event":"leg.idle","t":"2026-12-01T10:11:00.000Z","engine":"fastengine","n":2,"block":2,"slot":3,"attempt":1,"temp_c":[34],"wait_s":60}
{"event":"server.start","t":"2026-12-01T10:11:00.000Z","engine":"fastengine","n":2,"block":2,"slot":3,"attempt":1,"pid":13}
{"event":"leg.commit","t":"2026-12-01T10:15:00.000Z","engine":"fastengine","n":2,"block":2,"slot":3,"attempt":1,"files":{"x":"y"},"verdict":"ok"}
{"event":"leg.idle","t":"2026-12-01T10:16:00.000Z","engine":"vllm","n":2,"block":2,"slot":4,"attempt":1,"temp_c":[34],"wait_s":60}
{"event":"server.start","t":"2026-12-01T10:16:00.000Z","engine":"vllm","n":2,"block":2,"slot":4,"attempt":1,"pid":14}
{"event":"leg.fail","t":"2026-12-01T10:17:00.000Z","engine":"vllm","n":2,"block":2,"slot":4,"attempt":1,"phase":"bench","cause":"point 8/inf: vllm exited 1"}
{"event":"grid.end","t":"2026-12-01T10:17:01.000Z","status":"stopped"}
`

// gridTree is clean-grid with the grid's directory: the journal, and a
// staging folder and a log that are not evidence.
func gridTree(t *testing.T, journal string) string {
	root := copyTree(t, "clean-grid")
	dir := filepath.Join(root, "grid")
	os.MkdirAll(filepath.Join(dir, "staging", "vllm-r3", "bench"), 0o755)
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	os.WriteFile(filepath.Join(dir, "logs", "vllm-r1-1.log"), []byte("log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "journal.jsonl"), []byte(journal), 0o644)
	return root
}

func TestGridBlock(t *testing.T) {
	root := gridTree(t, gridJournal)
	s := run(t, root)
	g := s.Grid
	if g == nil {
		t.Fatal("no grid block")
	}
	if g.Order != "abba" || g.PlanSHA256 != "ab12" || g.Seed != nil {
		t.Errorf("grid %+v", g)
	}
	want := []summarize.GridLeg{
		{Engine: "vllm", N: 1, Block: 1, StartTempC: []float64{34}, WaitS: 0.5, Attempts: 1},
		{Engine: "fastengine", N: 1, Block: 1, StartTempC: []float64{35.5}, WaitS: 1.5, Attempts: 2},
		{Engine: "fastengine", N: 2, Block: 2, StartTempC: []float64{34}, WaitS: 60, Attempts: 1},
	}
	if !reflect.DeepEqual(g.Legs, want) {
		t.Errorf("legs %+v", g.Legs)
	}
	wantFail := []summarize.GridFail{
		{Engine: "fastengine", N: 1, Phase: "ready", Cause: "the server exited 3 before it was ready"},
		{Engine: "vllm", N: 2, Phase: "bench", Cause: "point 8/inf: vllm exited 1"},
	}
	if !reflect.DeepEqual(g.Failed, wantFail) {
		t.Errorf("failed %+v", g.Failed)
	}
	// vllm r2 failed and was never committed, yet clean-grid holds it:
	// one warning; fastengine r1, committed on its retry, none; grid/
	// itself none.
	var grid []string
	for _, w := range s.Warnings {
		if strings.Contains(w, "grid") {
			grid = append(grid, w)
		}
	}
	if len(grid) != 1 || !strings.HasPrefix(grid[0], "llama-3.1-8b-instruct/vllm/r2: grid/journal.jsonl lists this leg as failed (bench) and never committed it, yet the tree holds it") {
		t.Errorf("warnings %q", grid)
	}
	js, err := s.SummaryJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"grid": {`)) || !bytes.Contains(js, []byte(`"attempts": 2`)) {
		t.Errorf("summary.json has no grid block:\n%s", js)
	}
	var md bytes.Buffer
	if err := report.Build(s).Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"## Grid\n", "- Order: abba, seed none; plan sha256 `ab12`.\n", "| fastengine/r1 | 1 | 35.5 | 1.5 s | 2 |\n",
		"- vllm/r2, bench: point 8/inf: vllm exited 1\n"} {
		if !strings.Contains(md.String(), line) {
			t.Errorf("report.md lacks %q", line)
		}
	}
}

// TestGridDirWithoutJournal: TREE/grid/ is skipped without a warning,
// and without a journal there is no grid block: the summary is the
// tree's without it, byte for byte.
func TestGridDirWithoutJournal(t *testing.T) {
	plain, err := run(t, copyTree(t, "clean-grid")).SummaryJSON()
	if err != nil {
		t.Fatal(err)
	}
	root := gridTree(t, "")
	os.Remove(filepath.Join(root, "grid", "journal.jsonl"))
	s := run(t, root)
	got, _ := s.SummaryJSON()
	if s.Grid != nil || !bytes.Equal(got, plain) {
		t.Errorf("a grid/ without a journal changed the summary:\n%s", got)
	}
}

// TestGridJournalUnreadable: a journal that is not one is a warning, and
// no block.
func TestGridJournalUnreadable(t *testing.T) {
	s := run(t, gridTree(t, "{\"event\":\"grid.start\"}\nnot json\n{}\n"))
	if s.Grid != nil {
		t.Fatal("a block from a broken journal")
	}
	found := false
	for _, w := range s.Warnings {
		found = found || w == "grid/journal.jsonl:2: not a journal event; no grid block"
	}
	if !found {
		t.Errorf("warnings %q", s.Warnings)
	}
}
