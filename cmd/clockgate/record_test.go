package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestRecordCommand runs the real command around a child and proves that
// sampling stops with the child and that the child's status is passed
// through.
func TestRecordCommand(t *testing.T) {
	tools := newRecTools(t)
	base := func(l *recLeg, extra ...string) []string {
		return append([]string{"record", "--out", l.prefix, "--interval", recInterval.String(), "--backend", "nvidia-smi"}, extra...)
	}

	exits := []struct {
		name   string
		script string
		code   int
	}{
		{"exit 0", "sleep 0.3", 0},
		{"exit 3", "sleep 0.3; exit 3", 3},
		{"killed by SIGKILL", "sleep 0.3; kill -KILL $$", 128 + 9},
	}
	for _, c := range exits {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			start := time.Now()
			code, _, stderr := l.run("", append(base(l), "--", "sh", "-c", c.script)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v", el)
			}
			rec := l.readRecord(clocks.StopCommandExit, 0.1)
			if rec.Window.StopReason != "command-exit" || rec.Window.SamplesTotal < 2 {
				t.Errorf("window %+v", rec.Window)
			}
			if c.code != 0 && strings.Contains(stderr, "clockgate: ") {
				t.Errorf("a child's failure is not clockgate's error:\n%s", stderr)
			}
			l.readOnly()
		})
	}

	t.Run("stdin and stdout pass through", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		code, stdout, stderr := l.run("hello\n", append(base(l), "sh", "-c", `read x; echo "got $x"; echo "to stderr" >&2; sleep 0.2`)...)
		if code != 0 || stdout != "got hello\n" || !strings.Contains(stderr, "to stderr\n") {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if line != "to stderr" && !strings.HasPrefix(line, "clockgate record: ") {
				t.Errorf("status line without prefix: %q", line)
			}
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("forwards "+sig.String(), func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			trap := "TERM"
			if sig == syscall.SIGINT {
				trap = "INT"
			}
			p := l.start("", append(base(l), "--", "sh", "-c", `trap "exit 7" `+trap+`; while :; do sleep 0.05; done`)...)
			l.waitLines(3)
			p.cmd.Process.Signal(sig)
			if code := p.wait(t); code != 7 {
				t.Fatalf("exit %d, want the child's 7; stderr:\n%s", code, p.stderr.String())
			}
			if rec := l.readRecord(clocks.StopCommandExit, 0.1); rec.Window.StopReason != "command-exit" {
				t.Errorf("stop %q", rec.Window.StopReason)
			}
		})
	}

	// --max-duration stops sampling, not the command.
	t.Run("max-duration", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		marker := filepath.Join(t.TempDir(), "finished")
		code, _, stderr := l.run("", append(base(l, "--max-duration", "200ms"), "sh", "-c", "sleep 0.6; touch "+marker+"; exit 5")...)
		if code != 5 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("the command did not run to its end: %v", err)
		}
		if rec := l.readRecord(clocks.StopMaxDuration, 0.1); rec.Window.StopReason != "max-duration" {
			t.Errorf("stop %q", rec.Window.StopReason)
		}
		if !strings.Contains(stderr, "clockgate record: sampling stopped; waiting for sh to exit") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})

	// A refusal while the command runs stops sampling at once, writes the
	// record with stop_reason refused, lets the command finish, and exits
	// with its status, or 1 when that is 0.
	refuse := map[string]any{"plan": []any{map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{"values": map[string]any{"clocks.sm": "[N/A]"}}}}
	for _, c := range []struct {
		name  string
		child int
		code  int
	}{{"refusal, command succeeds", 0, 1}, {"refusal, command fails", 4, 4}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, refuse)
			marker := filepath.Join(t.TempDir(), "finished")
			script := "sleep 0.6; touch " + marker + "; exit " + string(rune('0'+c.child))
			code, _, stderr := l.run("", append(base(l), "sh", "-c", script)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the command was cut short: %v", err)
			}
			want := `clockgate record: sampling stopped: refusing to sample: nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[N/A]"`
			final := `clockgate: refusing to sample: nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[N/A]"`
			if !strings.Contains(stderr, want) || !strings.Contains(stderr, final) || strings.Index(stderr, want) > strings.Index(stderr, final) {
				t.Errorf("stderr:\n%s", stderr)
			}
			if rec := l.readRecord(clocks.StopRefused, 0.1); rec.Window.SamplesTotal != 2 || !strings.HasPrefix(rec.Refusal, `nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[N/A]"`) {
				t.Errorf("record %+v", rec)
			}
			if v := "clockgate record: verdict: clock.busy_samples clock.refused (clockgate check " + l.record() + " says why)\n"; !strings.Contains(stderr, v) || strings.Index(stderr, v) > strings.Index(stderr, want) {
				t.Errorf("no verdict line, or after the waiting line:\n%s", stderr)
			}
		})
	}

	// Sampling that cannot start does not run the command.
	notStarted := []struct {
		name  string
		cfg   map[string]any
		setup func(*recLeg)
		code  int
		want  string
	}{
		{"refused at start", map[string]any{"plan": []any{map[string]any{"exit": 9, "msg": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."}}}, nil,
			1, `clockgate: nvidia-smi -i 0 exited with status 9: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." (sh not started)`},
		{"stream exists", nil, func(l *recLeg) {
			os.MkdirAll(filepath.Dir(l.stream()), 0o755)
			os.WriteFile(l.stream(), []byte("theirs\n"), 0o644)
		}, 2, ": already exists; a sampler never adds to evidence it did not start (choose another --out) (sh not started)"},
	}
	for _, c := range notStarted {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, c.cfg)
			if c.setup != nil {
				c.setup(l)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			code, _, stderr := l.run("", append(base(l), "sh", "-c", "touch "+marker)...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d; stderr:\n%s\nwant %s", code, c.code, stderr, c.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran although sampling could not start")
			}
			l.noFile(l.record())
		})
	}

	t.Run("command exits before the first sample", func(t *testing.T) {
		t.Parallel()
		// The fake answers the probe at once and every reading after 300 ms,
		// so the command is gone before the first sample is in.
		l := tools.leg(t, map[string]any{"plan": []any{map[string]any{}, map[string]any{"sleep_ms": 300}}})
		code, _, stderr := l.run("", append(base(l), "sh", "-c", "exit 6")...)
		if code != 6 || !strings.Contains(stderr, "clockgate: no sample taken: stopped (command-exit) before the first sample; no record written") {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.noFile(l.stream())
		l.noFile(l.record())
	})

	t.Run("command not found", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		code, _, stderr := l.run("", append(base(l), "/nonexistent/bench")...)
		if code != 2 || !strings.Contains(stderr, "clockgate: cannot run /nonexistent/bench: ") {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.noFile(l.stream())
	})
}
