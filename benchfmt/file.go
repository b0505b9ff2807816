package benchfmt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

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

// agg_*.json are InferenceX's aggregates over a sweep's points.
const inferenceXAggPrefix = "agg_"

// ReadFile reads the bench result file rel of a leg through open: vLLM's
// and SGLang's files streamed, a GuideLLM report read whole, InferenceX's
// agg_*.json refused naming why. The error is for a file that cannot be
// read at all: not a regular file, unreadable, or larger than
// MaxBenchBytes (refused before a byte is read).
func ReadFile(open Opener, rel string, opt Options) (File, error) {
	if name := path.Base(rel); strings.HasPrefix(name, inferenceXAggPrefix) && strings.HasSuffix(name, ".json") {
		return File{Invalid: []string{fmt.Sprintf("%s: an InferenceX aggregate (agg_*.json) over a sweep's points: it carries no window and no totals, so no point of it can be judged; keep the per-point result files (benchmark_serving.py --save-result) in the leg instead", rel)}}, nil
	}
	f, err := open(rel)
	if err != nil {
		return File{}, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), HintUnread)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("%s: %v; %s", rel, unwrapPath(err), HintUnread)
	}
	if st.Size() > MaxBenchBytes {
		return File{}, fmt.Errorf("%s: %d bytes, larger than %d MiB (the bench file cap); refused unread: save one file per point, or rerun without --save-detailed",
			rel, st.Size(), MaxBenchBytes>>20)
	}
	// A file that grows while it is read is cut at the cap, and refused.
	lr := &io.LimitedReader{R: f, N: MaxBenchBytes + 1}
	bf := Read(rel, lr)
	if lr.N == 0 {
		return File{}, fmt.Errorf("%s: grew past %d MiB (the bench file cap) while it was read; refused: summarize the tree once the benchmark has stopped writing it (save one file per point, or rerun without --save-detailed)",
			rel, MaxBenchBytes>>20)
	}
	if !bf.report {
		return bf, nil
	}
	data, err := readWhole(open, rel)
	if err != nil {
		return File{}, err
	}
	return ReadGuideLLM(rel, data), nil
}
