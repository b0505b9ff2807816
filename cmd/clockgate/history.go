package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/history"
)

// historyOutputs are the files history report --out writes.
var historyOutputs = []string{"history.md", "history.html", "history.csv"}

type historyAddOptions struct {
	IO    *IO
	DB    string
	Trees []string
}

type historyReportOptions struct {
	IO   *IO
	DB   string
	Out  string
	JSON bool
	P    float64
	// MinChange is --min-change: history.html's axes span at least ±
	// it around each series' median.
	MinChange    string
	minChangePct float64
}

type historyCheckOptions struct {
	IO                 *IO
	DB                 string
	MinChange          string
	minChangePct       float64
	Format             string
	AllowUnestablished bool
	AllowShortHistory  bool
}

func init() { register(NewCmdHistory) }

// NewCmdHistory builds `clockgate history` and its add and report.
func NewCmdHistory(s *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Keep summarized grids across nights and find where their established values changed",
		Long: `history keeps every summarized grid in one store, a SQLite file (the default,
` + history.DefaultDSN + `) or a PostgreSQL database (--db postgres://…, one history
shared by many boxes' CI jobs), and reports each series across the grids: per
(model, ours, baseline) each ratio family and each point's ratio; per (model,
engine, point) the arm's median throughput, and per (model, engine) its free
clock; each keyed also by the GPU model.

Change points are found on ESTABLISHED values only, by binary segmentation
with the largest rank-sum statistic over splits, whose p is calibrated by
random orderings so that it accounts for the split having been chosen: at the
default p < 0.001 about one pure-noise series in a thousand reports a change
(Apache Otava's E-divisive with a t-test: 2 to 10 in a hundred). At a change of an engine's
throughput, the report says whether its free clock moved with it: "the box
moved too". history check gates a CI job on the newest grid of each series.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return usageErr("history: want a subcommand, add, report or check (see 'clockgate history --help')")
		},
	}
	cmd.AddCommand(newCmdHistoryAdd(s), newCmdHistoryReport(s), newCmdHistoryCheck(s))
	return cmd
}

func newCmdHistoryAdd(s *IO) *cobra.Command {
	opts := &historyAddOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "add TREE…",
		Short: "Record summarized grids in the history",
		Long: `add records each TREE's grid: a directory summarize --out wrote (its
summary.json and all-runs.json), or an evidence tree, summarized as summarize
would (baseline vllm). A grid is identified by the SHA-256 of its summary.json
and dated by its legs' first clock sample; adding a grid the history has changes
nothing. Several adders may run at once, on one SQLite file or one PostgreSQL
database: none loses a grid.

Exit status: 0 done; 2 a usage error, or a TREE or the history that cannot be
read (nothing after it is added).`,
		Example: `  clockgate summarize evidence/2026-08-12 --out evidence/2026-08-12.summary
  clockgate history add evidence/2026-08-12.summary
  clockgate history add --db postgres://ci@db/clockgate evidence/2026-08-12`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("history add takes one or more TREEs, found none (see 'clockgate history add --help')")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Trees = args
			if opts.DB == "" {
				return usageErr("--db: want a SQLite file path or a postgres:// URL, found an empty string")
			}
			return runHistoryAdd(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.DB, "db", history.DefaultDSN, "the history: a SQLite file `DSN` or a postgres:// URL")
	return cmd
}

func newCmdHistoryReport(s *IO) *cobra.Command {
	opts := &historyReportOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Report every series of the history with its change points",
		Long: `report prints history.md, or with --json the series as one document
({"series": [{"key", "values", "changes", "transfer"}]}). With --out it also
writes history.md, history.html (a trend picture per series: ESTABLISHED values
filled, NOT ESTABLISHED ones hollow, change points marked) and history.csv
(Otava's CSV shape: a time column, one column per series, the grid as an
attribute; a value that is not ESTABLISHED left empty) into DIR, each file
replaced atomically. history.html draws each series on an axis of at least
± --min-change around its median, so that a move smaller than the check
would call a change does not fill the picture.

Exit status: 0 done; 2 a usage error, or a history that cannot be read.`,
		Example: `  clockgate history report
  clockgate history report --db postgres://ci@db/clockgate --out history --p 0.0001
  clockgate history report --json | jq '.series[] | select(.changes != [])'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.DB == "" {
				return usageErr("--db: want a SQLite file path or a postgres:// URL, found an empty string")
			}
			if !(opts.P > 0 && opts.P < 1) {
				return usageErr("--p %v: want a significance strictly between 0 and 1", opts.P)
			}
			if opts.P <= history.MinP {
				return usageErr("--p %v: a calibrated p is never below 1/(%d+1) = %.4g; want a larger bound", opts.P, history.NullDraws, history.MinP)
			}
			if c.Flags().Changed("out") && opts.Out == "" {
				return usageErr("--out: want a directory, found an empty string")
			}
			v, err := parsePercent(opts.MinChange)
			if err != nil {
				return usageErr("--min-change %s: %v", opts.MinChange, err)
			}
			opts.minChangePct = v
			return runHistoryReport(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DB, "db", history.DefaultDSN, "the history: a SQLite file `DSN` or a postgres:// URL")
	f.StringVar(&opts.Out, "out", "", "also write history.md, history.html and history.csv into `DIR`")
	f.BoolVar(&opts.JSON, "json", false, "print the series as JSON instead of history.md")
	f.Float64Var(&opts.P, "p", history.DefaultP, "a change point's calibrated p must be below `P`")
	f.StringVar(&opts.MinChange, "min-change", fmt.Sprintf("%g%%", float64(history.DefaultMinChangePct)), "history.html draws each series on an axis of at least ± `PCT` around its median (as history check's --min-change)")
	return cmd
}

func newCmdHistoryCheck(s *IO) *cobra.Command {
	opts := &historyCheckOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Gate CI on the newest grid: exit 1 when it starts an established regression",
		Long: fmt.Sprintf(`check judges the newest grid of every series of the history. The newest
value starts a regression when it is ESTABLISHED and either a change point is
dated at it, or it lies outside the %g%% prediction interval of the series'
last segment of at least %d established values; and, both ways, it moved by
more than --min-change in the direction that is worse for its family: lower
THROUGHPUT (the ratio, each point's ratio, an engine's own throughput), higher
MEMORY and ENERGY. At an engine's throughput it says whether the box moved too
(its free clock moved the same way by at least half as much). Improvements
are reported and never fail. A free clock is judged with its throughput, not
on its own.

Where the segment is shorter (from a series' second grid on), the newest
grid's legs are tested against the segment's grids' legs: a regression when
they are worse by more than --min-change (a one-sided Mann-Whitney test
against the legs before moved by --min-change, p < %g), with at least %d legs
a side, and the legs' medians apart by more than --min-change. A ratio's legs are the ours arm's,
each over its grid's baseline median. With fewer legs the series is
insufficient: it could not be judged, which fails the check unless
--allow-short-history. A series' first grid is new.

--format md (the default) prints a comment fit for a CI job; json prints
{"exit", "series": [{"key", "date", "newest", "verdict", "magnitude_pct",
"box_moved", "how"}]}, verdict one of regression, improvement, stable,
not_established, insufficient, new.

Exit status: 0 no newest grid starts a regression; 1 one does, or a newest
grid is NOT ESTABLISHED (nothing can be said) and --allow-unestablished is not
given, or a series is insufficient and --allow-short-history is not given;
2 a usage error, or a history that cannot be read or holds no grid.`, history.PredictionLevel*100, history.MinSegment, history.LegAlpha, history.MinLegsPerSide),
		Example: `  clockgate history check
  clockgate history check --db postgres://ci@db/clockgate --min-change 2% --format json
  clockgate history check --allow-short-history   # a new job's first nights, 3 legs per arm`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.DB == "" {
				return usageErr("--db: want a SQLite file path or a postgres:// URL, found an empty string")
			}
			v, err := parsePercent(opts.MinChange)
			if err != nil {
				return usageErr("--min-change %s: %v", opts.MinChange, err)
			}
			opts.minChangePct = v
			if opts.Format != "md" && opts.Format != "json" {
				return usageErr("--format %s: want md or json", opts.Format)
			}
			return runHistoryCheck(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DB, "db", history.DefaultDSN, "the history: a SQLite file `DSN` or a postgres:// URL")
	f.StringVar(&opts.MinChange, "min-change", fmt.Sprintf("%g%%", float64(history.DefaultMinChangePct)), "a regression must move by more than `PCT` of the value before (\"1%\" or \"1\")")
	f.StringVar(&opts.Format, "format", "md", "print `md` (a CI comment) or json")
	f.BoolVar(&opts.AllowUnestablished, "allow-unestablished", false, "a NOT ESTABLISHED newest grid does not fail the check")
	f.BoolVar(&opts.AllowShortHistory, "allow-short-history", false, "a series too short to be judged (too few legs) does not fail the check")
	return cmd
}

// parsePercent reads a percentage, "1%" or "1": finite, at least 0 and
// below 100.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a percentage such as 1%% or 0.5")
	}
	if v < 0 || v >= 100 {
		return 0, fmt.Errorf("want a percentage at least 0%% and below 100%%")
	}
	return v, nil
}

// existingGrids reads every grid of the history at db, which must exist:
// reading never creates a history, so a mistyped SQLite path is an error,
// never an empty pass or an empty report.
func existingGrids(ctx context.Context, db string) ([]*history.Grid, error) {
	if !history.IsPostgres(db) {
		if _, err := os.Stat(db); err != nil {
			return nil, usageErr("--db %s: %v", db, pathErrText(err))
		}
	}
	s, err := history.Open(ctx, db)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	defer s.Close()
	grids, err := s.Grids(ctx)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return grids, nil
}

func runHistoryCheck(ctx context.Context, opts *historyCheckOptions) error {
	ctx = ctxOr(ctx)
	grids, err := existingGrids(ctx, opts.DB)
	if err != nil {
		return err
	}
	if len(grids) == 0 {
		return usageErr("--db %s: the history holds no grid: nothing to check (add tonight's with clockgate history add)", opts.DB)
	}
	c, err := history.CheckGrids(grids, history.DefaultDetection, opts.minChangePct, opts.AllowUnestablished)
	if err != nil {
		return usageErr("--db %s: %v", opts.DB, err)
	}
	c.AllowShortHistory = opts.AllowShortHistory
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	if opts.Format == "json" {
		err = c.JSON(out)
	} else {
		err = c.Markdown(out)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return err
	}
	if c.Exit() != 0 {
		return failed
	}
	return nil
}

func ctxOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

func runHistoryAdd(ctx context.Context, opts *historyAddOptions) error {
	ctx = ctxOr(ctx)
	// Every TREE is read before the history is opened: a bad one adds
	// nothing.
	grids := make([]*history.Grid, len(opts.Trees))
	for i, t := range opts.Trees {
		st, err := os.Stat(t)
		switch {
		case err != nil:
			return usageErr("%s: %v", t, pathErrText(err))
		case !st.IsDir():
			return usageErr("%s: TREE is not a directory", t)
		}
		g, err := history.Load(t)
		if err != nil {
			return usageErr("%v", err)
		}
		grids[i] = g
	}
	s, err := history.Open(ctx, opts.DB)
	if err != nil {
		return usageErr("%v", err)
	}
	defer s.Close()
	out := bufio.NewWriter(opts.IO.Out)
	for i, g := range grids {
		added, err := s.Add(ctx, g)
		if err != nil {
			return usageErr("%v", err)
		}
		verb := "added"
		if !added {
			verb = "already in the history"
		}
		fmt.Fprintf(out, "%s: grid %s of %s, %d values: %s\n", opts.Trees[i], g.ID[:12], g.Date.Format("2006-01-02T15:04:05Z"), len(g.Values), verb)
	}
	return out.Flush()
}

func runHistoryReport(ctx context.Context, opts *historyReportOptions) error {
	ctx = ctxOr(ctx)
	if opts.Out != "" {
		if err := checkHistoryOut(opts.Out); err != nil {
			return err
		}
	}
	grids, err := existingGrids(ctx, opts.DB)
	if err != nil {
		return err
	}
	d := history.DefaultDetection
	d.P = opts.P
	r := history.Build(grids, d)
	r.MinChangePct = opts.minChangePct
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		return err
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return usageErr("--out %s: %v", opts.Out, pathErrText(err))
		}
		for _, f := range []struct {
			name  string
			write func(io.Writer) error
		}{{"history.md", func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }}, {"history.html", r.HTML}, {"history.csv", r.CSV}} {
			var b bytes.Buffer
			if err := f.write(&b); err != nil {
				return err
			}
			if err := atomicfile.WriteFile(filepath.Join(opts.Out, f.name), b.Bytes(), 0o644); err != nil {
				return usageErr("--out %s: %v", opts.Out, err)
			}
		}
	}
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	if opts.JSON {
		err = r.JSON(out)
	} else {
		_, err = out.Write(md.Bytes())
	}
	if err == nil {
		err = out.Flush()
	}
	return err
}

// checkHistoryOut refuses an --out DIR that is not a directory or holds
// anything but history's outputs: those are the only files it replaces.
func checkHistoryOut(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return usageErr("--out %s: %v", dir, pathErrText(err))
	}
	own := map[string]bool{}
	for _, n := range historyOutputs {
		own[n] = true
	}
	for _, e := range entries {
		if !own[e.Name()] || !e.Type().IsRegular() {
			return usageErr("--out %s: refusing to write beside %s, which history report did not write; want an empty directory or one holding only history.md, history.html, history.csv",
				dir, filepath.Join(dir, e.Name()))
		}
	}
	return nil
}
