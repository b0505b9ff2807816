package summarize_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

// An imported leg's memory record as import writes it (host RSS null: not
// recorded) is read, never memory.invalid; an imported leg without one is
// memory.missing saying which column its log format needs (SPEC §12.1).
func TestImportedLegMemory(t *testing.T) {
	root := copyTree(t, "imported-two-arm")
	mem := filepath.Join(root, "memory", llama)
	if err := os.WriteFile(filepath.Join(mem, "fastengine", "r1.summary.json"), []byte(`{"peak_gpu_memory_mib":74940,"peak_host_rss_mib":null,"n":79}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mem, "vllm", "r2.summary.json")); err != nil {
		t.Fatal(err)
	}
	s := run(t, root)
	l := legOf(t, s, llama+"/fastengine/r1")
	if l.Memory == nil || l.Memory.PeakGPUMemoryMiB != 74940 || l.Memory.N != 79 {
		t.Errorf("null host RSS: memory %+v, reasons %+v", l.Memory, l.Reasons)
	}
	for _, r := range l.Reasons {
		if strings.HasPrefix(r.Code, "memory.") {
			t.Errorf("null host RSS: %s %s", r.Code, r.Message)
		}
	}
	// The outputs keep it as written: all-runs.json says null (not
	// recorded), and report.md renders the leg's GPU peak without a crash.
	all, err := s.AllRunsJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(all, []byte(`"peak_host_rss_mib": null`)) {
		t.Errorf("all-runs.json lost the null host RSS")
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| fastengine | r1  | NO      |") {
		t.Errorf("report.md has no row for the leg:\n%s", md.String())
	}
	got := reasonOf(t, legOf(t, s, llama+"/vllm/r2"), summarize.CodeMemoryMissing)
	want := "no memory record at memory/" + llama + "/vllm/r2.summary.json; this leg's clocks were imported (--format nvidia-smi-csv), and clockgate import writes the memory record only from GPU memory used in the log: " +
		clocks.ImportMemoryHint("nvidia-smi-csv") + ", and import the leg again"
	if got != want {
		t.Errorf("memory.missing:\n got %q\nwant %q", got, want)
	}
}
