package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// TestImportRefusedExitsTwo: a refused import is exit 2 (an input that
// cannot be read faithfully), names the file, line and column, and leaves
// no file behind; a converted one is exit 0.
func TestImportRefusedExitsTwo(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(log, []byte("timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/07/18 17:00:00.000, 0, [N/A], 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", "UTC", log, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if want := log + `:2:29: clocks.sm: "[N/A]" where a value is required`; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "r1.*")); len(left) != 0 {
		t.Errorf("a refused import wrote %v", left)
	}
	if err := os.WriteFile(log, []byte("timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/07/18 17:00:00.000, 0, 1980, 50\n2026/07/18 17:00:01.000, 0, 1980, 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", "UTC", log, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut); code != ExitOK {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "r1.*")); len(left) != 3 {
		t.Errorf("wrote %v, want the stream, the record and import.json", left)
	}
}

// TestImportCreatesDirectoriesAndMemory: import creates --out's
// directories as record does; into a tree it writes the memory record
// from the log's memory.used, as the sampler writes it, and refuses to
// replace one; a log without memory used says what to log; a write that
// fails names the file, never the temporary file written through.
func TestImportCreatesDirectoriesAndMemory(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.csv")
	data := "timestamp, index, clocks.sm [MHz], utilization.gpu [%], memory.used [MiB]\n" +
		"2026/07/18 17:00:00.000, 0, 1980, 50, 70000\n2026/07/18 17:00:00.000, 1, 1980, 50, 71000\n" +
		"2026/07/18 17:00:01.000, 0, 1980, 50, 72000\n2026/07/18 17:00:01.000, 1, 1980, 50, 100\n"
	if err := os.WriteFile(log, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "new", "tree")
	out := filepath.Join(tree, "clocks", "m", "e", "r1")
	code, _, stderr := importCSV(log, "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mem := filepath.Join(tree, "memory", "m", "e", "r1.summary.json")
	if got, err := os.ReadFile(mem); err != nil || string(got) != `{"peak_gpu_memory_mib":141000,"peak_host_rss_mib":null,"n":2}`+"\n" {
		t.Errorf("memory record %q, %v", got, err)
	}
	if want := "clockgate import: memory record " + mem + ": peak GPU memory 141000 MiB over 2 readings (host RSS not recorded)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	// Never replaced: a second import into r2 whose memory record exists
	// is refused before anything is written.
	mem2 := filepath.Join(tree, "memory", "m", "e", "r2.summary.json")
	os.WriteFile(mem2, []byte("{}"), 0o644)
	code, _, stderr = importCSV(log, "--out", filepath.Join(tree, "clocks", "m", "e", "r2"))
	if code != ExitUsage || !strings.Contains(stderr, mem2+" already exists; import never replaces a file") {
		t.Errorf("existing memory record: exit %d, %s", code, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tree, "clocks", "m", "e", "r2.*")); len(left) != 0 {
		t.Errorf("wrote %v", left)
	}

	// Without memory.used: no memory record, and what to log.
	noMem := filepath.Join(dir, "y.csv")
	os.WriteFile(noMem, []byte("timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/07/18 17:00:00.000, 0, 1980, 50\n2026/07/18 17:00:01.000, 0, 1980, 50\n"), 0o644)
	code, _, stderr = importCSV(noMem, "--out", filepath.Join(tree, "clocks", "m", "e", "r3"))
	if want := "clockgate import: no memory record written, so the leg will be memory.missing: the log has no GPU memory used; log memory.used in the --query-gpu list"; code != ExitOK || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	if _, err := os.Lstat(filepath.Join(tree, "memory", "m", "e", "r3.summary.json")); err == nil {
		t.Error("a memory record written from a log without memory used")
	}

	// A name the file system takes but its temporary file's would not
	// (over 255 bytes): the error names the file only.
	long := filepath.Join(dir, strings.Repeat("r", 235))
	code, _, stderr = importCSV(log, "--out", long)
	if code != ExitUsage || !strings.Contains(stderr, "import: cannot write "+long+".samples.jsonl: file name too long") || strings.Contains(stderr, ".tmp-") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if left, _ := filepath.Glob(long + ".*"); len(left) != 0 {
		t.Errorf("a failed import left %v", left)
	}
}

func importCSV(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(append([]string{"import", "--format", "nvidia-smi-csv", "--tz", "UTC"}, args...), nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestImportedLegHostNotRecorded: import writes no host stream and no host
// block (no source it reads has host data, SPEC §12.2): legs imported from
// a real nvidia-smi log are judged as before, their host checks need their
// evidence and are never a reason by absence, and each arm's line in the
// report says "host: not recorded".
func TestImportedLegHostNotRecorded(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "tree")
	log := filepath.Join("..", "..", "testdata", "smi-real", "h100-vllm-qwen3-8b-tp1", "capture.csv")
	for _, engine := range []string{"fastengine", "vllm"} {
		if code, _, stderr := importCSV(log, "--out", filepath.Join(tree, "clocks", "qwen3-8b", engine, "r1")); code != ExitOK {
			t.Fatalf("import %s: exit %d: %s", engine, code, stderr)
		}
		rec, err := os.ReadFile(filepath.Join(tree, "clocks", "qwen3-8b", engine, "r1.summary.json"))
		if err != nil || bytes.Contains(rec, []byte(`"host"`)) {
			t.Fatalf("imported record with a host block, or none: %v\n%s", err, rec)
		}
	}
	if hosts, _ := filepath.Glob(filepath.Join(tree, "clocks", "*", "*", "*.host.jsonl")); len(hosts) > 0 {
		t.Fatalf("import wrote host streams %v", hosts)
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	Main([]string{"summarize", "--out", out, tree}, nil, &stdout, &stderr)
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"\nfastengine host: not recorded\n", "\nvllm host: not recorded\n", "qwen3-8b"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, file := range []string{"report.md", "summary.json", "all-runs.json"} {
		data, _ := os.ReadFile(filepath.Join(out, file))
		if bytes.Contains(data, []byte("host.")) || bytes.Contains(data, []byte(clocks.CodeInvalid)) {
			t.Errorf("%s names a host code or %s for imported legs:\n%s", file, clocks.CodeInvalid, data)
		}
	}
}
