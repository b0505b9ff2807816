package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/multileg"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/sampler"
	"github.com/clockgate/clockgate/summarize"
)

type markOptions struct {
	IO    *IO
	out   string
	point string
	argv  []string
	// leg is the --leg DIR of a multi-host leg (SPEC §12.3); host is the
	// client's name, written on each line, and points the points file.
	leg, host, points string
	// now is the clock the lines are stamped with.
	now func() time.Time
	// streamWait bounds the wait for a starting sampler's stream.
	streamWait time.Duration
}

// MarkStreamWait is how long mark waits for the leg's stream to appear: a
// sampler started in the background just before ('clockgate sample … &')
// takes a moment to create it.
const MarkStreamWait = 10 * time.Second

// markStreamPoll is how often mark looks for the stream while it waits.
const markStreamPoll = 50 * time.Millisecond

// markWaitEnv overrides MarkStreamWait (a Go duration), for tests.
const markWaitEnv = "CLOCKGATE_MARK_STREAM_WAIT"

func init() { register(NewCmdMark) }

// NewCmdMark builds "clockgate mark".
func NewCmdMark(s *IO) *cobra.Command {
	opts := &markOptions{IO: s, now: time.Now, streamWait: MarkStreamWait}
	cmd := &cobra.Command{
		Use:   "mark (--out PREFIX | --leg DIR) --point ID -- COMMAND [ARG...]",
		Short: "Run one bench point's COMMAND and mark when it began and ended beside the leg's stream",
		Long: `mark runs COMMAND, one point of a leg's bench loop, as 'clockgate record'
runs its command (stdin, stdout and stderr passed through, SIGINT and SIGTERM
forwarded, its exit status returned, 128+N when it died of signal N), and
appends to PREFIX.points.jsonl one line as it starts and one as it ends:

  {"point":"8/inf","event":"begin","t":"2026-08-12T09:00:01.000Z"}
  {"point":"8/inf","event":"end","t":"2026-08-12T09:01:12.000Z","exit":0}

ID is the point as the report prints it, max_concurrency/request_rate: 8/inf,
none/4, 16/2.5. summarize judges the point on the leg's samples between the
two lines (a point with a begin and no end, or a non-zero exit, has no
window). Each line is appended whole, in one write.

When PREFIX.samples.jsonl is not there yet (a sampler started in the
background just before takes a moment to create it), mark says so on stderr
and waits for it, up to 10 s.

mark refuses (exit 2, nothing written, COMMAND not run) a malformed ID, a
point that already has an end line in PREFIX.points.jsonl, and a PREFIX with
no PREFIX.samples.jsonl beside it after that wait: start the sampler first
('clockgate sample --out PREFIX --pid ...' in the background).`,
		Example: `  # A leg's bench loop: one sampler for the leg, one mark per point.
  clockgate sample --out clocks/llama/vllm/r1 --pid "$SERVER_PID" &
  for c in 1 2 4 8; do
    clockgate mark --out clocks/llama/vllm/r1 --point "$c/inf" -- \
        vllm bench serve --model llama --max-concurrency "$c" --save-result \
        --result-dir bench/llama/vllm/r1
  done`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("mark needs a COMMAND to run: clockgate mark --out PREFIX --point ID -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.argv = args
			if v := os.Getenv(markWaitEnv); v != "" {
				d, err := time.ParseDuration(v)
				if err != nil || d < 0 {
					return usageErr("$%s=%q: want a duration", markWaitEnv, v)
				}
				opts.streamWait = d
			}
			return runMark(opts)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&opts.out, "out", "", "the leg's PREFIX, as given to clockgate sample or record (required)")
	cmd.Flags().StringVar(&opts.point, "point", "", "the point, as the report prints it: 8/inf, none/4, 16/2.5 (required)")
	cmd.Flags().StringVar(&opts.leg, "leg", "", "a multi-host leg's `DIR`, in place of --out: on the leg's client, append to DIR/points.jsonl, each line naming this host")
	return cmd
}

// pointsPath is the points file beside a leg's stream.
func pointsPath(prefix string) string { return prefix + summarize.PointsSuffix }

// checkMark refuses what mark must not run: a malformed point, a prefix
// with no stream, a points file that cannot be read or already ends the
// point.
func checkMark(opts *markOptions) error {
	if opts.leg != "" {
		return checkMarkLeg(opts)
	}
	opts.points = pointsPath(opts.out)
	switch {
	case opts.out == "":
		return usageErr("--out PREFIX is required: the leg's prefix, as given to clockgate sample")
	case opts.point == "":
		return usageErr("--point ID is required: the point as the report prints it (8/inf, none/4, 16/2.5)")
	}
	if _, err := ratio.ParsePointID(opts.point); err != nil {
		return usageErr("--point: %v", err)
	}
	stream := sampler.StreamPath(opts.out)
	if !waitStream(opts, stream) {
		return usageErr("no clock stream at %s after waiting %v: start the sampler first (clockgate sample --out %s --pid ... &), then mark each point", stream, opts.streamWait, opts.out)
	}
	return checkPoints(opts)
}

// checkMarkLeg checks mark --leg DIR: run on the leg's client, whose
// clock stamps the points.
func checkMarkLeg(opts *markOptions) error {
	switch {
	case opts.out != "":
		return usageErr("--leg DIR and --out PREFIX: give one (a multi-host leg's points are DIR/points.jsonl)")
	case opts.point == "":
		return usageErr("--point ID is required: the point as the report prints it (8/inf, none/4, 16/2.5)")
	}
	if _, err := ratio.ParsePointID(opts.point); err != nil {
		return usageErr("--point: %v", err)
	}
	m, err := multileg.Load(opts.leg)
	if err != nil {
		return usageErr("--leg: %v (run clockgate leg init --out %s first)", err, opts.leg)
	}
	host, err := legHostName("")
	if err != nil {
		return usageErr("--leg: %v", err)
	}
	if host != m.Client {
		return usageErr("--leg %s: this host, %s, is not the leg's client (%s, which ran clockgate leg init): mark points where the leg was set up, so one clock stamps them all", opts.leg, host, m.Client)
	}
	opts.host, opts.points = host, filepath.Join(opts.leg, multileg.PointsName)
	return checkPoints(opts)
}

// checkPoints refuses a point already ended in the points file.
func checkPoints(opts *markOptions) error {
	path := opts.points
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usageErr("%v", err)
	}
	defer f.Close()
	ms, err := summarize.ParseMarks(path, f)
	if err != nil {
		return usageErr("%v; fix or move the file before marking more points", err)
	}
	for _, m := range ms {
		if m.Point == opts.point && m.Ended {
			return usageErr("point %s already has an end line in %s (line %d): a point is run once per leg; mark another point, or start a new leg (r<N+1>)",
				opts.point, path, m.EndLine)
		}
	}
	return nil
}

// waitStream reports whether the stream is a regular file, waiting up to
// opts.streamWait for a starting sampler to create it, and saying so.
func waitStream(opts *markOptions, stream string) bool {
	there := func() (bool, bool) {
		st, err := os.Stat(stream)
		if err == nil {
			return st.Mode().IsRegular(), true
		}
		return false, false
	}
	ok, exists := there()
	if exists || opts.streamWait <= 0 {
		return ok
	}
	fmt.Fprintf(opts.IO.ErrOut, "clockgate mark: no clock stream at %s yet; waiting up to %v for the sampler to create it\n", stream, opts.streamWait)
	deadline := time.Now().Add(opts.streamWait)
	for time.Now().Before(deadline) {
		time.Sleep(min(markStreamPoll, time.Until(deadline)))
		if ok, exists = there(); exists {
			return ok
		}
	}
	return false
}

// appendLine appends one whole line to the points file, in one write, and
// syncs it.
func appendLine(path, line string) error { return benchfmt.AppendMark(path, line) }

// markLine is one line of the points file.
func markLine(point, event string, t time.Time, exit *int) string {
	return benchfmt.MarkLine(point, event, t, exit)
}

// line is one line of the points file; a multi-host leg's names its host.
func (opts *markOptions) line(event string, t time.Time, exit *int) string {
	l := markLine(opts.point, event, t, exit)
	if opts.leg == "" {
		return l
	}
	return l[:len(l)-1] + `,"host":` + strconv.Quote(opts.host) + "}"
}

func runMark(opts *markOptions) error {
	if err := checkMark(opts); err != nil {
		return err
	}
	name := opts.argv[0]
	bin, err := exec.LookPath(name)
	if err != nil {
		return usageErr("cannot run %s: %v", name, err)
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)

	path := opts.points
	if err := appendLine(path, opts.line(benchfmt.MarkBegin, opts.now(), nil)); err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%s: %v (%s not started)", path, err, name)}
	}
	child := exec.Command(bin, opts.argv[1:]...)
	child.Args[0] = name
	child.Stdin, child.Stdout, child.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	code := 0
	var runErr error
	if err := child.Start(); err != nil {
		code, runErr = 127, fmt.Errorf("cannot run %s: %v", name, err)
	} else {
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = child.Wait()
			close(exited)
		}()
	wait:
		for {
			select {
			case sig := <-sigc:
				child.Process.Signal(sig)
			case <-exited:
				break wait
			}
		}
		var ee *exec.ExitError
		if child.ProcessState == nil || waitErr != nil && !errors.As(waitErr, &ee) {
			code, runErr = ExitFailed, fmt.Errorf("waiting for %s: %v", name, waitErr)
		} else {
			code = exitStatus(child.ProcessState)
		}
	}
	if err := appendLine(path, opts.line(benchfmt.MarkEnd, opts.now(), &code)); err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%s: %v (%s exited %d; the point has no end line, so no window)", path, err, name, code)}
	}
	if runErr != nil || code != 0 {
		return &exitError{code: code, err: runErr}
	}
	return nil
}
