package benchfmt

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clockgate/clockgate/internal/benchtest"
)

// appendLine is vLLM 0.25.1's real result as --append-result writes it
// (internal/benchtest).
func appendLine(t *testing.T, conc, completed, failed string) string {
	t.Helper()
	return benchtest.AppendLine(t, conc, completed, failed)
}

func concs(ps []Point) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.ID.MaxConcurrency)
	}
	return out
}

// TestSyntaxErrorSpoilsOnlyItsObject: a file of several results whose last
// one was cut off (a copy stopped, a disk filled) still gives the points
// before it, and the failed requests of each: only the cut object is
// bench.invalid.
func TestSyntaxErrorSpoilsOnlyItsObject(t *testing.T) {
	const rel = "bench/m/e/r1/results.json"
	data := appendLine(t, "1", "5", "1") + "\n" + appendLine(t, "2", "8", "0") + "\n" +
		appendLine(t, "4", "8", "0") + "\n" + appendLine(t, "8", "8", "0") + "\n"
	data = data[:len(data)-200]
	f := Parse(rel, []byte(data))
	if got := concs(f.Points); !slices.Equal(got, []int{1, 2, 4}) {
		t.Errorf("points at max_concurrency %v, want [1 2 4]", got)
	}
	if len(f.Points) > 0 && f.Points[0].Where != rel+":1" {
		t.Errorf("the first point is named %q, want %s:1", f.Points[0].Where, rel)
	}
	wantFailed := rel + ":1: max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 5 of num_prompts 8, failed 1; " + hintFailed
	if !slices.Equal(f.Failed, []string{wantFailed}) {
		t.Errorf("failed %q\nwant [%q]", f.Failed, wantFailed)
	}
	if len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], rel+":4: ") || !strings.HasSuffix(f.Invalid[0], "; "+hintRestore) {
		t.Errorf("invalid %q, want one message at %s:4 ending %q", f.Invalid, rel, hintRestore)
	}

}

// TestSyntaxErrorInRealSGLangFile: SGLang's real JSON Lines file of five
// runs, cut 200 bytes short: the four whole runs are points.
func TestSyntaxErrorInRealSGLangFile(t *testing.T) {
	const rel = "bench/m/sglang/r1/out.jsonl"
	data, err := os.ReadFile(filepath.Join(realDir, "sglang", "llama_3_3_70b_output_online.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f := Parse(rel, data[:len(data)-200])
	var rates []float64
	for _, p := range f.Points {
		rates = append(rates, p.ID.RequestRate)
	}
	if !slices.Equal(rates, []float64{1, 2, 4, 8}) {
		t.Errorf("points at request_rate %v, want [1 2 4 8]", rates)
	}
	if len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], rel+":5: ") {
		t.Errorf("invalid %q, want one message at %s:5", f.Invalid, rel)
	}
}

// TestSyntaxErrorInPrettyFile: pretty-printed objects, one after another
// (vLLM 0.25.1's real indented file, three times), the second torn halfway
// and the third written after it: the first and third are read, with
// their failed requests; the message names where the torn one starts.
func TestSyntaxErrorInPrettyFile(t *testing.T) {
	const rel = "bench/m/e/r1/results.json"
	pretty, err := os.ReadFile(filepath.Join(realDir, "vllm-0.25", "bench_serve_v0.25.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	obj := func(conc, completed string) string {
		s := strings.TrimSpace(string(pretty))
		s = strings.Replace(s, `"max_concurrency": 2,`, `"max_concurrency": `+conc+`,`, 1)
		return strings.Replace(s, `"completed": 8,`, `"completed": `+completed+`,`, 1)
	}
	second := obj("2", "8")
	torn := second[:strings.Index(second, `"model_id"`)+len(`"model_id": "face`)]
	data := obj("1", "7") + "\n" + torn + "\n" + obj("4", "6") + "\n"
	f := Parse(rel, []byte(data))
	if got := concs(f.Points); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("points at max_concurrency %v, want [1 4]", got)
	}
	if len(f.Points) == 2 && (f.Points[0].Where != rel+":1" || f.Points[1].Where != rel+":56") {
		t.Errorf("points named %q, %q; want %s:1 and %s:56", f.Points[0].Where, f.Points[1].Where, rel, rel)
	}
	if len(f.Failed) != 2 || !strings.HasPrefix(f.Failed[0], rel+":1: max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 7 of num_prompts 8") ||
		!strings.HasPrefix(f.Failed[1], rel+":56: max_concurrency 4, request_rate inf: want every request completed and failed 0, found completed 6 of num_prompts 8") {
		t.Errorf("failed %q, want lines 1 and 56", f.Failed)
	}
	want := rel + ":55: control character 0xa in a string (in the value that starts on line 37); " + hintRestore
	if !slices.Equal(f.Invalid, []string{want}) {
		t.Errorf("invalid %q\nwant [%q]", f.Invalid, want)
	}

	// Torn between two members: the next object's '{' is where the error
	// shows, and it is still read.
	torn = second[:strings.Index(second, `,`+"\n"+`  "model_id"`)]
	data = obj("1", "8") + "\n" + torn + "\n" + obj("4", "6") + "\n"
	f = Parse(rel, []byte(data))
	if got := concs(f.Points); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("torn between members: points at max_concurrency %v, want [1 4]", got)
	}
	if len(f.Failed) != 1 || !strings.HasPrefix(f.Failed[0], rel+":55: max_concurrency 4,") {
		t.Errorf("torn between members: failed %q, want one at line 55", f.Failed)
	}
	want = rel + ":55: want ',' or '}' in an object, found '{' (in the value that starts on line 37); " + hintRestore
	if !slices.Equal(f.Invalid, []string{want}) {
		t.Errorf("torn between members: invalid %q\nwant [%q]", f.Invalid, want)
	}
}

// TestSyntaxErrorMidFile: a line torn in the middle of a JSON Lines file
// (two writers appending at once) spoils that line only.
func TestSyntaxErrorMidFile(t *testing.T) {
	const rel = "bench/m/e/r1/results.jsonl"
	torn := appendLine(t, "2", "8", "0")
	data := appendLine(t, "1", "8", "0") + "\n" + torn[:300] + "\n" +
		appendLine(t, "4", "7", "0") + "\n" + appendLine(t, "8", "8", "0") + "\n"
	f := Parse(rel, []byte(data))
	if got := concs(f.Points); !slices.Equal(got, []int{1, 4, 8}) {
		t.Errorf("points at max_concurrency %v, want [1 4 8]", got)
	}
	if len(f.Failed) != 1 || !strings.HasPrefix(f.Failed[0], rel+":3: max_concurrency 4, request_rate inf: want every request completed") {
		t.Errorf("failed %q, want one at line 3", f.Failed)
	}
	if len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], rel+":2: ") {
		t.Errorf("invalid %q, want one at line 2", f.Invalid)
	}
}

// TestSyntaxErrorsStopReading: a NUL byte ends the reading (the file is
// not text), and so does the maxSyntaxErrors-th syntax error; the last
// message says what was left unread.
func TestSyntaxErrorsStopReading(t *testing.T) {
	const rel = "bench/m/e/r1/results.jsonl"
	good := appendLine(t, "1", "8", "0")
	f := Parse(rel, []byte(good+"\n{\"a\": \"\x00\"}\n"+appendLine(t, "2", "8", "0")+"\n"))
	want := rel + ":2: control character 0x0 in a string (a NUL byte at line 2: the file is not text from there; the rest of it is unread); " + hintRestore
	if got := concs(f.Points); !slices.Equal(got, []int{1}) || !slices.Equal(f.Invalid, []string{want}) {
		t.Errorf("NUL: points %v, invalid %q\nwant [1], [%q]", got, f.Invalid, want)
	}

	var b strings.Builder
	for range maxSyntaxErrors + 1 {
		b.WriteString("{x\n")
	}
	b.WriteString(good + "\n")
	f = Parse(rel, []byte(b.String()))
	if len(f.Points) != 0 || len(f.Invalid) != maxSyntaxErrors {
		t.Fatalf("%d errors: %d points, invalid %q; want none, %d messages", maxSyntaxErrors+1, len(f.Points), f.Invalid, maxSyntaxErrors)
	}
	want = rel + ":10: want a key string, found 'x' (10 syntax errors, the most read past in one file: the rest of it, from line 11, is unread); " + hintRestore
	if last := f.Invalid[len(f.Invalid)-1]; last != want {
		t.Errorf("the last message %q\nwant %q", last, want)
	}
	// One error fewer: the object after them is read.
	b.Reset()
	for range maxSyntaxErrors - 1 {
		b.WriteString("{x\n")
	}
	b.WriteString(good + "\n")
	if f = Parse(rel, []byte(b.String())); len(f.Points) != 1 || len(f.Invalid) != maxSyntaxErrors-1 {
		t.Errorf("%d errors: %d points, %d messages; want 1, %d", maxSyntaxErrors-1, len(f.Points), len(f.Invalid), maxSyntaxErrors-1)
	}
}

// TestReadErrorKeepsWhatWasRead: a read error mid-file is reported as
// such (not as the end of input it caused), after the objects read
// before it.
func TestReadErrorKeepsWhatWasRead(t *testing.T) {
	const rel = "bench/m/e/r1/results.jsonl"
	data := appendLine(t, "1", "5", "0") + "\n" + appendLine(t, "2", "8", "0") + "\n"
	r := iotest.OneByteReader(ioErrAfter(bytes.NewReader([]byte(data)), len(data)-100))
	f := Read(rel, r)
	if got := concs(f.Points); !slices.Equal(got, []int{1}) {
		t.Errorf("points %v, want [1]", got)
	}
	if len(f.Failed) != 1 || !strings.HasPrefix(f.Failed[0], rel+":1: max_concurrency 1,") {
		t.Errorf("failed %q", f.Failed)
	}
	want := rel + ": reading stopped: input/output error; " + hintRestore
	if !slices.Equal(f.Invalid, []string{want}) {
		t.Errorf("invalid %q\nwant [%q]", f.Invalid, want)
	}
}

// errAfter reads n bytes of r, then fails.
type errAfter struct {
	r *bytes.Reader
	n int
}

func ioErrAfter(r *bytes.Reader, n int) *errAfter { return &errAfter{r, n} }

func (e *errAfter) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errors.New("input/output error")
	}
	if len(p) > e.n {
		p = p[:e.n]
	}
	m, err := e.r.Read(p)
	e.n -= m
	return m, err
}
