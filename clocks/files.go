package clocks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxJSONBytes bounds one JSON evidence file; a larger one is refused
// without being read whole.
const MaxJSONBytes = 16 << 20

// ErrNotRegular says a path holds a directory, FIFO, device or socket where
// a file belongs.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge says a JSON evidence file is larger than MaxJSONBytes.
var ErrTooLarge = fmt.Errorf("larger than %d MiB; refused unread", MaxJSONBytes>>20)

// OpenRegular opens path for reading only when it is a regular file. It
// opens without blocking, so a FIFO is refused rather than waited on. Its
// errors are *fs.PathError naming path.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(st.Mode()))}
	}
	return f, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// ReadJSONFile reads a regular file of at most MaxJSONBytes. Its errors
// are *fs.PathError naming path; a larger file is ErrTooLarge, refused
// before a byte of it is read. What it allocates is about the file's size.
func ReadJSONFile(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Size() > MaxJSONBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	// The file may grow while it is read: the limit still holds.
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxJSONBytes+1)); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if buf.Len() > MaxJSONBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	return buf.Bytes(), nil
}
