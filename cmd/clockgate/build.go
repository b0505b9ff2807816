package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
	"github.com/spf13/cobra"
)

type buildOptions struct {
	IO       *IO
	Stream   string
	Output   string
	Interval time.Duration
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
window and its largest gap. It documents a stream whose sampler left no
record (SIGKILL leaves whole lines and no record), on purpose: summarize
never does that silently. Every line must be a valid sample; the first bad
one is named.

Where a host stream lies beside the stream (PREFIX.host.jsonl), the
record's host block is recomputed from it as the sampler folded it; a host
stream that does not fold, against the stream's readings, is named at its
first bad line and no record is written. Without one the record has no host
block, and the leg's host reads "not recorded".

The record always says stop_reason rebuilt: how the sampler stopped is not
in the stream, so where the window ended is unknown, and the leg carries
clock.partial_window. A rebuilt record never makes a leg eligible; only a
new measurement does.

build never replaces a file: -o naming an existing file is refused (exit 2),
so it cannot overwrite the record a sampler wrote (a refusal, a window cut
off at --max-duration, anything the sampler said). interval_s is the
sampler's, not the stream's: --interval defaults to the median gap between
successive samples of one GPU (the rows of one reading share its time), or
the GPU's mean spacing where that is shorter (a sampler reads on fixed
ticks, so a late reading is followed by an early one).`,
		Example: `  clockgate build clocks/llama/vllm/r1.samples.jsonl
  clockgate build clocks/llama/vllm/r1.samples.jsonl -o clocks/llama/vllm/r1.summary.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Stream = args[0]
			if opts.Interval < 0 {
				return usageErr("--interval %v: want a positive duration", opts.Interval)
			}
			return runBuild(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the record to FILE atomically instead of printing it; FILE must not exist")
	f.DurationVar(&opts.Interval, "interval", 0, "the sampler's interval (default: the median gap between successive samples of one GPU)")
	return cmd
}

func runBuild(opts *buildOptions) error {
	if opts.Output != "" {
		if _, err := os.Lstat(opts.Output); err == nil {
			return usageErr("%s", existingOutput(opts.Output))
		}
	}
	f, err := clocks.OpenRegular(opts.Stream)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageErr("%s: no such stream", opts.Stream)
		}
		return usageErr("%v", err)
	}
	defer f.Close()
	fold := clocks.NewFold()
	fold.Ticks = &clocks.BusyTicks{} // for the host stream's fold
	times := map[int][]time.Time{}   // by GPU index
	sc := clocks.NewReader(f, opts.Stream)
	for sc.Scan() {
		smp := sc.Sample()
		fold.Add(smp, sc.Line())
		if t, err := time.Parse(time.RFC3339Nano, smp.T); err == nil {
			times[smp.GPUIndex] = append(times[smp.GPUIndex], t)
		}
	}
	if err := sc.Err(); err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	interval := opts.Interval.Seconds()
	if interval == 0 {
		interval, err = clocks.IntervalFromTimes(seriesByIndex(times))
		if err != nil {
			return usageErr("%s: %v; pass --interval", opts.Stream, err)
		}
	}
	rec, err := fold.Record(interval, clocks.StopRebuilt)
	if err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%s: %v", opts.Stream, err)}
	}
	if rec.Host, err = buildHost(opts.Stream, fold.Ticks); err != nil {
		return &exitError{code: ExitFailed, err: err}
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
	if err := atomicfile.WriteNew(opts.Output, out, 0o644); err != nil {
		if errors.Is(err, atomicfile.ErrExists) {
			return usageErr("%s", existingOutput(opts.Output))
		}
		return usageErr("%v", err)
	}
	return nil
}

// buildHost recomputes the record's host block from the host stream
// beside stream, as every other field is recomputed from its stream (SPEC
// §12.2): nil where there is none (the leg's host is "not recorded"), an
// error naming the first bad line where it does not fold.
func buildHost(stream string, ticks *clocks.BusyTicks) (*clocks.Host, error) {
	path := clocks.HostStreamPath(stream)
	f, err := clocks.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%v; the record's host block is recomputed from the host stream beside the stream: make it readable, or move it out of the tree to rebuild a record without a host block", err)
	}
	defer f.Close()
	h, err := clocks.FoldHostStream(f, path, ticks)
	if err != nil {
		return nil, fmt.Errorf("%v; the record's host block is recomputed from the host stream beside the stream: restore the host stream the sampler wrote, or move it out of the tree to rebuild a record without a host block (its host then reads \"not recorded\")", err)
	}
	return h, nil
}

// existingOutput explains why build will not write over a file.
func existingOutput(path string) string {
	return fmt.Sprintf("%s: already exists; build never replaces a file (a record beside its stream is what the sampler said); write the rebuilt record elsewhere, or print it without -o", path)
}

// seriesByIndex lists each GPU's sample times in GPU index order.
func seriesByIndex(times map[int][]time.Time) [][]time.Time {
	idx := make([]int, 0, len(times))
	for i := range times {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	series := make([][]time.Time, 0, len(idx))
	for _, i := range idx {
		series = append(series, times[i])
	}
	return series
}
