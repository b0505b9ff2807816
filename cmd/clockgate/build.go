package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
	"github.com/spf13/cobra"
)

type buildOptions struct {
	IO         *IO
	Stream     string
	Output     string
	Interval   time.Duration
	StopReason string
}

func init() { register(NewCmdBuild) }

// NewCmdBuild builds `clockgate build`.
func NewCmdBuild(s *IO) *cobra.Command {
	opts := &buildOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "build PREFIX.samples.jsonl",
		Short: "Recompute a leg clock record from its stream",
		Long: `build recomputes the clock record a stream implies: busy samples' SM clock
statistics (idle samples excluded and counted), the throttle union, the
window. It is how a stream whose sampler was killed (SIGKILL leaves whole
lines and no record) gets its record, on purpose: summarize never does that
silently. Every line must be a valid sample; the first bad one is named.

interval_s and stop_reason are the sampler's, not the stream's: --interval
defaults to the median gap between samples, --stop-reason to "signal" (a
stream without a record is one whose sampler was killed).`,
		Example: `  clockgate build clocks/llama/vllm/r1.samples.jsonl
  clockgate build clocks/llama/vllm/r1.samples.jsonl -o clocks/llama/vllm/r1.summary.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Stream = args[0]
			switch opts.StopReason {
			case clocks.StopPIDExit, clocks.StopCommandExit, clocks.StopSignal, clocks.StopMaxDuration:
			default:
				return usageErr("--stop-reason %q: want pid-exit, command-exit, signal or max-duration", opts.StopReason)
			}
			if opts.Interval < 0 {
				return usageErr("--interval %v: want a positive duration", opts.Interval)
			}
			return runBuild(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the record to FILE atomically instead of printing it")
	f.DurationVar(&opts.Interval, "interval", 0, "the sampler's interval (default: the median gap between samples)")
	f.StringVar(&opts.StopReason, "stop-reason", clocks.StopSignal, "why the sampler stopped: pid-exit, command-exit, signal, max-duration")
	return cmd
}

func runBuild(opts *buildOptions) error {
	f, err := clocks.OpenRegular(opts.Stream)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageErr("%s: no such stream", opts.Stream)
		}
		return usageErr("%v", err)
	}
	defer f.Close()
	fold := clocks.NewFold()
	var times []time.Time
	sc := clocks.NewReader(f, opts.Stream)
	for sc.Scan() {
		fold.Add(sc.Sample(), sc.Line())
		if t, err := time.Parse(time.RFC3339Nano, sc.Sample().T); err == nil {
			times = append(times, t)
		}
	}
	if err := sc.Err(); err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	interval := opts.Interval.Seconds()
	if interval == 0 {
		interval, err = medianGap(times)
		if err != nil {
			return usageErr("%s: %v; pass --interval", opts.Stream, err)
		}
	}
	rec, err := fold.Record(interval, opts.StopReason)
	if err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%s: %v", opts.Stream, err)}
	}
	out, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if opts.Output == "" {
		_, err = opts.IO.Out.Write(out)
		return err
	}
	if err := atomicfile.WriteFile(opts.Output, out, 0o644); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// medianGap is the median time between successive samples, in seconds,
// rounded to the millisecond.
func medianGap(times []time.Time) (float64, error) {
	if len(times) < 2 {
		return 0, errors.New("fewer than two samples: the interval cannot be inferred")
	}
	gaps := make([]time.Duration, 0, len(times)-1)
	for i := 1; i < len(times); i++ {
		gaps = append(gaps, times[i].Sub(times[i-1]))
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	g := gaps[len(gaps)/2].Round(time.Millisecond).Seconds()
	if g <= 0 {
		return 0, errors.New("samples are not spaced in time")
	}
	return g, nil
}
