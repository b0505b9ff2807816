// Command smi2stream converts a CSV that nvidia-smi wrote
// (`nvidia-smi --query-gpu=... --format=csv -l 1`, with or without units,
// with a header or with --columns naming the query) into a clockgate clock
// stream, PREFIX.samples.jsonl, in the format `clockgate sample` writes,
// plus the power-management keys of SPEC §10.1 where the capture has them:
// enforced_power_limit_w (enforced.power.limit), module_enforced_power_limit_w
// (module.enforced.power.limit) and event_counters_us
// (clocks_event_reasons_counters.*, µs).
//
// What the capture does not record is never invented: each missing field
// needs a flag (--boot-id always, since no capture has one; --gpu-uuid,
// --gpu-name, --driver, --persistence, --pstate, --clocks-max-sm,
// --apps-clock, --throttle where the capture lacks the column), every value
// so filled is printed, and a flag given for a field the capture has is an
// error. The power-management keys are written only from their columns, or
// from --limit-w / --module-limit-w / --power-limit-is-enforced, which are
// printed as supplied.
//
// It prints what it filled, which columns it read and ignored, and the
// measured facts of each GPU (rows, busy rows, SM clock min/median/max and
// spread over busy rows, the SwPowerCap share, power against the limit).
//
//	go run ./scripts/smi2stream --boot-id 00000000-0000-4000-8000-000000000001 \
//	    --tz UTC --persistence Enabled --apps-clock 1755 \
//	    --out testdata/smi-real/NAME/samples capture.csv
//
// The output is written with atomicfile.WriteNew: an existing stream is
// never replaced.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clockgate/clockgate/atomicfile"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("smi2stream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var out string
	var dry bool
	fs.StringVar(&out, "out", "", "output `PREFIX`: writes PREFIX.samples.jsonl (never replaces one)")
	fs.BoolVar(&dry, "n", false, "convert and report, write nothing")
	fs.StringVar(&o.BootID, "boot-id", "", "boot id of the window (required: captures do not record one; a stand-in must be named as one)")
	fs.StringVar(&o.GPUUUID, "gpu-uuid", "", "gpu uuid, or one per GPU in index order comma-separated, when the capture has no uuid column")
	fs.StringVar(&o.GPUName, "gpu-name", "", "gpu name when the capture has no name column")
	fs.StringVar(&o.Driver, "driver", "", "driver version when the capture has no driver_version column")
	fs.StringVar(&o.Persistence, "persistence", "", "persistence mode (Enabled/Disabled) when the capture has no persistence_mode column")
	fs.StringVar(&o.PState, "pstate", "", "performance state when the capture has no pstate column")
	fs.IntVar(&o.ClocksMaxSM, "clocks-max-sm", 0, "clocks.max.sm in MHz when the capture has no such column")
	fs.StringVar(&o.AppsClock, "apps-clock", "", "clocks.applications.graphics in MHz, or null (driver 590+: deprecated), when the capture has no such column")
	fs.StringVar(&o.Throttle, "throttle", "", "throttle bit set (hex) for every row of a capture with no reason column")
	fs.StringVar(&o.TZ, "tz", "", "zone of timestamps printed without one (nvidia-smi prints local time): UTC, an IANA name or +HH:MM")
	fs.Float64Var(&o.LimitW, "limit-w", 0, "a known enforced power limit in W, written to every row as supplied")
	fs.Float64Var(&o.ModuleLimitW, "module-limit-w", 0, "a known module power limit in W, written to every row as supplied")
	fs.BoolVar(&o.PowerLimitIsEnforced, "power-limit-is-enforced", false, "read the power.limit column (the software limit) as the enforced limit")
	fs.IntVar(&o.GPU, "gpu", -1, "convert only this GPU index of a several-GPU capture")
	fs.StringVar(&o.Start, "start", "", "time of the first reading (RFC 3339) for a capture without a timestamp column")
	fs.DurationVar(&o.Interval, "interval", 0, "time between readings for a capture without a timestamp column")
	fs.StringVar(&o.Columns, "columns", "", "the query fields, comma-separated, for a capture written with noheader")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: smi2stream [flags] --out PREFIX CAPTURE.csv")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if out == "" && !dry {
		fmt.Fprintln(stderr, "smi2stream: --out PREFIX is required (or -n to only report)")
		return exitUsage
	}
	if strings.HasSuffix(out, ".samples.jsonl") {
		fmt.Fprintf(stderr, "smi2stream: --out %s: give the prefix, without .samples.jsonl\n", out)
		return exitUsage
	}
	in := fs.Arg(0)
	f, err := os.Open(in)
	if err != nil {
		fmt.Fprintf(stderr, "smi2stream: %v\n", err)
		return exitError
	}
	defer f.Close()
	res, err := Convert(f, in, o)
	if err != nil {
		fmt.Fprintf(stderr, "smi2stream: %v\n", err)
		return exitError
	}
	res.Report(stdout)
	if dry {
		return exitOK
	}
	path := out + ".samples.jsonl"
	if err := atomicfile.WriteNew(path, res.Stream, 0o644); err != nil {
		fmt.Fprintf(stderr, "smi2stream: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return exitOK
}
