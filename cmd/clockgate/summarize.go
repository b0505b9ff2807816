package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

// summarizeMemoryLimit is summarize's soft memory limit (GOMEMLIMIT, when
// set, wins): well above what 400 legs of two-hour streams need, and what
// keeps 20,000 legs × 60 with --out under 190 MiB resident. Their live
// heap peaks near 100 MiB when the last leg is read (5,263 bytes a leg,
// TestLiveMemoryPerLeg) and is near 40 MiB while the pages are written,
// so the collector has a third more than the peak before it works
// harder; at 224 MiB the heap doubled past what was live and 20,000 legs
// peaked at 241 MiB.
const summarizeMemoryLimit = 160 << 20

// summarizeOutputs are the files summarize --out writes, and the only names
// it overwrites.
var summarizeOutputs = summarize.OutputFiles

type summarizeOptions struct {
	IO             *IO
	Tree           string
	Out            string
	Baseline       string
	AllowCrossBoot bool
	JSON           bool
	Strict         bool
	StrictEnergy   bool
	BenchTZ        string
}

func init() { register(NewCmdSummarize) }

// NewCmdSummarize builds `clockgate summarize`.
func NewCmdSummarize(s *IO) *cobra.Command {
	opts := &summarizeOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "summarize TREE",
		Short: "Judge a whole evidence tree and write its ratios, each with a clock block",
		Long: `summarize walks an evidence tree

  TREE/bench/<model>/<engine>/r<N>/<point>.json    vllm bench serve --save-result (every
                                                   release), or sglang.bench_serving's .jsonl,
                                                   or a GuideLLM benchmarks.json
  TREE/bench/<model>/<engine>/r<N>/<point>/        an AIPerf artifact directory
                                                   (profile_export_aiperf.json)
  TREE/memory/<model>/<engine>/r<N>.summary.json   memory record
  TREE/clocks/<model>/<engine>/r<N>.samples.jsonl  clock stream
  TREE/clocks/<model>/<engine>/r<N>.summary.json   clock record

judges every leg against the clock contract, merges each (model, engine) into
an arm, and compares every engine with the baseline engine: a THROUGHPUT ratio
(geometric mean over the points, each a max_concurrency and request_rate, of
median output throughput) and a
MEMORY ratio (median peak GPU memory), each with its clock block. A ratio is
ESTABLISHED only when it is binding-eligible: no reason stands and its clock
state is established. Evidence missing from a leg is a reason on the leg; files
the walk does not recognise, and JSON that is not a bench result (sidecars,
sweep summaries), are warnings. Nothing in TREE is modified. A TREE with none
of bench/, memory/ and clocks/ is not an evidence tree (exit 2).

It prints report.md, or summary.json with --json. With --out it also writes
summary.json, all-runs.json, report.md and report.html (the report with a
clock-over-time picture per arm) into DIR as one transaction: DIR holds the
old outputs or the new ones, never a mix, also when interrupted. DIR is
created if needed and must hold no file but those four. DIR may lie inside
TREE (the walk skips it, also while it is empty, and any directory of
summarize's outputs, so a rerun gives the same bytes), but not inside its
bench/, memory/ or clocks/ (exit 2).

Exit status: 0 done (also when ratios are NOT ESTABLISHED, unless --strict);
1 --strict and the gate did not pass (no ratio, or some ratio NOT
ESTABLISHED); 2 a usage error, or a TREE that cannot be read.`,
		Example: `  clockgate summarize evidence/2026-08-12
  clockgate summarize evidence/2026-08-12 --out evidence/2026-08-12.summary
  clockgate summarize evidence/2026-08-12 --out evidence/2026-08-12/summary
  clockgate summarize --baseline sglang --strict evidence/2026-08-12 > report.md
  clockgate summarize --allow-cross-boot --json evidence/2026-08-12 | jq '.comparisons[].throughput.clock.caveats'
  clockgate summarize --bench-tz America/Los_Angeles evidence/2026-08-12`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("summarize takes one TREE, found %d arguments (see 'clockgate summarize --help')", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Tree = args[0]
			if opts.Baseline == "" {
				return usageErr("--baseline: want an engine name, found an empty string")
			}
			if strings.ContainsRune(opts.Baseline, '/') {
				return usageErr("--baseline %q: want an engine directory name, a single path segment", opts.Baseline)
			}
			if c.Flags().Changed("bench-tz") {
				if _, err := benchTZ(opts.BenchTZ); err != nil {
					return err
				}
			}
			if c.Flags().Changed("out") && opts.Out == "" {
				return usageErr("--out: want a directory, found an empty string")
			}
			return runSummarize(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "also write summary.json, all-runs.json, report.md and report.html into `DIR`")
	f.StringVar(&opts.Baseline, "baseline", summarize.DefaultBaseline, "the baseline `ENGINE` every other engine is compared against")
	f.BoolVar(&opts.AllowCrossBoot, "allow-cross-boot", false, "waive boot identity (and nothing else); each waived check is a CAVEAT")
	f.BoolVar(&opts.JSON, "json", false, "print summary.json instead of report.md")
	f.BoolVar(&opts.Strict, "strict", false, "exit 1 unless every ratio is ESTABLISHED (and there is at least one)")
	f.StringVar(&opts.BenchTZ, "bench-tz", "", "the `ZONE` AIPerf's start_time/end_time were written in (they name none): UTC, Europe/Berlin")
	f.BoolVar(&opts.StrictEnergy, "strict-energy", false, "exit 1 unless every ratio and every ENERGY family is ESTABLISHED (and there is at least one)")
	return cmd
}

func runSummarize(opts *summarizeOptions) error {
	st, err := os.Stat(opts.Tree)
	switch {
	case err != nil:
		return usageErr("%s: %v", opts.Tree, pathErrText(err))
	case !st.IsDir():
		return usageErr("%s: TREE is not a directory", opts.Tree)
	}
	if opts.Out != "" {
		if err := checkOutPlace(opts.Tree, opts.Out); err != nil {
			return err
		}
		if err := checkOutDir(opts.Out); err != nil {
			return err
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A tree of many small legs keeps a few KiB of each in memory
		// (what arms, ratios and pictures need). Past this soft limit the
		// collector works harder rather than let the heap double: memory
		// stays near what is live, and a small tree never reaches it.
		debug.SetMemoryLimit(summarizeMemoryLimit)
	}
	sopts := summarize.Options{Baseline: opts.Baseline, AllowCrossBoot: opts.AllowCrossBoot,
		Out: opts.Out, Traces: opts.Out != "", Rows: summarize.DiscardRows}
	if opts.BenchTZ != "" {
		if sopts.BenchTZ, err = benchTZ(opts.BenchTZ); err != nil {
			return err
		}
	}
	if opts.Out != "" {
		// all-runs.json's leg rows wait in a file, written as the legs are
		// read: a large tree's bench objects are never all in memory. It
		// is unlinked at once, so that nothing of it outlives the run.
		spool, err := os.CreateTemp("", "clockgate-legs-*")
		if err != nil {
			return usageErr("--out %s: a temporary file for all-runs.json's rows: %v", opts.Out, err)
		}
		os.Remove(spool.Name())
		defer spool.Close()
		sopts.Rows = spool
		// The pictures' traces wait in another, likewise: each leg's
		// points are read back only while its arm's picture is drawn.
		traces, err := os.CreateTemp("", "clockgate-traces-*")
		if err != nil {
			return usageErr("--out %s: a temporary file for report.html's clock traces: %v", opts.Out, err)
		}
		os.Remove(traces.Name())
		defer traces.Close()
		sopts.TraceSpool = clocks.NewTraceSpool(traces)
	}
	var bar *progressBar
	if isTerminal(opts.IO.ErrOut) {
		bar = newProgressBar(opts.IO.ErrOut, time.Now)
		sopts.Progress = bar.update
	}
	s, err := summarize.Summarize(opts.Tree, sopts)
	bar.done()
	if err != nil {
		return usageErr("%v", err)
	}
	doc := report.Build(s)
	// The document holds what report.md and report.html show of each leg;
	// summary.json and all-runs.json read no leg.
	s.ReleaseLegs()
	// md is report.md as --out staged it: report.html is made from it,
	// and standard output repeats it, neither rendering it again. It stays
	// open past the rename, so it is this run's bytes whatever happens to
	// DIR meanwhile.
	var md *os.File
	defer func() {
		if md != nil {
			md.Close()
		}
	}()
	if opts.Out != "" {
		plain := func(write func(io.Writer) error) func(io.Writer, string) error {
			return func(w io.Writer, _ string) error { return write(w) }
		}
		html := func(w io.Writer, staged string) error {
			f, err := os.Open(filepath.Join(staged, "report.md"))
			if err != nil {
				return err
			}
			md = f
			return doc.HTMLOf(w, bufio.NewReaderSize(f, 64<<10))
		}
		if err := writeOutputs(opts.Out, []output{
			{"summary.json", plain(s.WriteSummary)}, {"all-runs.json", plain(s.WriteAllRuns)},
			{"report.md", plain(doc.Markdown)}, {"report.html", html}}); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	switch {
	case opts.JSON:
		err = s.WriteSummary(out)
	case md != nil:
		if _, err = md.Seek(0, io.SeekStart); err == nil {
			_, err = io.Copy(out, md)
		}
	default:
		err = doc.Markdown(out)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return err
	}
	if opts.Strict && !s.GatePass {
		binding, total := s.Ratios()
		if total == 0 {
			return &exitError{code: ExitFailed, err: errors.New("--strict: the gate did not pass: no ratio (no model has both the baseline arm and another)")}
		}
		return &exitError{code: ExitFailed, err: fmt.Errorf("--strict: the gate did not pass: %d of %d ratios NOT ESTABLISHED", total-binding, total)}
	}
	if opts.StrictEnergy && !(s.GatePass && ratio.EnergyGatePass(s.Comparisons)) {
		binding, total := s.Ratios()
		energy := 0
		for _, c := range s.Comparisons {
			if c.Energy.BindingEligible {
				energy++
			}
		}
		return &exitError{code: ExitFailed, err: fmt.Errorf("--strict-energy: the gate did not pass: %d of %d ratios and %d of %d ENERGY families NOT ESTABLISHED",
			total-binding, total, len(s.Comparisons)-energy, len(s.Comparisons))}
	}
	return nil
}

// checkOutDir refuses an --out DIR that is not a directory, or that holds
// anything but summarize's own outputs: those are the only files it may
// overwrite.
func checkOutDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usageErr("--out %s: %v", dir, pathErrText(err))
	}
	if !st.IsDir() {
		return usageErr("--out %s: not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usageErr("--out %s: %v", dir, pathErrText(err))
	}
	own := map[string]bool{}
	for _, n := range summarizeOutputs {
		own[n] = true
	}
	for _, e := range entries {
		if !own[e.Name()] || !e.Type().IsRegular() {
			return usageErr("--out %s: refusing to write beside %s, which summarize did not write; want an empty directory or one holding only %s",
				dir, filepath.Join(dir, e.Name()), strings.Join(summarizeOutputs, ", "))
		}
	}
	return nil
}

// checkOutPlace refuses an --out DIR inside TREE's bench/, memory/ or
// clocks/: there it would be read as evidence (a leg, a model) on the next
// run. Elsewhere inside TREE it is allowed: the walk skips a directory that
// holds only summarize's outputs, so a rerun gives the same bytes.
func checkOutPlace(tree, out string) error {
	t, err := summarize.RealPath(tree)
	if err != nil {
		return usageErr("%s: %v", tree, pathErrText(err))
	}
	o, err := summarize.RealPath(out)
	if err != nil {
		return usageErr("--out %s: %v", out, pathErrText(err))
	}
	rel, err := filepath.Rel(t, o)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil // outside TREE
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	switch first {
	case "bench", "memory", "clocks":
		return usageErr("--out %s: inside %s/ of TREE %s, where the next run would read it as evidence; want a directory outside bench/, memory/ and clocks/ (beside TREE, or e.g. %s)",
			out, first, tree, filepath.Join(tree, "summary"))
	}
	return nil
}

// pathErrText is an error without the path it names, which the caller
// prints already.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// benchTZ reads --bench-tz: an IANA zone name, or UTC.
func benchTZ(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, usageErr("--bench-tz %q: want the bench machine's zone by name, such as UTC or Europe/Berlin", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, usageErr("--bench-tz %q: not a zone Go knows (%v); want an IANA name such as UTC or Europe/Berlin", name, err)
	}
	return loc, nil
}
