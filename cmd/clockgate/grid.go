package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/grid"
	"github.com/clockgate/clockgate/sampler"
)

type gridOptions struct {
	IO      *IO
	plan    string
	dryRun  bool
	backend string
	// benchTZ is --bench-tz, as summarize's.
	benchTZ string
}

func init() { register(NewCmdGrid) }

// NewCmdGrid builds "clockgate grid".
func NewCmdGrid(s *IO) *cobra.Command {
	opts := &gridOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "grid [--dry-run] [--backend auto|nvml|nvidia-smi|amd-smi] [--bench-tz ZONE] PLAN.toml",
		Short: "Run a whole comparison from a plan, in an order that cancels drift, and summarize it",
		Long: `grid runs every leg of the plan's engines, in an order that cancels linear
drift (abba, williams or random), and writes the evidence tree (bench,
memory, clocks, points) with a journal in TREE/grid/journal.jsonl; then it
summarizes the tree into TREE/grid/summary/ and prints each leg's verdict.

Each leg: a pre-check (no compute process on the plan's GPUs, the port
free); the idle gate (every GPU within cooldown.above_idle_c of its idle
temperature, measured at grid start, and settled, within cooldown.max_wait);
the pre-check again; the server started in a process group of its own under
clockgate as child subreaper; readiness (ready.path answers 200 twice in a
row, from a listener of the server's own tree: another process answering
fails the leg, named); the warmup point, not recorded; the sampler, in
process, with each point marked as 'clockgate mark' marks it and its result
file checked; the stop (SIGTERM to the group, a 30 s grace, SIGKILL to every
process of the leg, each waited for by its pid, then the GPUs and the port
waited for); and the commit by rename. A failed leg is tried once more at
once; a second failure stops the grid.

Running the same command again resumes a stopped grid: committed legs are
kept byte for byte, an uncommitted leg's files go to TREE/grid/failed/ and
the leg runs again under its r<N>. The plan is compared, as parsed, with the
one the grid started with (kept in TREE/grid/plan.toml): a changed comment
or layout resumes, a changed value is refused naming each key, old and new.
A changed boot, GPU set or driver is refused.

The first [[engine]] is the baseline of the summary.

Exit status: 0 the grid ran (whatever the verdicts), 1 it stopped (a gate, a
failed leg after its retry, a leftover process), 2 a plan or usage error,
130/143 after SIGINT/SIGTERM (the running leg stopped, its files kept in
TREE/grid/failed/). docs/grid.md is the reference.`,
		Example: `  # Print the order and every command, run nothing.
  clockgate grid --dry-run plan.toml

  # Run it (again, to resume).
  clockgate grid plan.toml

  # An AIPerf plan whose results may carry only start_time/end_time
  # (local time, no zone): read them in the bench machine's zone.
  clockgate grid --bench-tz Europe/Berlin plan.toml`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("grid takes one PLAN.toml, found %d arguments", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.plan = args[0]
			known := false
			for _, k := range sampler.Kinds {
				known = known || opts.backend == k
			}
			if !known {
				return usageErr("--backend %q: want one of %s", opts.backend, strings.Join(sampler.Kinds, ", "))
			}
			if c.Flags().Changed("bench-tz") {
				if _, err := benchTZ(opts.benchTZ); err != nil {
					return err
				}
			}
			return runGrid(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the order and every expanded command; run nothing")
	cmd.Flags().StringVar(&opts.backend, "backend", sampler.KindAuto, "how to read the GPUs: "+strings.Join(sampler.Kinds, ", "))
	cmd.Flags().StringVar(&opts.benchTZ, "bench-tz", "", "the `ZONE` AIPerf's start_time/end_time are written in (they name none), for each point's check and the summary: UTC, Europe/Berlin")
	return cmd
}

func runGrid(opts *gridOptions) error {
	p, err := grid.LoadFile(opts.plan)
	if err != nil {
		var pe *grid.PlanError
		if errors.As(err, &pe) {
			return &exitError{code: ExitUsage, err: err}
		}
		return usageErr("%v", err)
	}
	if opts.dryRun {
		seed, note := p.Seed, ""
		if events, _, err := grid.ReadJournal(filepath.Join(p.Tree, grid.JournalRel)); err == nil && len(events) > 0 && events[0].Seed != nil {
			seed, note = *events[0].Seed, " (the journal's)"
		} else if p.UsesSeed() && !p.HasSeed {
			seed = grid.DrawSeed()
			note = fmt.Sprintf(" (drawn now: a run draws its own; put seed = %d in the plan for this order)", seed)
		}
		grid.DryRun(opts.IO.Out, p, seed, note)
		return nil
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)
	go func() {
		if s, ok := <-sigc; ok {
			cancel(grid.SignalCause{Sig: s.(syscall.Signal)})
		}
	}()
	baseline := p.Engines[0].Name
	var tz *time.Location
	if opts.benchTZ != "" {
		if tz, err = benchTZ(opts.benchTZ); err != nil {
			return err
		}
	}
	err = grid.Run(ctx, grid.Options{
		Plan: p, Backend: opts.backend, Out: opts.IO.Out, ErrOut: opts.IO.ErrOut, Terminal: isTerminal(opts.IO.ErrOut),
		BootIDFile: os.Getenv(bootIDFileEnv), ProbeLatency: testProbeLatency(), BenchTZ: tz,
		Summarize: func(tree, out string) error {
			return runSummarize(&summarizeOptions{IO: &IO{In: opts.IO.In, Out: io.Discard, ErrOut: opts.IO.ErrOut}, Tree: tree, Out: out, Baseline: baseline, BenchTZ: opts.benchTZ})
		},
	})
	var ee *grid.ExitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.Code, err: ee.Err}
	}
	return err
}

func init() { register(NewCmdGridTask) }

// NewCmdGridTask builds the hidden "clockgate grid-task", the task a
// [slurm] grid runs on its nodes (a step's command): "read" prints the
// node's GPUs, compute processes and port; "exec" runs a role's serve.
func NewCmdGridTask(s *IO) *cobra.Command {
	return &cobra.Command{
		Use:                grid.TaskCommand + " read|exec …",
		Short:              "The task clockgate grid runs on each node of a Slurm allocation",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if code := grid.Task(args, s.Out, s.ErrOut); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
