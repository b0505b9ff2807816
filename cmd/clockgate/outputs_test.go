package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The trees whose outputs stand for the old and the new ones: their bytes
// differ in every file, and the new one's leg rows outgrow its
// summary.json (TestOutputsFileSizeLimit fails each on its own).
var (
	oldTree = filepath.Join("..", "..", "testdata", "trees", "clean-grid")
	newTree = filepath.Join("..", "..", "testdata", "trees", "staircase")
)

// snapshot reads every entry of dir: each must be a regular file. It
// returns nil when dir does not exist.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range es {
		if !e.Type().IsRegular() {
			t.Fatalf("%s/%s is %v, not a regular file", dir, e.Name(), e.Type())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

// describe names the set dir holds, for failure messages.
func describe(got, oldSet, newSet map[string][]byte) string {
	switch {
	case got == nil:
		return "no directory"
	case sameFiles(got, oldSet):
		return "the old outputs"
	case sameFiles(got, newSet):
		return "the new outputs"
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(got)) {
		which := "neither"
		switch {
		case bytes.Equal(got[n], oldSet[n]):
			which = "old"
		case bytes.Equal(got[n], newSet[n]):
			which = "new"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %d bytes)", n, which, len(got[n])))
	}
	return "a mix: " + strings.Join(parts, ", ")
}

// leftovers lists the staging directories writeOutputs left beside dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+stagingInfix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// summarizeOut runs clockgate summarize --out dir tree in this process and
// returns its exit code and stderr.
func summarizeOut(dir, tree string) (int, string) {
	var stderr bytes.Buffer
	code := Main([]string{"summarize", "--out", dir, tree}, strings.NewReader(""), io.Discard, &stderr)
	return code, stderr.String()
}

// outputSets returns the files summarize --out writes for the old and the
// new tree, and the steps a write goes through.
func outputSets(t *testing.T) (oldSet, newSet map[string][]byte, steps []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	oldSet = snapshot(t, dir)
	setStep(t, func(s string) error { steps = append(steps, s); return nil })
	if code, stderr := summarizeOut(dir, newTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	setStep(t, nil)
	newSet = snapshot(t, dir)
	if len(oldSet) != len(summarizeOutputs) || len(newSet) != len(summarizeOutputs) {
		t.Fatalf("outputs %v and %v, want %v", slices.Collect(maps.Keys(oldSet)), slices.Collect(maps.Keys(newSet)), summarizeOutputs)
	}
	for n := range oldSet {
		if bytes.Equal(oldSet[n], newSet[n]) {
			t.Fatalf("%s is the same for both trees; the test could not tell old from new", n)
		}
	}
	return oldSet, newSet, steps
}

func setStep(t *testing.T, fn func(string) error) {
	t.Helper()
	prev := outputStep
	if fn == nil {
		fn = func(string) error { return nil }
	}
	outputStep = fn
	t.Cleanup(func() { outputStep = prev })
}

// TestOutputsFailAtEveryStep fails the write at each of its steps, with
// DIR absent and with DIR holding the old outputs, and checks that DIR is
// then exactly what it was, byte for byte, and that nothing is left beside
// it.
func TestOutputsFailAtEveryStep(t *testing.T) {
	oldSet, newSet, steps := outputSets(t)
	want := []string{"stage"}
	for _, n := range summarizeOutputs {
		want = append(want, "write "+n)
	}
	want = append(want, "commit", "cleanup")
	if !slices.Equal(steps, want) {
		t.Fatalf("steps %q, want %q", steps, want)
	}
	for _, exists := range []bool{false, true} {
		for _, failAt := range steps {
			t.Run(fmt.Sprintf("exists=%v/%s", exists, failAt), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "out")
				before := map[string][]byte(nil)
				if exists {
					if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					before = snapshot(t, dir)
				}
				setStep(t, func(s string) error {
					if s == failAt {
						return syscall.ENOSPC
					}
					return nil
				})
				code, stderr := summarizeOut(dir, newTree)
				got := snapshot(t, dir)
				if failAt == "cleanup" {
					if !exists {
						// Nothing to clean up: no old outputs, no step.
						if code != ExitOK || !sameFiles(got, newSet) {
							t.Fatalf("exit %d (%s), DIR holds %s; want 0 and the new outputs", code, stderr, describe(got, oldSet, newSet))
						}
						return
					}
					// The new outputs stand; the old ones are left where
					// the error says, whole.
					left := leftovers(t, dir)
					if code != ExitUsage || !sameFiles(got, newSet) || len(left) != 1 ||
						!strings.Contains(stderr, "the new outputs are in place, but the previous ones are left in "+left[0]+": no space left on device") {
						t.Fatalf("exit %d, stderr %q, DIR holds %s, left %q", code, stderr, describe(got, oldSet, newSet), left)
					}
					if kept := snapshot(t, left[0]); !sameFiles(kept, oldSet) {
						t.Errorf("the leftover holds %s, want the old outputs", describe(kept, oldSet, newSet))
					}
					return
				}
				wantErr := fmt.Sprintf("clockgate: --out %s: %s: no space left on device\n", dir, failAt)
				if code != ExitUsage || stderr != wantErr {
					t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, ExitUsage, wantErr)
				}
				if !sameFiles(got, before) {
					t.Errorf("after a failure at %q DIR holds %s; want %s", failAt, describe(got, oldSet, newSet), describe(before, oldSet, newSet))
				}
				if left := leftovers(t, dir); len(left) > 0 {
					t.Errorf("left behind: %q", left)
				}
			})
		}
	}
}

// TestOutputsRecheckBeforeCommit: a file that appears in DIR while the
// outputs are written is not overwritten, and not removed with the old
// outputs; the write is refused and rolled back.
func TestOutputsRecheckBeforeCommit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := snapshot(t, dir)
	setStep(t, func(s string) error {
		if s == "commit" {
			return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		}
		return nil
	})
	code, stderr := summarizeOut(dir, newTree)
	if code != ExitUsage || !strings.Contains(stderr, "refusing to write beside "+filepath.Join(dir, "notes.txt")) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	before["notes.txt"] = []byte("mine")
	if got := snapshot(t, dir); !sameFiles(got, before) {
		t.Errorf("DIR changed: %v", slices.Sorted(maps.Keys(got)))
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

// TestOutputsThroughSymlink: DIR that is a symbolic link to a directory
// stays a link, and its target gets the new outputs.
func TestOutputsThroughSymlink(t *testing.T) {
	oldSet, newSet, _ := outputSets(t)
	base := t.TempDir()
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	if code, stderr := summarizeOut(real, oldTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	if code, stderr := summarizeOut(link, newTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if target, err := os.Readlink(link); err != nil || target != "real" {
		t.Fatalf("link now %q, %v; want it kept, pointing at real", target, err)
	}
	if got := snapshot(t, real); !sameFiles(got, newSet) {
		t.Errorf("target holds %s", describe(got, oldSet, newSet))
	}
	if es, _ := os.ReadDir(base); len(es) != 2 {
		t.Errorf("%d entries beside the outputs, want real and link", len(es))
	}
}

func TestOutputsMustBeSummarizesOwn(t *testing.T) {
	err := writeOutputs(filepath.Join(t.TempDir(), "out"), []output{{"summary.json", nil}, {"extra.html", nil}})
	if err == nil || !strings.Contains(err.Error(), "writing summary.json, extra.html, but summarize's outputs are "+strings.Join(summarizeOutputs, ", ")) {
		t.Fatalf("err %v", err)
	}
}

// The helper process: the test binary run again by the tests below, with
// CLOCKGATE_OUTPUTS_HELPER set. It runs clockgate with the arguments after
// the test flags' "--" and writes its exit code and
// stderr into CLOCKGATE_OUTPUTS_RESULT; it returns normally, so the test
// binary cleans up after itself.
//
//   - CLOCKGATE_OUTPUTS_PAUSE=step: at that step it prints "paused" and
//     waits, at most 10 s, for SIGINT or SIGTERM before going on.
//   - CLOCKGATE_OUTPUTS_FSIZE=n: it first lowers RLIMIT_FSIZE to n bytes, so
//     a larger write fails with EFBIG, as on a full disk; root is no
//     exception.
func TestOutputsHelperProcess(t *testing.T) {
	if os.Getenv("CLOCKGATE_OUTPUTS_HELPER") == "" {
		t.Skip("run by the tests that interrupt a write")
	}
	if n := os.Getenv("CLOCKGATE_OUTPUTS_FSIZE"); n != "" {
		limit, _ := strconv.ParseUint(n, 10, 64)
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
			t.Fatal(err)
		}
	}
	if pause := os.Getenv("CLOCKGATE_OUTPUTS_PAUSE"); pause != "" {
		outputStep = func(s string) error {
			if s != pause {
				return nil
			}
			c := make(chan os.Signal, 1)
			signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(c)
			fmt.Println("paused")
			select {
			case <-c:
			case <-time.After(10 * time.Second):
			}
			return nil
		}
	}
	var stderr bytes.Buffer
	code := Main(flag.Args(), strings.NewReader(""), io.Discard, &stderr)
	if err := os.WriteFile(os.Getenv("CLOCKGATE_OUTPUTS_RESULT"), fmt.Appendf(nil, "%d\n%s", code, stderr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// helper starts the helper process running clockgate with args, with env
// added; it returns the command, its stdout and the result file.
func helper(t *testing.T, args []string, env ...string) (*exec.Cmd, *bufio.Reader, string) {
	t.Helper()
	result := filepath.Join(t.TempDir(), "result")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestOutputsHelperProcess$", "-test.count=1", "--"}, args...)...)
	cmd.Env = append(os.Environ(), append(env, "CLOCKGATE_OUTPUTS_HELPER=1", "CLOCKGATE_OUTPUTS_RESULT="+result)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, bufio.NewReader(out), result
}

// waitHelper waits, at most 20 s, for the helper to exit, and returns the
// exit code and stderr of the clockgate it ran.
func waitHelper(t *testing.T, cmd *exec.Cmd, out *bufio.Reader, result string) (int, string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		io.Copy(io.Discard, out)
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("helper process: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("helper process did not exit")
	}
	b, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	codeText, stderr, _ := strings.Cut(string(b), "\n")
	code, _ := strconv.Atoi(codeText)
	return code, stderr
}

// TestOutputsSIGINT interrupts a real process with SIGINT at three points
// of the write: while writing, before the swap, and after it; and with
// SIGTERM while writing. Before the swap it rolls back; after it, it
// finishes; DIR holds one whole set either way, and nothing is left beside
// it.
func TestOutputsSIGINT(t *testing.T) {
	oldSet, newSet, _ := outputSets(t)
	for _, c := range []struct {
		pause string
		sig   syscall.Signal
		want  map[string][]byte
		msg   string
	}{
		{"write all-runs.json", syscall.SIGINT, oldSet, "interrupt before the new outputs were in place; rolled back"},
		{"commit", syscall.SIGINT, oldSet, "interrupt before the new outputs were in place; rolled back"},
		{"cleanup", syscall.SIGINT, newSet, "interrupt after the new outputs were in place; they are complete"},
		{"write report.md", syscall.SIGTERM, oldSet, "terminated before the new outputs were in place; rolled back"},
	} {
		t.Run(c.pause+"/"+c.sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			cmd, out, result := helper(t, []string{"summarize", "--out", dir, newTree}, "CLOCKGATE_OUTPUTS_PAUSE="+c.pause)
			line, err := out.ReadString('\n')
			if err != nil || line != "paused\n" {
				t.Fatalf("helper said %q, %v; want paused", line, err)
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code, stderr := waitHelper(t, cmd, out, result)
			if code != 128+int(c.sig) || !strings.Contains(stderr, "--out "+dir+": "+c.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, 128+int(c.sig), c.msg)
			}
			if got := snapshot(t, dir); !sameFiles(got, c.want) {
				t.Errorf("DIR holds %s; want %s", describe(got, oldSet, newSet), describe(c.want, oldSet, newSet))
			}
			if left := leftovers(t, dir); len(left) > 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
}

// TestOutputsFileSizeLimit makes a real write fail part-way: under
// RLIMIT_FSIZE (ulimit -f) the second output is larger than the limit and
// its write fails with EFBIG, as a full disk would, even as root.
//
// all-runs.json's leg rows and the pictures' traces wait in temporary
// files while the tree is read, so two limits are tried: one that fails
// all-runs.json itself (its rows, without the comparisons before them,
// still fit), and one that fails a temporary file, before any output is
// written: whichever of the two grows past it first, as legs are read on
// every core. Either way DIR holds the old outputs.
func TestOutputsFileSizeLimit(t *testing.T) {
	oldSet, newSet, _ := outputSets(t)
	for _, c := range []struct {
		limit int
		want  []string // one of
	}{
		{len(newSet["all-runs.json"]) - 1, []string{"all-runs.json: file too large"}},
		{len(newSet["summary.json"]) + 1, []string{"all-runs.json's leg rows: file too large", "the clock pictures' traces: file too large"}},
	} {
		if len(newSet["summary.json"]) >= c.limit {
			t.Fatalf("summary.json (%d bytes) must fit the limit %d", len(newSet["summary.json"]), c.limit)
		}
		dir := filepath.Join(t.TempDir(), "out")
		if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		cmd, out, result := helper(t, []string{"summarize", "--out", dir, newTree}, "CLOCKGATE_OUTPUTS_FSIZE="+strconv.Itoa(c.limit))
		code, stderr := waitHelper(t, cmd, out, result)
		if code != ExitUsage || !slices.ContainsFunc(c.want, func(w string) bool { return strings.Contains(stderr, w) }) {
			t.Errorf("limit %d: exit %d, stderr %q; want %d and %s", c.limit, code, stderr, ExitUsage, c.want)
		}
		if got := snapshot(t, dir); !sameFiles(got, oldSet) {
			t.Errorf("limit %d: DIR holds %s; want the old outputs", c.limit, describe(got, oldSet, newSet))
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("limit %d: left behind: %q", c.limit, left)
		}
	}
}

// TestOutputsDirMode: a DIR summarize creates is 0755, readable as any
// directory (the staging directory is made 0700); one that exists keeps
// its mode.
func TestOutputsDirMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("a new DIR has mode %v (%v), want 0755", st.Mode().Perm(), err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if code, stderr := summarizeOut(dir, newTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o750 {
		t.Fatalf("a DIR of mode 0750 has mode %v after a rewrite, want it kept", st.Mode().Perm())
	}
}

// TestOutputsCleanupLeavesAForeignFile: a file that appears among the old
// outputs after the exchange, while they are removed, is not removed with
// them: the new outputs stay in place and the error names what is left.
func TestOutputsCleanupLeavesAForeignFile(t *testing.T) {
	_, newSet, _ := outputSets(t)
	dir := filepath.Join(t.TempDir(), "out")
	if code, stderr := summarizeOut(dir, oldTree); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var foreign string
	setStep(t, func(s string) error {
		if s == "cleanup" {
			left := leftovers(t, dir)
			if len(left) != 1 {
				return fmt.Errorf("want the old outputs beside DIR, found %q", left)
			}
			foreign = filepath.Join(left[0], "notes.txt")
			return os.WriteFile(foreign, []byte("mine"), 0o644)
		}
		return nil
	})
	code, stderr := summarizeOut(dir, newTree)
	if code != ExitUsage || !strings.Contains(stderr, "the new outputs are in place, but the previous ones are left in") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if got := snapshot(t, dir); !sameFiles(got, newSet) {
		t.Errorf("DIR does not hold the new outputs")
	}
	if b, err := os.ReadFile(foreign); err != nil || string(b) != "mine" {
		t.Errorf("the foreign file %s: %q, %v; want it kept", foreign, b, err)
	}
	for _, n := range summarizeOutputs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(foreign), n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("old output %s not removed: %v", n, err)
		}
	}
}

// TestRenameBoth: the fallback for systems without an atomic exchange
// swaps two directories, and restores the second when the swap fails.
func TestRenameBoth(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "who"), []byte(filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := renameBoth(a, b); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]string{a: "b", b: "a"} {
		if got, err := os.ReadFile(filepath.Join(d, "who")); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %s's", d, got, err, want)
		}
	}
	if es, _ := os.ReadDir(base); len(es) != 2 {
		t.Errorf("%d entries left, want a and b", len(es))
	}
	// The first rename of the swap cannot happen when a is missing: b
	// must be where it was, whole.
	if err := renameBoth(filepath.Join(base, "missing"), b); err == nil {
		t.Fatal("swapping with a missing directory succeeded")
	}
	if got, err := os.ReadFile(filepath.Join(b, "who")); err != nil || string(got) != "a" {
		t.Errorf("after a failed swap b holds %q (%v)", got, err)
	}
	if _, err := os.Stat(filepath.Join(base, "missing.old")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed swap left missing.old behind")
	}
}
