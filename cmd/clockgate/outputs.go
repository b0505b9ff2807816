package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// output is one file summarize --out writes: its name in DIR, and what
// writes its bytes, given the directory that holds the outputs written
// before it (to read one back rather than make it again).
type output struct {
	name  string
	write func(w io.Writer, staged string) error
}

// outputStep is called before each step of writeOutputs with the step's
// name ("stage", "write <name>", "commit", "cleanup"); an error fails that
// step as if the filesystem had refused it. Tests set it to inject failures
// and delays; it does nothing otherwise.
var outputStep = func(step string) error { return nil }

// stagingInfix marks writeOutputs' sibling directories: .<DIR>.clockgate-*.
const stagingInfix = ".clockgate-"

// writeOutputs replaces the outputs in dir with files as one transaction:
// a reader of dir, and dir after any failure or interruption, holds either
// every old output or every new one, byte for byte, never a mix and never a
// partial file.
//
// The files are written and synced into a fresh sibling directory, which
// then takes dir's place in one rename: exchanged with dir atomically
// (renameat2 RENAME_EXCHANGE) when dir exists, renamed onto it when it does
// not. The old outputs, now in the sibling, are removed. A failure before
// that rename removes the sibling and leaves dir as it was. SIGINT and
// SIGTERM are held while the transaction runs: before the rename they roll
// it back, after it they let it finish; either way the error says which,
// with exit status 128+N. Only SIGKILL or a crash can leave a sibling
// .<DIR>.clockgate-* behind, and dir is then still whole.
//
// files must be exactly summarizeOutputs, and dir may hold nothing but
// those names (checkOutDir): they are the only files it replaces.
func writeOutputs(dir string, files []output) error {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	if a, b := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(summarizeOutputs)); !slices.Equal(a, b) {
		return fmt.Errorf("--out: writing %s, but summarize's outputs are %s", strings.Join(names, ", "), strings.Join(summarizeOutputs, ", "))
	}

	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)
	interrupted := func() error {
		select {
		case s := <-sigc:
			sig, _ := s.(syscall.Signal)
			return &exitError{code: 128 + int(sig), err: fmt.Errorf(
				"--out %s: %v before the new outputs were in place; rolled back, %s is as it was", dir, s, dir)}
		default:
			return nil
		}
	}
	// step comes before each operation; a signal is looked for last, as
	// close to the operation as it can be.
	step := func(name string) error {
		if err := outputStep(name); err != nil {
			return usageErr("--out %s: %s: %v", dir, name, err)
		}
		return interrupted()
	}

	if err := checkOutDir(dir); err != nil {
		return err
	}
	// The transaction renames the directory dir names; through a symbolic
	// link that is the link's target, which must stay where it is.
	target := dir
	exists := false
	mode := fs.FileMode(0o755)
	if st, err := os.Stat(dir); err == nil {
		exists = true
		mode = st.Mode().Perm()
		if target, err = filepath.EvalSymlinks(dir); err != nil {
			return usageErr("--out %s: %v", dir, pathErrText(err))
		}
	}
	parent, base := filepath.Split(filepath.Clean(target))
	if parent == "" {
		parent = "."
	}
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return usageErr("--out %s: want a directory with a name of its own", dir)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return usageErr("--out %s: %v", dir, pathErrText(err))
	}

	if err := step("stage"); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(parent, "."+base+stagingInfix+"*")
	if err != nil {
		return usageErr("--out %s: %v", dir, err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staging)
		}
	}()
	for _, f := range files {
		if err := step("write " + f.name); err != nil {
			return err
		}
		write := func(w io.Writer) error { return f.write(w, staging) }
		if err := writeSynced(filepath.Join(staging, f.name), write); err != nil {
			return usageErr("--out %s: %v", dir, err)
		}
	}
	if err := os.Chmod(staging, mode); err != nil {
		return usageErr("--out %s: %v", dir, err)
	}
	if err := syncDir(staging); err != nil {
		return usageErr("--out %s: %v", dir, err)
	}

	if err := step("commit"); err != nil {
		return err
	}
	if exists {
		// Checked again just before the swap: the old directory is removed
		// after it, and must hold nothing but outputs.
		if err := checkOutDir(target); err != nil {
			return err
		}
		err = exchangeDirs(staging, target)
	} else {
		// rename(2) onto a path that does not exist, or is an empty
		// directory, is atomic; onto anything else it fails.
		err = os.Rename(staging, target)
	}
	if err != nil {
		return usageErr("--out %s: %v", dir, err)
	}
	committed = true
	syncDir(parent)

	// The new outputs are in place; what is left is removing the old ones,
	// which a signal does not interrupt.
	var cleanupErr error
	if exists {
		if cleanupErr = outputStep("cleanup"); cleanupErr == nil {
			cleanupErr = removeOutputs(staging)
		}
	}
	if cleanupErr != nil {
		return usageErr("--out %s: the new outputs are in place, but the previous ones are left in %s: %v", dir, staging, cleanupErr)
	}
	select {
	case s := <-sigc:
		sig, _ := s.(syscall.Signal)
		return &exitError{code: 128 + int(sig), err: fmt.Errorf("--out %s: %v after the new outputs were in place; they are complete", dir, s)}
	default:
	}
	return nil
}

// writeSynced creates path, writes it with write, syncs and closes it.
func writeSynced(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// removeOutputs removes the previous outputs, moved out of DIR by the
// exchange, and then their directory. It removes only output names: a file
// that appeared there since DIR was checked stays, and so does the
// directory, which the error names.
func removeOutputs(old string) error {
	for _, n := range summarizeOutputs {
		if err := os.Remove(filepath.Join(old, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.Remove(old)
}

// renameBoth exchanges a and b with two renames through a third name, for
// systems without an atomic exchange: b is missing for the moment between
// them, and is restored if the second rename fails.
func renameBoth(a, b string) error {
	tmp := a + ".old"
	if err := os.Rename(b, tmp); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		if rerr := os.Rename(tmp, b); rerr != nil {
			return fmt.Errorf("%v; and restoring %s from %s: %v", err, b, tmp, rerr)
		}
		return err
	}
	return os.Rename(tmp, a)
}

// renameError is a failed exchange of two directories.
type renameError struct {
	a, b string
	err  error
}

func (e *renameError) Error() string {
	return "exchanging " + e.a + " and " + e.b + ": " + e.err.Error()
}

func (e *renameError) Unwrap() error { return e.err }
