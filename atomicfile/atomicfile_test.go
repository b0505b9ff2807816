package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r1.summary.json")
	for _, content := range []string{"old\n", "new\n"} {
		if err := WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: the rename fails after the temporary file
	// was written, and the temporary file must be gone.
	target := filepath.Join(dir, "out")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(target, []byte("x"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), target+": ") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out" {
		t.Fatalf("left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}

// TestWriteFileBareNameBesideItself: a bare file name is written through
// a temporary file in the current directory, never in $TMPDIR, which may
// be another filesystem (tmpfs under /dev/shm) that rename(2) cannot
// cross.
func TestWriteFileBareNameBesideItself(t *testing.T) {
	shm := "/dev/shm"
	if st, err := os.Stat(shm); err != nil || !st.IsDir() {
		t.Skipf("no %s to stand for another filesystem", shm)
	}
	dir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(shm, &b) != nil || a.Dev == b.Dev {
		t.Skipf("%s and %s are one filesystem here; the test needs two", dir, shm)
	}
	tmp, err := os.MkdirTemp(shm, "atomicfile-test-")
	if err != nil {
		t.Skipf("cannot write under %s: %v", shm, err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	t.Chdir(dir)
	if err := WriteFile("r1.summary.json", []byte("{}\n"), 0o644); err != nil {
		t.Fatalf("a bare name under TMPDIR=%s: %v", tmp, err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "r1.summary.json")); err != nil || string(got) != "{}\n" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left in TMPDIR: %v", es)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d entries beside the file, want it alone", len(es))
	}
}

// TestWriteNewNeverReplaces: WriteNew writes a new file, and refuses, with
// ErrExists and nothing left behind, a path that exists.
func TestWriteNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r1.summary.json")
	if err := WriteNew(p, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteNew(p, []byte("second\n"), 0o644)
	if !errors.Is(err, ErrExists) || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "first\n" {
		t.Fatalf("the existing file changed: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestTempOverhead: the temporary name is at most TempOverhead bytes longer
// than its target's, so a target of the longest name that leaves room is
// written (on a file system with 255-byte names, NAME_MAX on Linux).
func TestTempOverhead(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("a", 255-TempOverhead)
	if err := WriteNew(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
		t.Fatalf("a %d-byte name: %v", len(name), err)
	}
}
