package sampler

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// ChronycTimeout bounds one `chronyc -c tracking` call: chronyc answers a
// local chronyd in milliseconds, and gives up on its own after its
// retries; a sampler does not wait on it past this.
const ChronycTimeout = 3 * time.Second

// ReadTimeSync reads the host's time synchronisation now: adjtimex, and
// `chronyc -c tracking` where chronyc (looked up in PATH) exists. It
// never fails: what cannot be read is said in the reading, and judged
// unknown.
func ReadTimeSync(ctx context.Context) *clocks.TimeSync {
	ts := &clocks.TimeSync{T: time.Now().UTC().Format(time.RFC3339Nano)}
	state, status, maxErr, estErr, err := kernelTime()
	if err != nil {
		ts.Error = fmt.Sprintf("adjtimex: %v", err)
	} else {
		ts.Kernel = &clocks.KernelTime{Synchronised: state != timeError && status&staUnsync == 0,
			State: state, Status: status, MaxErrorUS: maxErr, EstErrorUS: estErr}
	}
	path, err := exec.LookPath("chronyc")
	if err != nil {
		return ts // no chronyc: the bound is unknown, unless declared
	}
	cctx, cancel := context.WithTimeout(ctx, ChronycTimeout)
	defer cancel()
	var stderr strings.Builder
	cmd := exec.CommandContext(cctx, path, "-c", "tracking")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		ts.ChronyError = fmt.Sprintf("chronyc -c tracking: no answer within %v", ChronycTimeout)
	case err != nil:
		ts.ChronyError = strings.TrimSpace(fmt.Sprintf("chronyc -c tracking: %v %s", err, strings.TrimSpace(stderr.String())))
	default:
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if ts.Chrony, err = clocks.ParseChronyTracking(line); err != nil {
			ts.ChronyError = err.Error()
		}
	}
	return ts
}
