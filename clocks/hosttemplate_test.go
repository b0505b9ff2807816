package clocks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHostTemplateAgrees: a stream's lines read through the learned
// template read as ParseHostLine reads them, whichever of their values
// change from line to line, and a line that breaks the template's
// literals is read again by the writer's layout or strictly.
func TestHostTemplateAgrees(t *testing.T) {
	// Line k's values: some the same on every line, others changing
	// from the line named on, so that each kind of value is read in a
	// hole and in a literal; fewer processes, then no PSI and no clock,
	// for a few lines.
	line := func(k int) string {
		l := &HostLine{T: fmt.Sprintf("2026-12-03T12:52:%02d.157Z", k),
			CPU: HostCPU{Busy: 0.6125, Steal: 0.0031}, OwnCPU: 1.118, OwnWait: 0.009, OtherCPU: 0.107,
			Top: []HostProc{{PID: 1234, Comm: "python3", Cores: 0.061}, {PID: 88, Comm: "kworker/1:2", Cores: 0.012}},
			PSI: &HostPSI{CPUSome: 522058217 + int64(k), IOFull: 3800264}}
		mhz := 2400.0
		if k >= 3 {
			l.CPU.Busy, l.CPU.IOWait, l.OwnWait = 0.5+float64(k)/1000, float64(k%3)/100, float64(k)/100
		}
		if k >= 5 {
			l.Swap.In, l.Swap.Out, l.OtherCPU = int64(k%4), int64(k), float64(k)/8
		}
		if k >= 8 {
			l.Top[1].Comm = []string{"kworker/1:2", "kworker/1:3"}[k/2%2]
			l.Top[1].Cores = float64(k) / 1000
		}
		if k >= 10 {
			l.Top[0].PID, l.OwnCPU = 1234+k%3, float64(k)
		}
		if k >= 12 {
			l.PSI.MemoryFull, l.PSI.IOFull = int64(k), int64(k*k)
		}
		if k >= 14 {
			mhz = 2400 + float64(k%5)/10
		}
		l.CPUMHz = &mhz
		if k >= 20 && k < 24 {
			l.Top = l.Top[:1]
		}
		if k >= 24 && k < 28 {
			l.PSI, l.CPUMHz = nil, nil
		}
		return string(l.AppendJSON(nil))
	}
	var lines []string
	for k := 0; k < 40; k++ {
		lines = append(lines, line(k))
		switch k {
		case 32: // another layout between the writer's lines
			lines = append(lines, strings.Replace(line(k), `"own_cpu":`, `"own_cpu": `, 1))
		case 34: // an exponent, in a hole and in a literal
			lines = append(lines, strings.Replace(line(k), `"own_cpu":34`, `"own_cpu":34e0`, 1),
				strings.Replace(line(k), `"steal":0.0031`, `"steal":0.0031e0`, 1))
		case 36: // a space after the object
			lines = append(lines, line(k)+" ")
		}
	}

	f := NewHostFold(quietStatic())
	var got HostLine
	byTemplate := 0
	for i, line := range lines {
		strict, err := ParseHostLine([]byte(line))
		if err != nil {
			t.Fatalf("line %d: strict: %v", i, err)
		}
		want, _ := json.Marshal(strict)
		fromTemplate := f.tmpl.ok
		if fromTemplate {
			_, _, fromTemplate = f.tmpl.read([]byte(line), NewHostFold(quietStatic()))
		}
		tb, l, ok := f.readFast([]byte(line), &got)
		fast := !strings.Contains(line, `": `) && !strings.Contains(line, "e0") && !strings.HasSuffix(line, " ")
		if ok != fast {
			t.Fatalf("line %d: fast read %v: %s", i, ok, line)
		}
		if !ok {
			continue
		}
		if fromTemplate {
			byTemplate++
		}
		read := *l
		read.T = string(tb)
		if a, _ := json.Marshal(&read); string(a) != string(want) {
			t.Fatalf("line %d (template %v):\nfast   %s\nstrict %s", i, fromTemplate, a, want)
		}
	}
	if byTemplate < 23 {
		t.Fatalf("%d lines read through the template, want 23 or more", byTemplate)
	}
}

// TestHostTopSumsByPID: the fold sums each process's cores by its pid
// whichever place it has in top, line by line, and names it by its last
// comm.
func TestHostTopSumsByPID(t *testing.T) {
	ss := cleanWindow(boot13)
	lines := quietLines(ss)
	orders := [][]HostProc{
		{{PID: 7, Comm: "a", Cores: 0.5}, {PID: 8, Comm: "b", Cores: 0.25}, {PID: 9, Comm: "c", Cores: 0.75}},
		{{PID: 8, Comm: "b", Cores: 0.5}, {PID: 7, Comm: "a", Cores: 0.25}, {PID: 9, Comm: "c2", Cores: 0.75}},
		{{PID: 10, Comm: "d", Cores: 0.5}, {PID: 8, Comm: "b", Cores: 0.25}},
	}
	for i, l := range lines {
		l.Top = append([]HostProc(nil), orders[i%3]...)
		for j := range l.Top {
			if l.Top[j].PID == 9 {
				l.Top[j].Comm = fmt.Sprintf("c%d", i)
			}
		}
	}
	h := hostFoldOf(t, quietStatic(), ss, lines)
	// What the busy readings sum to, by pid, and each pid's last comm.
	sum, comm := map[int]float64{}, map[int]string{}
	ticks := BusyTicks{}
	for _, s := range ss {
		ticks.Add(s.T, s.UtilizationGPUPct != 0)
	}
	busy := 0
	for _, l := range lines {
		ts, _ := time.Parse(time.RFC3339Nano, l.T)
		if tk, _ := ticks.find(ts.UnixNano()); tk.busy {
			busy++
			for _, p := range l.Top {
				sum[p.PID] += p.Cores
				comm[p.PID] = p.Comm
			}
		}
	}
	if len(h.Top) != 3 {
		t.Fatalf("top %+v", h.Top)
	}
	for _, p := range h.Top {
		if p.Cores != Round3(sum[p.PID]/float64(busy)) || p.Comm != comm[p.PID] {
			t.Fatalf("top %+v, want %v cores by pid over %d busy readings, comms %v", h.Top, sum, busy, comm)
		}
	}
}
