package benchfmt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/clockgate/clockgate/clocks"
)

// ReadResult reads the bench result file at path, named rel in
// messages, as summarize reads a leg's: its valid points, and every defect
// (each bench.invalid and bench.failed_requests message, or why the file
// holds no result). The error is for a file that cannot be read at all.
func ReadResult(path, rel string) (points []Point, invalid, failed []string, err error) {
	f, err := clocks.OpenRegular(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %v", rel, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %v", rel, unwrapPath(err))
	}
	if st.Size() > MaxBenchBytes {
		return nil, nil, nil, fmt.Errorf("%s: %d bytes, larger than %d MiB (the bench file cap)", rel, st.Size(), MaxBenchBytes>>20)
	}
	bf := Read(rel, &io.LimitedReader{R: f, N: MaxBenchBytes + 1})
	if bf.NotResult != "" {
		return nil, []string{bf.NotResult}, nil, nil
	}
	return bf.Points, bf.Invalid, bf.Failed, nil
}

// unwrapPath drops an fs.PathError's path: the message names the file
// already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
