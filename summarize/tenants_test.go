package summarize_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// summarize lists each leg's compute processes (its clock record's
// compute_processes, in all-runs.json), and a foreign one fails the leg
// with clock.foreign_process; unknown ones are listed and not gated.
func TestSummarizeListsComputeProcesses(t *testing.T) {
	root := copyTree(t, "clean-grid")
	p := filepath.Join(root, "clocks", llama, "vllm", "r1.summary.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := clocks.ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	uuid := rec.GPUs[0].UUID
	rec.ComputeProcesses = &clocks.ComputeProcesses{
		First: []clocks.ComputeProcess{{PID: 4100, Name: "vllm", GPUUUID: uuid, Proc: clocks.ProcOwn}, {PID: 777, Name: "trainer", GPUUUID: uuid, Proc: clocks.ProcForeign}},
		Last:  []clocks.ComputeProcess{{PID: 91234, Name: "ghost", GPUUUID: uuid, Proc: clocks.ProcUnknown}},
		Own:   []int{4100},
	}
	out, _ := json.Marshal(rec)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	s := run(t, root)
	msg := reasonOf(t, legOf(t, s, llama+"/vllm/r1"), clocks.CodeForeignProcess)
	if want := `pid 777 "trainer" on ` + uuid + ` at the first reading`; !strings.Contains(msg, want) {
		t.Errorf("message %q\nwant it to hold %q", msg, want)
	}
	all, err := s.AllRunsJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"compute_processes": {`, `"process_name": "ghost"`, `"proc": "unknown"`, `"proc": "foreign"`} {
		if !strings.Contains(string(all), want) {
			t.Errorf("all-runs.json lacks %s", want)
		}
	}
}
