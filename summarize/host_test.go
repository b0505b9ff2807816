package summarize_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/report"
)

// hostTree is clean-grid with a host stream beside every leg's GPU
// stream and the host block its stream folds to in every record; line
// edits each arm's readings, static its identity.
func hostTree(t *testing.T, static func(engine string, st *clocks.HostStatic), line func(engine string, l *clocks.HostLine)) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tree")
	must(t, os.CopyFS(root, os.DirFS(filepath.Join(treesDir, "clean-grid"))))
	recs, err := filepath.Glob(filepath.Join(root, "clocks", "*", "*", "*.summary.json"))
	must(t, err)
	for _, recPath := range recs {
		engine := filepath.Base(filepath.Dir(recPath))
		streamPath := strings.TrimSuffix(recPath, ".summary.json") + ".samples.jsonl"
		data, err := os.ReadFile(streamPath)
		must(t, err)
		st := &clocks.HostStatic{Name: "vm", CPUModel: "Intel(R) Xeon(R) Processor", LogicalCPUs: 2, MemoryTotalMiB: 24105,
			Kernel: "6.18.44-fc-v1147", SMT: "off", NUMANodes: 1, Virtualized: true, CPUsAllowedList: []string{"0-1"}}
		static(engine, st)
		host := append(st.AppendJSON(nil), '\n')
		ticks := clocks.BusyTicks{}
		seen := map[string]bool{}
		for _, raw := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			s, err := clocks.ParseSample(raw)
			must(t, err)
			ticks.Add(s.T, s.UtilizationGPUPct != 0)
			if seen[s.T] {
				continue
			}
			seen[s.T] = true
			l := &clocks.HostLine{T: s.T, CPU: clocks.HostCPU{Busy: 0.5, Steal: 0.001}, OwnCPU: 0.996, OwnWait: 0.004, OtherCPU: 0.004,
				Top: []clocks.HostProc{}, Swap: clocks.HostSwap{}}
			line(engine, l)
			host = append(l.AppendJSON(host), '\n')
		}
		hostPath := clocks.HostStreamPath(streamPath)
		must(t, os.WriteFile(hostPath, host, 0o644))
		h, err := clocks.FoldHostStream(bytes.NewReader(host), hostPath, &ticks)
		must(t, err)
		recData, err := os.ReadFile(recPath)
		must(t, err)
		rec, err := clocks.ParseRecord(recData)
		must(t, err)
		rec.Host = h
		out, err := json.MarshalIndent(rec, "", "  ")
		must(t, err)
		must(t, os.WriteFile(recPath, out, 0o644))
	}
	return root
}

func markdownOf(t *testing.T, root string) string {
	t.Helper()
	var md bytes.Buffer
	must(t, report.Markdown(&md, summarizeBounded(t, root)))
	return md.String()
}

// TestHostTreeEstablished: a quiet host recorded beside every leg keeps
// clean-grid ESTABLISHED, and the report says each arm's host.
func TestHostTreeEstablished(t *testing.T) {
	root := hostTree(t, func(string, *clocks.HostStatic) {}, func(engine string, l *clocks.HostLine) {
		if engine == "vllm" {
			l.CPUMHz = ptrF(2400)
		} else {
			l.CPUMHz = ptrF(2450)
		}
	})
	s := summarizeBounded(t, root)
	if !s.GatePass {
		for _, c := range s.Comparisons {
			t.Logf("%s: %+v", c.Model, c.Throughput.Reasons)
		}
		t.Fatal("a quiet host failed the gate")
	}
	md := markdownOf(t, root)
	for _, want := range []string{"fastengine host: own wait share 0.40%, other processes 0.00 cores, steal 0.10%, CPU 2450 MHz",
		"vllm host: own wait share 0.40%, other processes 0.00 cores, steal 0.10%, CPU 2400 MHz"} {
		if !strings.Contains(md, want) {
			t.Fatalf("report.md lacks %q", want)
		}
	}
}

// TestHostTreeMismatchAndContention: another kernel in the baseline arm
// is host.mismatch; a contended ours arm is host.contention on each of
// its legs; neither ratio is binding, the clock block still established.
func TestHostTreeMismatchAndContention(t *testing.T) {
	root := hostTree(t, func(engine string, st *clocks.HostStatic) {
		if engine == "vllm" {
			st.Kernel = "6.8.0-45-generic"
		}
	}, func(engine string, l *clocks.HostLine) {
		if engine == "fastengine" {
			l.OwnCPU, l.OwnWait, l.OtherCPU = 0.8, 0.2, 1.2
			l.Top = []clocks.HostProc{{PID: 4242, Comm: "burner", Cores: 1.2}}
		}
	})
	s := summarizeBounded(t, root)
	if s.GatePass || len(s.Comparisons) == 0 {
		t.Fatal("gate passed")
	}
	for _, c := range s.Comparisons {
		if c.Throughput.BindingEligible || c.Memory.BindingEligible || !c.Throughput.Clock.Established {
			t.Fatalf("%s: binding %v/%v, clock %v", c.Model, c.Throughput.BindingEligible, c.Memory.BindingEligible, c.Throughput.Clock.Established)
		}
		var codes []string
		for _, r := range c.Throughput.Reasons {
			codes = append(codes, r.Code+": "+r.Message)
		}
		all := strings.Join(codes, "\n")
		for _, want := range []string{`host.mismatch: arms are not on one host: kernel: fastengine "6.18.44-fc-v1147", vllm "6.8.0-45-generic"`,
			"leg.ineligible: leg fastengine r1 is not binding-eligible: host.contention"} {
			if !strings.Contains(all, want) {
				t.Fatalf("%s: reasons lack %q:\n%s", c.Model, want, all)
			}
		}
	}
	l := legByKey(s, "llama-3.1-8b-instruct/fastengine/r1")
	if l == nil || !clocks.HasCode(l.Reasons, clocks.CodeHostContention) {
		t.Fatalf("leg reasons %+v", l)
	}
}

func ptrF(x float64) *float64 { return &x }
