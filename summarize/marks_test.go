package summarize

import (
	"github.com/clockgate/clockgate/benchfmt"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestRealVLLMDates reads the date and duration of every real vLLM result
// in testdata/bench-real that has both, and checks the window clockgate
// computes from them: [date + 1 s − duration, date − 1 s] on the client's
// wall clock, none for a duration of 2 s or less, and none for a file
// without a duration.
func TestRealVLLMDates(t *testing.T) {
	wall := func(s string) time.Time {
		w, err := time.Parse("20060102-150405.000000", s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	cases := []struct {
		file     string
		from, to string // the window on the client's wall clock; "" none
		note     string
	}{
		{"vllm-0.5/1xA100-80GB-SXM/Mistral-7B-Instruct-v0.3_tp1_len2000.json", "20240907-083518.764782", "20240907-083527.000000", ""},
		{"vllm-0.5/2xA100-80GB-SXM/Mistral-7B-Instruct-v0.3_tp2_len2000.json", "20240907-102253.253931", "20240907-102258.000000", ""},
		{"vllm-0.25/bench_serve_v0.25.1.json", "", "", "vLLM duration 1.5441598830002476 s ≤ 2 s"},
		{"vllm-0.25/bench_serve_all_requests_failed_v0.25.1.json", "", "", "vLLM duration 0.00503263997961767 s ≤ 2 s"},
		{"vllm-0.25/sweep/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/run=0.json", "", "", "vLLM duration 1.3653671270003542 s ≤ 2 s"},
		{"vllm-nightly-trimmed/serving_llama8B_tp1_1.json", "", "", "not a result"},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(realDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		bf := benchfmt.Parse(c.file, data)
		if c.note == "not a result" {
			// A trimmed file without duration or result keys has no point,
			// so no window.
			if len(bf.Points) != 0 {
				t.Errorf("%s: %d points", c.file, len(bf.Points))
			}
			continue
		}
		if len(bf.Points) != 1 {
			t.Fatalf("%s: %d points, %v %v", c.file, len(bf.Points), bf.Invalid, bf.Failed)
		}
		d := datePoint(bf.Points[0])
		if d.NoWindow != "" {
			t.Fatalf("%s: %s", c.file, d.NoWindow)
		}
		sp, note := clocks.DateSpan(d.Wall, time.UTC, d.DurationS)
		switch {
		case c.from == "" && (note == "" || !strings.HasPrefix(note, c.note)):
			t.Errorf("%s: window %s, note %q; want none (%s)", c.file, sp, note, c.note)
		case c.from != "" && (note != "" || sp.From/1000 != wall(c.from).UnixNano()/1000 || sp.To != wall(c.to).UnixNano()):
			t.Errorf("%s: window %s (%s); want %s to %s", c.file, sp, note, c.from, c.to)
		}
	}
}

// TestParseMarks: a points file's lines in order, and each defect named
// with its line.
func TestParseMarks(t *testing.T) {
	b := func(p, ts string) string { return `{"point":"` + p + `","event":"begin","t":"` + ts + `"}` + "\n" }
	e := func(p, ts, exit string) string {
		return `{"point":"` + p + `","event":"end","t":"` + ts + `","exit":` + exit + `}` + "\n"
	}
	const t0, t1, t2, t3 = "2026-08-12T09:00:00.000Z", "2026-08-12T09:01:00.000Z", "2026-08-12T09:02:00.000Z", "2026-08-12T09:03:00.000Z"
	ms, err := ParseMarks("p", strings.NewReader(b("8/inf", t0)+b("8/inf", t1)+e("8/inf", t2, "0")+b("none/4", t2)+e("none/4", t3, "137")+b("16/2.5", t3)))
	if err != nil {
		t.Fatal(err)
	}
	w := markWindows(ms)
	if len(w) != 3 || w[0].Span.From != time.Date(2026, 8, 12, 9, 1, 0, 0, time.UTC).UnixNano() || w[0].NoWindow != "" ||
		w[1].NoWindow != "its command exited 137 (line 5)" ||
		w[2].NoWindow != "clockgate mark began it at 2026-08-12T09:03:00Z (line 6) and wrote no end: the command was killed, or is still running" {
		t.Fatalf("windows %+v", w)
	}
	for _, c := range []struct{ in, want string }{
		{e("8/inf", t0, "0"), "p:1: point 8/inf ends with no begin line before it"},
		{b("8/inf", t0) + e("8/inf", t1, "0") + e("8/inf", t2, "0"), "p:3: point 8/inf ends twice (lines 2 and 3)"},
		{b("8/inf", t0) + e("8/inf", t1, "0") + b("8/inf", t2), "p:3: point 8/inf begins again after its end at line 2"},
		{b("8/inf", t1) + e("8/inf", t0, "0"), "p:2: point 8/inf ends at 2026-08-12T09:00:00.000Z, before its begin at line 1"},
		{b("8/inf", t0) + e("8/inf", t1, `"0"`), "p:2: exit: want the command's exit status, an integer"},
		{b("8/Infinity", t0), `p:1: point "8/Infinity": request_rate "Infinity" is neither a positive number nor inf`},
		{b("8/inf", "yesterday"), `p:1: t: want an RFC 3339 time, found string "yesterday"`},
		{`{"point":"8/inf","event":"begin","t":"` + t0 + `","exit":0}` + "\n", "p:1: exit: not a key of a begin line"},
		{"\n", "p:1: empty line"},
	} {
		if _, err := ParseMarks("p", strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParseMarks: any points file is read or refused with an error that
// names its line, never a panic; what is read keeps its invariants (one
// entry per point, an end never before its begin).
func FuzzParseMarks(f *testing.F) {
	f.Add([]byte(`{"point":"8/inf","event":"begin","t":"2026-08-12T09:00:00.000Z"}` + "\n" +
		`{"point":"8/inf","event":"end","t":"2026-08-12T09:01:00.000Z","exit":0}` + "\n"))
	f.Add([]byte(`{"point":"none/4","event":"begin","t":"2026-08-12T09:00:00Z"}`))
	f.Add([]byte(`{"point":"16/2.5","event":"end","t":"x","exit":1.5}` + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMarks("p", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "p:") {
				t.Fatalf("error without its place: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if seen[m.Point] || m.Ended && m.End.Before(m.Begin) {
				t.Fatalf("marks %+v", ms)
			}
			seen[m.Point] = true
		}
		markWindows(ms)
	})
}
