package summarize_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

// copyTree copies a committed scenario into a temporary directory the test
// may change, and returns its path.
func copyTree(t *testing.T, scenario string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "tree")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(treesDir, scenario))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func run(t *testing.T, root string) *summarize.Summary {
	t.Helper()
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// legOf finds a leg of the summary by model/engine/rN.
func legOf(t *testing.T, s *summarize.Summary, key string) *summarize.Leg {
	t.Helper()
	for _, l := range s.Legs {
		if fmt.Sprintf("%s/%s/%s", l.Model, l.Engine, l.Name()) == key {
			return l
		}
	}
	t.Fatalf("no leg %s", key)
	return nil
}

// reasonOf returns the message of the leg's only reason with code, failing
// when there is not exactly one.
func reasonOf(t *testing.T, l *summarize.Leg, code string) string {
	t.Helper()
	var msgs []string
	for _, r := range l.Reasons {
		if r.Code == code {
			msgs = append(msgs, r.Message)
		}
	}
	if len(msgs) != 1 {
		t.Fatalf("leg %s: %d %s reasons, want 1; reasons %+v", l.Name(), len(msgs), code, l.Reasons)
	}
	return msgs[0]
}

const (
	ours = llama + "/fastengine/r1"
	base = llama + "/vllm/r1"
)

func TestRunLabels(t *testing.T) {
	root := copyTree(t, "cross-boot")
	benchDir := filepath.Join(root, "bench", llama, "vllm")
	for _, name := range []string{"r0", "r01", "r-1", "rx"} {
		if err := os.CopyFS(filepath.Join(benchDir, name), os.DirFS(filepath.Join(benchDir, "r1"))); err != nil {
			t.Fatal(err)
		}
	}
	s := run(t, root)
	if len(s.Legs) != 2 {
		t.Fatalf("%d legs, want the 2 real ones", len(s.Legs))
	}
	for _, name := range []string{"r-1", "r0", "r01", "rx"} {
		want := fmt.Sprintf("bench/%s/vllm/%s: not a leg: want r<N>, N a decimal integer from 1 to 2^30 (1073741824) without leading zeros; ignored", llama, name)
		if !slices.Contains(s.Warnings, want) {
			t.Errorf("no warning %q in %q", want, s.Warnings)
		}
	}
}

// TestLegsAreTheUnion: evidence in one subtree and not another is a reason
// on the leg, never a skipped leg.
func TestLegsAreTheUnion(t *testing.T) {
	root := copyTree(t, "cross-boot")
	// A leg with only a memory record; one with only bench points; one with
	// an empty bench directory and nothing else.
	must(t, os.WriteFile(filepath.Join(root, "memory", llama, "vllm", "r2.summary.json"),
		[]byte(`{"peak_gpu_memory_mib": 71234.0, "n": 300}`), 0o644))
	must(t, os.CopyFS(filepath.Join(root, "bench", llama, "vllm", "r3"), os.DirFS(filepath.Join(root, "bench", llama, "vllm", "r1"))))
	must(t, os.MkdirAll(filepath.Join(root, "bench", llama, "vllm", "r4"), 0o755))
	s := run(t, root)
	for key, want := range map[string][]string{
		llama + "/vllm/r2": {summarize.CodeBenchMissing, clocks.CodeMissing},
		llama + "/vllm/r3": {clocks.CodeMissing, summarize.CodeMemoryMissing},
		llama + "/vllm/r4": {summarize.CodeBenchMissing, clocks.CodeMissing, summarize.CodeMemoryMissing},
	} {
		l := legOf(t, s, key)
		if got := clocks.Codes(l.Reasons); !slices.Equal(got, want) {
			t.Errorf("%s: codes %v, want %v", key, got, want)
		}
	}
	if got := reasonOf(t, legOf(t, s, llama+"/vllm/r2"), summarize.CodeBenchMissing); got != "no bench points: bench/"+llama+"/vllm/r2/ does not exist; put the leg's result files there, or rerun the leg" {
		t.Errorf("bench.missing: %q", got)
	}
	if got := reasonOf(t, legOf(t, s, llama+"/vllm/r4"), summarize.CodeBenchMissing); got != "no bench points: no <point>.json or .jsonl file in bench/"+llama+"/vllm/r4/; put the leg's result files there, or rerun the leg" {
		t.Errorf("bench.missing: %q", got)
	}
	if got := reasonOf(t, legOf(t, s, llama+"/vllm/r3"), summarize.CodeMemoryMissing); got != "no memory record at memory/"+llama+"/vllm/r3.summary.json; run the memory sampler with the leg and put its record there, or re-measure the leg" {
		t.Errorf("memory.missing: %q", got)
	}
	// Reasons come clock first, then bench, then memory.
	var codes []string
	for _, r := range legOf(t, s, llama+"/vllm/r4").Reasons {
		codes = append(codes, r.Code)
	}
	if want := []string{clocks.CodeMissing, summarize.CodeBenchMissing, summarize.CodeMemoryMissing}; !slices.Equal(codes, want) {
		t.Errorf("reason order %v, want %v", codes, want)
	}
}

func TestDuplicatePointInLeg(t *testing.T) {
	root := copyTree(t, "cross-boot")
	dir := filepath.Join(root, "bench", llama, "vllm", "r1")
	c8, err := os.ReadFile(filepath.Join(dir, "c8.json"))
	must(t, err)
	c4, err := os.ReadFile(filepath.Join(dir, "c4.json"))
	must(t, err)
	// The same point again, appended to another point's file.
	must(t, os.WriteFile(filepath.Join(dir, "more.json"), append(append(c4[:len(c4):len(c4)], '\n'), c8...), 0o644))
	must(t, os.Remove(filepath.Join(dir, "c4.json")))
	s := run(t, root)
	l := legOf(t, s, base)
	want := "max_concurrency 8, request_rate inf: want one object per point in a leg, found 2: bench/" + llama + "/vllm/r1/c8.json, bench/" + llama + "/vllm/r1/more.json:2; none used"
	if got := reasonOf(t, l, summarize.CodeBenchInvalid); !strings.HasPrefix(got, want) {
		t.Errorf("bench.invalid %q\nwant %q…", got, want)
	}
	var pts []int
	for _, p := range l.Points {
		pts = append(pts, p.ID.MaxConcurrency)
	}
	if !slices.Equal(pts, []int{1, 2, 4}) {
		t.Errorf("points %v, want [1 2 4]: the doubled point is not used, the appended one is", pts)
	}
}

func TestSymlinksThatLeaveTheTree(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "evidence.json")
	must(t, os.WriteFile(secret, []byte(`{"peak_gpu_memory_mib": 1.0, "n": 1}`), 0o644))

	root := copyTree(t, "cross-boot")
	rel := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	replace := func(p, target string) {
		must(t, os.Remove(rel(p)))
		must(t, os.Symlink(target, rel(p)))
	}
	replace("clocks/"+llama+"/fastengine/r1.summary.json", secret)
	replace("clocks/"+llama+"/vllm/r1.samples.jsonl", secret)
	replace("bench/"+llama+"/vllm/r1/c2.json", secret)
	replace("memory/"+llama+"/vllm/r1.summary.json", secret)
	// A symbolic link inside the tree is followed.
	replace("memory/"+llama+"/fastengine/r1.summary.json", "../../../memory/"+llama+"/vllm/r1.summary.json")
	// A loop is refused, not followed.
	must(t, os.Symlink("loop-b.json", rel("bench/"+llama+"/fastengine/r1/loop-a.json")))
	must(t, os.Symlink("loop-a.json", rel("bench/"+llama+"/fastengine/r1/loop-b.json")))

	done := make(chan *summarize.Summary)
	go func() { done <- run(t, root) }()
	var s *summarize.Summary
	select {
	case s = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("summarize did not return: a symbolic link loop was followed")
	}
	refused := "a symbolic link that leaves the tree or cannot be resolved (a loop or a dangling link); refused unread; " +
		"put the file or directory itself in its place (copy it into the tree), or remove the link"
	o, b := legOf(t, s, ours), legOf(t, s, base)
	if got := reasonOf(t, o, clocks.CodeInvalid); got != "clock record clocks/"+llama+"/fastengine/r1.summary.json: "+refused {
		t.Errorf("clock.invalid %q", got)
	}
	if got := reasonOf(t, b, clocks.CodeStreamMissing); got != "no readable clock stream beside the record: clocks/"+llama+"/vllm/r1.samples.jsonl: "+refused {
		t.Errorf("clock.stream_missing %q", got)
	}
	if got := reasonOf(t, b, summarize.CodeMemoryInvalid); got != "memory/"+llama+"/vllm/r1.summary.json: "+refused {
		t.Errorf("memory.invalid %q", got)
	}
	if got := reasonOf(t, b, summarize.CodeBenchInvalid); got != "bench/"+llama+"/vllm/r1/c2.json: "+refused {
		t.Errorf("bench.invalid %q", got)
	}
	var loops []string
	for _, r := range o.Reasons {
		if r.Code == summarize.CodeBenchInvalid {
			loops = append(loops, r.Message)
		}
	}
	if len(loops) != 2 || !strings.HasSuffix(loops[0], "loop-a.json: "+refused) || !strings.HasSuffix(loops[1], "loop-b.json: "+refused) {
		t.Errorf("loop reasons %q", loops)
	}
	// The in-tree link was followed: fastengine's memory is vllm's record,
	// which is refused on vllm's side but fine when reached from inside.
	if o.Memory != nil || len(filterCodes(o.Reasons, summarize.CodeMemoryInvalid)) != 1 {
		t.Errorf("fastengine memory %+v: a link to a link that leaves the tree must be refused too", o.Memory)
	}
	// Nothing outside was read into the outputs.
	all, err := s.AllRunsJSON()
	must(t, err)
	if strings.Contains(string(all), outside) {
		t.Errorf("all-runs.json names the outside path %s", outside)
	}
}

func TestSymlinkInsideTheTreeIsFollowed(t *testing.T) {
	root := copyTree(t, "cross-boot")
	p := filepath.Join(root, "memory", llama, "fastengine", "r1.summary.json")
	must(t, os.Rename(p, filepath.Join(root, "memory", "kept.json")))
	must(t, os.Symlink("../../kept.json", p))
	s := run(t, root)
	l := legOf(t, s, ours)
	if l.Memory == nil || len(l.Reasons) != 0 {
		t.Errorf("memory %+v, reasons %+v: an in-tree link must be followed", l.Memory, l.Reasons)
	}
	// memory/kept.json is not a model directory: a warning, not a leg.
	if !slices.Contains(s.Warnings, "memory/kept.json: not a model directory; ignored") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

func TestDirectorySymlinkLeavingTheTreeIsAnError(t *testing.T) {
	root := copyTree(t, "cross-boot")
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(root, "bench", "elsewhere")))
	_, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	want := root + ": bench/elsewhere: a symbolic link that leaves the tree"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %v, want one starting %q", err, want)
	}
}

// TestNonRegularFilesAreRefusedWithoutBlocking puts a FIFO and a directory
// where evidence files belong.
func TestNonRegularFilesAreRefusedWithoutBlocking(t *testing.T) {
	root := copyTree(t, "cross-boot")
	rel := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	must(t, os.Remove(rel("memory/"+llama+"/vllm/r1.summary.json")))
	must(t, syscall.Mkfifo(rel("memory/"+llama+"/vllm/r1.summary.json"), 0o644))
	must(t, syscall.Mkfifo(rel("bench/"+llama+"/vllm/r1/fifo.json"), 0o644))
	must(t, os.Mkdir(rel("bench/"+llama+"/vllm/r1/dir.json"), 0o755))
	must(t, os.Remove(rel("clocks/"+llama+"/vllm/r1.samples.jsonl")))
	must(t, syscall.Mkfifo(rel("clocks/"+llama+"/vllm/r1.samples.jsonl"), 0o644))

	done := make(chan *summarize.Summary)
	go func() { done <- run(t, root) }()
	var s *summarize.Summary
	select {
	case s = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("summarize blocked on a FIFO")
	}
	l := legOf(t, s, base)
	if got := reasonOf(t, l, summarize.CodeMemoryInvalid); !strings.HasPrefix(got, "memory/"+llama+"/vllm/r1.summary.json: not a regular file (a FIFO)") {
		t.Errorf("memory.invalid %q", got)
	}
	bench := strings.Join(messages(filterCodes(l.Reasons, summarize.CodeBenchInvalid)), "\n")
	for _, want := range []string{"bench/" + llama + "/vllm/r1/dir.json: not a regular file (a directory)",
		"bench/" + llama + "/vllm/r1/fifo.json: not a regular file (a FIFO)"} {
		if !strings.Contains(bench, want) {
			t.Errorf("bench.invalid %q lacks %q", bench, want)
		}
	}
	if got := reasonOf(t, l, clocks.CodeStreamMissing); !strings.Contains(got, "not a regular file (a FIFO)") {
		t.Errorf("clock.stream_missing %q", got)
	}
}

func TestTreeErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct{ root, want string }{
		{filepath.Join(dir, "nope"), filepath.Join(dir, "nope") + ": no such file or directory"},
		{file, file + ": not a directory"},
	} {
		_, err := summarize.Summarize(c.root, summarize.Options{Baseline: "vllm"})
		if err == nil || err.Error() != c.want {
			t.Errorf("Summarize(%s): %v, want %q", c.root, err, c.want)
		}
	}
	if _, err := summarize.Summarize(dir, summarize.Options{}); !errors.Is(err, summarize.ErrNoBaseline) {
		t.Errorf("no baseline: %v", err)
	}
}

// TestTreeIsNotModified summarizes a tree and checks that no file in it
// changed, appeared or disappeared.
func TestTreeIsNotModified(t *testing.T) {
	root := copyTree(t, "record-edited")
	before := fingerprint(t, root)
	s := run(t, root)
	if _, err := s.SummaryJSON(); err != nil {
		t.Fatal(err)
	}
	if after := fingerprint(t, root); after != before {
		t.Error("summarize changed the tree")
	}
}

func fingerprint(t *testing.T, root string) string {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %v\n", p, info.Mode(), info.ModTime().UnixNano())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	must(t, err)
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestBaselineOption(t *testing.T) {
	s, err := summarize.Summarize(filepath.Join(treesDir, "three-engines"), summarize.Options{Baseline: "fastengine"})
	must(t, err)
	var got []string
	for _, c := range s.Comparisons {
		got = append(got, c.Ours+"/"+c.Baseline)
	}
	if want := []string{"turboserve/fastengine", "vllm/fastengine"}; !slices.Equal(got, want) {
		t.Errorf("comparisons %v, want %v", got, want)
	}
	s, err = summarize.Summarize(filepath.Join(treesDir, "three-engines"), summarize.Options{Baseline: "sglang"})
	must(t, err)
	want := "model " + llama + ": no baseline arm sglang (found fastengine, turboserve, vllm); not compared: measure sglang on this model too, or name another baseline engine (--baseline)"
	if len(s.Comparisons) != 0 || s.GatePass || !slices.Equal(s.Warnings, []string{want}) {
		t.Errorf("comparisons %d, gate_pass %v, warnings %q; want none, false, [%q]", len(s.Comparisons), s.GatePass, s.Warnings, want)
	}
}

// TestStaircaseOffsetIsZero guards the staircase tree's premise: the
// offset is 0.00%, so only the merged-arm spread can refuse the ratio.
func TestStaircaseOffsetIsZero(t *testing.T) {
	s := run(t, filepath.Join(treesDir, "staircase"))
	b := s.Comparisons[0].Throughput.Clock
	if b.OffsetPct == nil || *b.OffsetPct != 0 || *b.Ours.MedianMHz != 2300 || *b.Baseline.MedianMHz != 2300 {
		t.Errorf("offset %v, medians %v and %v; want 0 at 2300 and 2300", b.OffsetPct, b.Ours.MedianMHz, b.Baseline.MedianMHz)
	}
}

// TestEmptyListsAreNotNull: lists are [] in every output, never null (a
// tree with no leg at all is an error: TestNoLeg).
func TestEmptyListsAreNotNull(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "bench", llama, "vllm", "r1"), 0o755))
	s := run(t, root)
	sum, err := s.SummaryJSON()
	must(t, err)
	all, err := s.AllRunsJSON()
	must(t, err)
	if want := `"comparisons": []`; !strings.Contains(string(sum), want) || !strings.Contains(string(all), want) {
		t.Errorf("want %s in both:\n%s\n%s", want, sum, all)
	}
	if !strings.Contains(string(sum), `"warnings": [`) || !strings.Contains(string(all), `"legs": [`) {
		t.Errorf("want warnings and legs lists:\n%s\n%s", sum, all)
	}
	// A leg's missing record is null; a list never is.
	listNull := regexp.MustCompile(`"(comparisons|warnings|legs|reasons|points|files)": null`)
	for _, doc := range [][]byte{sum, all} {
		if listNull.Match(doc) {
			t.Errorf("a null list in\n%s", doc)
		}
	}
	// A leg with no reasons and no points still writes lists.
	s = run(t, filepath.Join(treesDir, "clean-grid"))
	all, err = s.AllRunsJSON()
	must(t, err)
	if strings.Contains(string(all), `"reasons": null`) || strings.Contains(string(all), `"bench": null`) {
		t.Error("a null list in all-runs.json")
	}
}

func filterCodes(rs []clocks.Reason, code string) []clocks.Reason {
	var out []clocks.Reason
	for _, r := range rs {
		if r.Code == code {
			out = append(out, r)
		}
	}
	return out
}

func messages(rs []clocks.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Message
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotAnEvidenceTree: a TREE with none of bench/, memory/ and clocks/
// is an error naming what it holds (the wrong directory was given), never
// an empty report.
func TestNotAnEvidenceTree(t *testing.T) {
	for name, make := range map[string]func(root string){
		"empty":             func(string) {},
		"the bench subtree": func(root string) { must(t, os.MkdirAll(filepath.Join(root, llama, "vllm", "r1"), 0o755)) },
		"bench as a file":   func(root string) { must(t, os.WriteFile(filepath.Join(root, "bench"), nil, 0o644)) },
	} {
		root := t.TempDir()
		make(root)
		_, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
		if !errors.Is(err, summarize.ErrNotTree) || !strings.Contains(err.Error(), "not an evidence tree: want bench/, memory/ or clocks/ directly under it, found none") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// Any one of the three makes a tree; one with no leg in it is an
	// error too (TestNoLeg), never "0 of 0 ratios".
	for _, sub := range []string{"bench", "memory", "clocks"} {
		root := t.TempDir()
		must(t, os.Mkdir(filepath.Join(root, sub), 0o755))
		if _, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"}); !errors.Is(err, summarize.ErrNoLeg) || errors.Is(err, summarize.ErrNotTree) {
			t.Errorf("%s/ alone: %v", sub, err)
		}
		must(t, os.MkdirAll(filepath.Join(root, sub, llama, "vllm"), 0o755))
		write := filepath.Join(root, sub, llama, "vllm", "r1.summary.json")
		if sub == "bench" {
			write = filepath.Join(root, sub, llama, "vllm", "r1", "8.json")
			must(t, os.Mkdir(filepath.Dir(write), 0o755))
		}
		must(t, os.WriteFile(write, []byte("{}"), 0o644))
		if _, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"}); err != nil {
			t.Errorf("%s/ with a leg: %v", sub, err)
		}
	}
}

// TestNoLeg: a tree whose bench/, memory/ and clocks/ hold no leg is an
// error saying what was found; a tree one level too deep, as a Hugging
// Face model id used as a directory name makes it, names the model with
// its "/" and says how to name it in one segment.
func TestNoLeg(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "bench", "stray"), 0o755))
	_, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	want := "no leg found: want bench/<model>/<engine>/r<N>/<point>.json, memory/<model>/<engine>/r<N>.summary.json or clocks/<model>/<engine>/r<N>.summary.json; found: "
	if !errors.Is(err, summarize.ErrNoLeg) || !strings.Contains(err.Error(), want+"no file or directory in them") {
		t.Errorf("a model without engines: %v", err)
	}
	root = t.TempDir()
	for _, p := range []string{"bench/meta-llama/Llama-3.1-8B-Instruct/vllm/r1/8.json", "clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1.summary.json",
		"memory/meta-llama/Llama-3.1-8B-Instruct/vllm/r1.summary.json", "clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1.samples.jsonl"} {
		must(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, p), []byte("{}"), 0o644))
	}
	_, err = summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	deep := `bench/meta-llama/Llama-3.1-8B-Instruct/vllm: one level too deep: the model id "meta-llama/Llama-3.1-8B-Instruct" holds a "/", which made a directory of each part; ` +
		"give each model one path segment, e.g. meta-llama--Llama-3.1-8B-Instruct (in bash: ${model//\\//--}), under bench/, memory/ and clocks/ alike; ignored"
	if !errors.Is(err, summarize.ErrNoLeg) || !strings.Contains(err.Error(), want+deep) ||
		!strings.Contains(err.Error(), `clocks/meta-llama/Llama-3.1-8B-Instruct/vllm: one level too deep`) ||
		!strings.Contains(err.Error(), `memory/meta-llama/Llama-3.1-8B-Instruct/vllm: one level too deep`) {
		t.Errorf("a model id with a slash: %v", err)
	}
	// Beside legs laid out right, the nested ones are a warning.
	must(t, os.MkdirAll(filepath.Join(root, "bench", llama, "vllm", "r1"), 0o755))
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	if err != nil || !slices.Contains(s.Warnings, deep) {
		t.Errorf("beside a leg: %v, warnings %q", err, s.Warnings)
	}
}

// TestOutputDirInsideTreeIsSkipped: a directory inside TREE holding only
// summarize's outputs is skipped without a warning, so summarizing again
// after --out TREE/summary gives the same bytes; one file more and it is a
// warning again.
func TestOutputDirInsideTreeIsSkipped(t *testing.T) {
	root := copyTree(t, "cross-boot")
	first := run(t, root)
	sum, err := first.SummaryJSON()
	must(t, err)
	for _, dir := range []string{"summary", filepath.Join("nested", "deeper", "out")} {
		must(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		for _, name := range summarize.OutputFiles {
			must(t, os.WriteFile(filepath.Join(root, dir, name), sum, 0o644))
		}
	}
	again := run(t, root)
	if len(again.Warnings) != len(first.Warnings) {
		t.Fatalf("warnings %q after writing outputs inside TREE; want %q", again.Warnings, first.Warnings)
	}
	sum2, err := again.SummaryJSON()
	must(t, err)
	if string(sum2) != string(sum) {
		t.Error("summary.json changed after writing outputs inside TREE")
	}
	must(t, os.WriteFile(filepath.Join(root, "summary", "notes.txt"), []byte("mine"), 0o644))
	if s := run(t, root); !slices.Contains(s.Warnings, "summary: not bench/, memory/ or clocks/; ignored") {
		t.Errorf("a directory with a foreign file is not a warning: %q", s.Warnings)
	}
}

// TestOutDirIsSkippedBeforeItHoldsOutputs: Options.Out inside TREE, made
// empty before the run (and the empty directories on the way to it), is
// skipped without a warning, as it is once it holds the outputs; an empty
// directory that is not on the way to Out stays a warning.
func TestOutDirIsSkippedBeforeItHoldsOutputs(t *testing.T) {
	root := copyTree(t, "cross-boot")
	clean := run(t, root)
	for _, dir := range []string{"summary", filepath.Join("reports", "today")} {
		out := filepath.Join(root, dir)
		must(t, os.MkdirAll(out, 0o755))
		top, _, _ := strings.Cut(dir, string(filepath.Separator))
		warning := top + ": not bench/, memory/ or clocks/; ignored"
		if s := run(t, root); !slices.Contains(s.Warnings, warning) {
			t.Errorf("without --out, an empty %s is not a warning: %q", dir, s.Warnings)
		}
		s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm", Out: out})
		must(t, err)
		if !slices.Equal(s.Warnings, clean.Warnings) {
			t.Errorf("--out %s made empty: warnings %q, want %q", dir, s.Warnings, clean.Warnings)
		}
		// The --out directory is skipped whatever it holds.
		must(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644))
		s, err = summarize.Summarize(root, summarize.Options{Baseline: "vllm", Out: out})
		must(t, err)
		if !slices.Equal(s.Warnings, clean.Warnings) {
			t.Errorf("--out %s holding a note: warnings %q, want %q", dir, s.Warnings, clean.Warnings)
		}
		must(t, os.RemoveAll(filepath.Join(root, top)))
	}
	// Beside the way to --out, an empty directory is still a warning.
	must(t, os.MkdirAll(filepath.Join(root, "reports", "tmp"), 0o755))
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm", Out: filepath.Join(root, "reports", "today")})
	must(t, err)
	if !slices.Contains(s.Warnings, "reports: not bench/, memory/ or clocks/; ignored") {
		t.Errorf("reports/tmp beside --out reports/today: warnings %q", s.Warnings)
	}
}

// TestSiblingWithTheTreesNameIsOutside: a link into /x/tree2 leaves the
// tree /x/tree, though its path begins with the tree's.
func TestSiblingWithTheTreesNameIsOutside(t *testing.T) {
	root := copyTree(t, "cross-boot")
	sibling := root + "2"
	must(t, os.MkdirAll(sibling, 0o755))
	secret := filepath.Join(sibling, "secret.json")
	must(t, os.WriteFile(secret, []byte(`{"peak_gpu_memory_mib": 1.0, "n": 1}`), 0o644))
	p := filepath.Join(root, "memory", llama, "vllm", "r1.summary.json")
	must(t, os.Remove(p))
	must(t, os.Symlink(secret, p))
	b := legOf(t, run(t, root), base)
	if got := reasonOf(t, b, summarize.CodeMemoryInvalid); !strings.Contains(got, "leaves the tree") || b.Memory != nil {
		t.Errorf("memory.invalid %q, memory %+v: %s is outside %s", got, b.Memory, sibling, root)
	}
}

// TestBadArmAsBaseline: an arm check that fails fails the ratio whichever
// side the arm is on: the staircase as ours, and as the baseline.
func TestBadArmAsBaseline(t *testing.T) {
	for _, c := range []struct{ baseline, staircased string }{{"vllm", "fastengine"}, {"fastengine", "fastengine"}} {
		s, err := summarize.Summarize(treesDir+"/staircase", summarize.Options{Baseline: c.baseline})
		must(t, err)
		if len(s.Comparisons) != 1 {
			t.Fatalf("baseline %s: %d comparisons", c.baseline, len(s.Comparisons))
		}
		cmp := s.Comparisons[0]
		var found bool
		for _, r := range cmp.Throughput.Clock.Reasons {
			found = found || r.Code == clocks.CodeStaircase && r.Engine == c.staircased && strings.HasPrefix(r.Message, "arm "+c.staircased+" merged spread 12.17% > 5.0%")
		}
		if !found || cmp.Throughput.BindingEligible || cmp.Memory.BindingEligible || cmp.Throughput.Clock.Established {
			t.Errorf("baseline %s: the staircased arm %s did not refuse the ratio: %+v", c.baseline, c.staircased, cmp.Throughput.Clock.Reasons)
		}
	}
}
