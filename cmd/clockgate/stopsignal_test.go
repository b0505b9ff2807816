package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stop signal sent to every process of the leg (Ctrl-C to a process
// group, srun forwarding SIGINT to a step) reaches the sampler's
// nvidia-smi call in flight too: the reading it cut short is dropped and
// the window ends at the last whole reading, stop_reason signal, never a
// refusal (SPEC §12.3). A call so ended with no stop after it is still a
// refusal.
func TestStopSignalReachesTheCall(t *testing.T) {
	tools := newRecTools(t)
	for _, stop := range []bool{true, false} {
		t.Run(map[bool]string{true: "stop", false: "no stop"}[stop], func(t *testing.T) {
			plan := []any{}
			for range 6 {
				plan = append(plan, map[string]any{})
			}
			plan = append(plan, map[string]any{"sleep_ms": 20000})
			l := tools.leg(t, map[string]any{"plan": plan})
			p := l.start("", "sample", "--out", l.prefix, "--interval", "500ms", "--backend", "nvidia-smi")
			// The slow call: the sampler's child that has run for a while.
			var call int
			for deadline := time.Now().Add(30 * time.Second); call == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the slow call never started; stderr:\n%s", p.stderr.String())
				}
				l.waitLines(5)
				call = slowChild(p.cmd.Process.Pid)
			}
			before, _ := os.ReadFile(l.stream())
			// The signal reaches the call first, then the sampler.
			if err := syscall.Kill(call, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if stop {
				time.Sleep(50 * time.Millisecond)
				p.cmd.Process.Signal(syscall.SIGINT)
			}
			code := p.wait(t)
			stderr := p.stderr.String()
			if !stop {
				if code != ExitFailed || !strings.Contains(stderr, "was ended by a stop signal (interrupt)") {
					t.Errorf("no stop: exit %d, stderr:\n%s", code, stderr)
				}
				return
			}
			if code != ExitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			rec := l.parsedRecordIfAny()
			if rec == nil || rec.Window.StopReason != "signal" || rec.Window.SamplesTotal != bytes.Count(before, []byte("\n")) {
				t.Errorf("record %+v; stream before the stop %d lines; stderr:\n%s", rec, bytes.Count(before, []byte("\n")), stderr)
			}
			if after, _ := os.ReadFile(l.stream()); !bytes.Equal(after, before) {
				t.Errorf("the stream changed after the cut reading:\n%s\n---\n%s", before, after)
			}
		})
	}
}

// slowChild is a child of pid named nvidia-smi that has run at least
// 100 ms (the slow call; the quick ones end within milliseconds), 0 when
// there is none yet.
func slowChild(pid int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || !strings.Contains(string(data), "(nvidia-smi)") {
			continue
		}
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(f) < 20 || f[1] != strconv.Itoa(pid) {
			continue
		}
		ticks, _ := strconv.ParseInt(f[19], 10, 64)
		up, _ := os.ReadFile("/proc/uptime")
		secs, _ := strconv.ParseFloat(strings.Fields(string(up))[0], 64)
		if secs-float64(ticks)/100 >= 0.1 {
			return n
		}
	}
	return 0
}
