// Package atomicfile writes files so that a reader sees either the old
// content or the new, never a mix and never a partial file.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TempOverhead is how many bytes longer than its target's name the
// temporary file's name can be: a leading dot, ".tmp-" and up to 10 random
// digits (os.CreateTemp's uint32). A target whose name is longer than the
// file system's name limit minus TempOverhead cannot be written.
const TempOverhead = 1 + len(".tmp-") + 10

// ErrExists says WriteNew found its target already there.
var ErrExists = fs.ErrExist

// WriteFile writes data to a temporary file beside path, syncs it, and
// renames it over path. On any error the temporary file is removed and path
// is left as it was.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	return write(path, data, perm, os.Rename)
}

// WriteNew is WriteFile that never replaces: when path already exists it
// fails with an error wrapping ErrExists and leaves path as it was. The
// temporary file is linked to path, which fails rather than replace.
func WriteNew(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, func(tmp, path string) error {
		if err := os.Link(tmp, path); err != nil {
			var le *os.LinkError
			if errors.As(err, &le) {
				err = le.Err
			}
			return err
		}
		return os.Remove(tmp)
	})
}

func write(path string, data []byte, perm os.FileMode, place func(tmp, path string) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = place(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
