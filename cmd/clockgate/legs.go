package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

const (
	recordSuffix = ".summary.json"
	streamSuffix = ".samples.jsonl"
)

// streamBeside returns the stream path that belongs to a record path:
// rN.summary.json → rN.samples.jsonl.
func streamBeside(record string) (string, error) {
	if !strings.HasSuffix(record, recordSuffix) {
		return "", fmt.Errorf("%s: a clock record is named PREFIX%s, with PREFIX%s beside it", record, recordSuffix, streamSuffix)
	}
	return strings.TrimSuffix(record, recordSuffix) + streamSuffix, nil
}

// loadLegs reads each record and its stream. Legs are named by their file
// (r1.summary.json → r1), or by their whole path where two names collide.
func loadLegs(records []string) ([]*clocks.Leg, error) {
	names := make([]string, len(records))
	seen := map[string]int{}
	for i, r := range records {
		names[i] = strings.TrimSuffix(filepath.Base(r), recordSuffix)
		seen[names[i]]++
	}
	legs := make([]*clocks.Leg, len(records))
	for i, r := range records {
		if clocks.IsMultiHostLeg(r) {
			// A multi-host leg's directory (SPEC §12.3), with the client's
			// marks where it has them.
			dir := filepath.ToSlash(filepath.Clean(r))
			lf := clocks.LegFiles{Name: filepath.Base(dir), RecordPath: r}
			if marks := clocks.MultiHostPointsPath(dir); lstatOK(marks) {
				// Read as summarize reads them, so that check and
				// summarize give the leg the same codes.
				lf.Points = &clocks.PointEvidence{}
				summarize.ReadMarks(lf.Points, marks, marks)
			}
			legs[i] = clocks.LoadMultiHostLeg(lf, dir)
			continue
		}
		stream, err := streamBeside(r)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if seen[names[i]] > 1 {
			names[i] = strings.TrimSuffix(r, recordSuffix)
		}
		legs[i] = clocks.LoadLeg(clocks.LegFiles{Name: names[i], RecordPath: r, StreamPath: stream})
	}
	return legs, nil
}

// unreadable reports the inputs named on the command line that could not
// be read at all: a missing record, or a path that is not a regular file.
func unreadable(legs []*clocks.Leg) []string {
	var out []string
	for _, l := range legs {
		switch {
		case l.Unreadable != nil:
			out = append(out, l.Unreadable.Error())
		case len(l.Reasons) == 1 && l.Reasons[0].Code == clocks.CodeMissing:
			out = append(out, l.Reasons[0].Message)
		}
	}
	return out
}

// lstatOK reports whether p names something, a file or not: a points file
// that is there but cannot be read is a warning, never skipped.
func lstatOK(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
