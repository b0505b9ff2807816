package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

// markLeg is a leg whose stream exists (a background sampler writes it).
func markLeg(t *testing.T, tools *recTools) *recLeg {
	l := tools.leg(t, nil)
	if err := os.MkdirAll(filepath.Dir(l.prefix), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.prefix+".samples.jsonl", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func readMarks(t *testing.T, l *recLeg) []summarize.Marked {
	t.Helper()
	f, err := os.Open(l.prefix + ".points.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := summarize.ParseMarks("points", f)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestMarkCommand: mark runs its command with I/O passed through, returns
// its status, and writes a begin and an end line around it; a signal
// reaches the command and the end line carries its exit.
func TestMarkCommand(t *testing.T) {
	tools := newRecTools(t)
	t.Run("begin, end, exit status", func(t *testing.T) {
		t.Parallel()
		l := markLeg(t, tools)
		before := time.Now().Add(-time.Second)
		code, stdout, stderr := l.run("hello\n", "mark", "--out", l.prefix, "--point", "8/inf", "--", "sh", "-c", `read x; echo "got $x"; sleep 0.2; exit 3`)
		if code != 3 || stdout != "got hello\n" {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
		}
		ms := readMarks(t, l)
		if len(ms) != 1 || ms[0].Point != "8/inf" || !ms[0].Ended || ms[0].Exit != 3 || ms[0].BeginLine != 1 || ms[0].EndLine != 2 {
			t.Fatalf("marks %+v", ms)
		}
		if ms[0].Begin.Before(before) || ms[0].End.Sub(ms[0].Begin) < 150*time.Millisecond {
			t.Errorf("begin %v, end %v: want the command's run between them", ms[0].Begin, ms[0].End)
		}
		// A second point appends beside the first.
		if code, _, stderr := l.run("", "mark", "--out", l.prefix, "--point", "none/4", "--", "true"); code != 0 {
			t.Fatalf("second point: exit %d\n%s", code, stderr)
		}
		if ms := readMarks(t, l); len(ms) != 2 || ms[1].Point != "none/4" || ms[1].Exit != 0 {
			t.Fatalf("marks %+v", ms)
		}
	})
	t.Run("forwards SIGTERM", func(t *testing.T) {
		t.Parallel()
		l := markLeg(t, tools)
		p := l.start("", "mark", "--out", l.prefix, "--point", "16/2.5", "--", "sh", "-c", `trap "exit 7" TERM; while :; do sleep 0.05; done`)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if data, _ := os.ReadFile(l.prefix + ".points.jsonl"); strings.Contains(string(data), `"begin"`) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code != 7 {
			t.Fatalf("exit %d, want the command's 7; stderr:\n%s", code, p.stderr.String())
		}
		if ms := readMarks(t, l); len(ms) != 1 || !ms[0].Ended || ms[0].Exit != 7 {
			t.Fatalf("marks %+v", ms)
		}
	})
}

// TestMarkRefuses: a malformed point, a prefix with no stream and a point
// that already ended are refused with exit 2, nothing written and the
// command not run.
func TestMarkRefuses(t *testing.T) {
	tools := newRecTools(t)
	cases := []struct {
		name, point string
		noStream    bool
		existing    string
		want        string
	}{
		{name: "infinite concurrency", point: "inf/8", want: `point "inf/8": max_concurrency "inf" is neither a positive integer nor none`},
		{name: "8/inf written otherwise", point: "8/Infinity", want: `point "8/Infinity": request_rate "Infinity" is neither a positive number nor inf`},
		{name: "trailing zero", point: "16/2.50", want: `point "16/2.50": written "16/2.5" by the report`},
		{name: "no slash", point: "8", want: `point "8": no /`},
		{name: "zero concurrency", point: "0/inf", want: `max_concurrency "0" is neither a positive integer nor none`},
		{name: "no stream", point: "8/inf", noStream: true, want: "no clock stream at "},
		{name: "already ended", point: "8/inf",
			existing: `{"point":"8/inf","event":"begin","t":"2026-08-12T09:00:00.000Z"}` + "\n" + `{"point":"8/inf","event":"end","t":"2026-08-12T09:01:00.000Z","exit":0}` + "\n",
			want:     "point 8/inf already has an end line in "},
		{name: "malformed points file", point: "4/inf", existing: `{"point":"8/inf","event":"start","t":"2026-08-12T09:00:00.000Z"}` + "\n",
			want: `.points.jsonl:1: event: want "begin" or "end", found string "start"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			if !c.noStream {
				l = markLeg(t, tools)
			}
			pts := l.prefix + ".points.jsonl"
			if c.existing != "" {
				if err := os.WriteFile(pts, []byte(c.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ran := filepath.Join(t.TempDir(), "ran")
			if c.noStream {
				l.env = append(l.env, markWaitEnv+"=300ms")
			}
			code, _, stderr := l.run("", "mark", "--out", l.prefix, "--point", c.point, "--", "touch", ran)
			if c.noStream && !strings.Contains(stderr, "yet; waiting up to 300ms for the sampler to create it\n") ||
				c.noStream && !strings.Contains(stderr, ".samples.jsonl after waiting 300ms: start the sampler first") {
				t.Errorf("stderr %q: want the wait said, and its length in the refusal", stderr)
			}
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Errorf("the command ran")
			}
			data, _ := os.ReadFile(pts)
			if string(data) != c.existing {
				t.Errorf("points file now %q, was %q", data, c.existing)
			}
		})
	}
}

// mark started right after 'clockgate sample … &' waits for the sampler to
// create its stream, saying so, instead of refusing: here the stream
// appears 400 ms after mark starts, and with a real sampler started a
// moment before.
func TestMarkWaitsForTheStream(t *testing.T) {
	tools := newRecTools(t)
	t.Run("a stream that appears", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		p := l.start("", "mark", "--out", l.prefix, "--point", "8/inf", "--", "true")
		time.Sleep(400 * time.Millisecond)
		if err := os.MkdirAll(filepath.Dir(l.prefix), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.stream(), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		if want := "clockgate mark: no clock stream at " + l.stream() + " yet; waiting up to 10s for the sampler to create it\n"; !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr %q\nwant %q", p.stderr.String(), want)
		}
		if ms := readMarks(t, l); len(ms) != 1 || !ms[0].Ended || ms[0].Exit != 0 {
			t.Fatalf("marks %+v", ms)
		}
	})
	t.Run("right after sample &", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		smp := l.start("", "sample", "--out", l.prefix, "--interval", recInterval.String(), "--backend", "nvidia-smi")
		code, _, stderr := l.run("", "mark", "--out", l.prefix, "--point", "8/inf", "--", "sleep", "0.3")
		if code != 0 {
			t.Fatalf("mark: exit %d; stderr:\n%s", code, stderr)
		}
		smp.cmd.Process.Signal(syscall.SIGTERM)
		if code := smp.wait(t); code != 0 {
			t.Fatalf("sample: exit %d; stderr:\n%s", code, smp.stderr.String())
		}
		if ms := readMarks(t, l); len(ms) != 1 || ms[0].Point != "8/inf" || !ms[0].Ended || ms[0].Exit != 0 {
			t.Fatalf("marks %+v", ms)
		}
	})
}
