package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/foreign"
	"github.com/clockgate/clockgate/sampler"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type importOptions struct {
	IO         *IO
	Format     string
	Out        string
	Columns    string
	TZ         string
	Start      string
	Interval   time.Duration
	BusyAbove  int
	From, To   string
	Prometheus string
	Host, GPU  string
	Node       string
	RawScrapes bool
	Files      []string
	set        map[string]string
}

func init() { register(NewCmdImport) }

// NewCmdImport builds `clockgate import`.
func NewCmdImport(s *IO) *cobra.Command {
	opts := &importOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "import --format FORMAT FILE… --out PREFIX",
		Short: "Convert telemetry another recorder wrote into a clock stream and record",
		Long: `import converts one leg's GPU telemetry that clockgate did not record into
a clock stream (PREFIX.samples.jsonl, every line with imported_from), the
record it recomputes to (PREFIX.summary.json, stop_reason imported) and
PREFIX.import.json: each file's SHA-256, the format, the column map, the
time zone, the values flags gave, the lines dropped and the
clock.unproven_* codes for what the source cannot prove. summarize then
judges the leg like any other, those codes included. PREFIX's directories
are created as record creates them.

Where PREFIX is TREE/clocks/<model>/<engine>/r<N> and the log has the GPU
memory used (nvidia-smi memory.used, dmon's fb, DCGM_FI_DEV_FB_USED,
amd-smi used_vram or vram_used), import also writes the leg's memory record,
TREE/memory/<model>/<engine>/r<N>.summary.json, as record does: the peak
over the readings of the sum over the leg's GPUs, peak_host_rss_mib null
(not recorded). A log without it leaves the leg memory.missing, and import
says which column or metric to log.

Formats: nvidia-smi-csv (nvidia-smi --query-gpu=… --format=csv -l/-lms,
with or without header and units), nvidia-smi-dmon (nvidia-smi dmon, -o DT
for time), amd-smi-csv (amd-smi metric --csv or monitor --csv, -w for
time: the lowest XCD's GFX clock is the SM clock, the violation
accumulators give the throttle bits), prometheus (a Prometheus API matrix of dcgm-exporter metrics;
--raw-scrapes when it answers an instant query of metric[DURATION], else it
is read as query_range steps and carries clock.unproven_coverage).
--prometheus URL --from T --to T queries a live server for the raw scrapes.

A source that cannot be converted faithfully is refused (exit 2), naming
file, line and column, and nothing is written.`,
		Example: `  clockgate import --format nvidia-smi-csv --tz -07:00 power.csv --out evidence/clocks/qwen/vllm/r1
  clockgate import --format prometheus --prometheus http://127.0.0.1:9090 --host node-a \
      --from 2026-07-18T17:00:00Z --to 2026-07-18T17:10:00Z --out evidence/clocks/qwen/vllm/r1`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Files = args
			opts.set = map[string]string{}
			c.Flags().Visit(func(f *pflag.Flag) {
				if f.Name != "out" && f.Name != "format" {
					opts.set[f.Name] = f.Value.String()
				}
			})
			return runImport(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "", "the source's format: "+strings.Join(foreign.Formats, ", "))
	f.StringVar(&opts.Out, "out", "", "write PREFIX.samples.jsonl, PREFIX.summary.json and PREFIX.import.json (none may exist)")
	f.StringVar(&opts.Columns, "columns", "", "a headerless CSV's --query-gpu field list, comma-separated")
	f.StringVar(&opts.TZ, "tz", "", "the zone of times printed without one, and of the bench results' dates (recorded in the record as the sampler records its own): UTC, an IANA zone, or an offset like -07:00")
	f.StringVar(&opts.Start, "start", "", "the first sample's time (RFC 3339), for a source with no time column (needs --interval)")
	f.DurationVar(&opts.Interval, "interval", 0, "the time between readings, for a source with no time column; also the record's interval_s (default: the median gap)")
	f.IntVar(&opts.BusyAbove, "busy-above-mhz", 0, "a source without utilization: count a sample busy when its SM clock is above N MHz (clock.unproven_busy)")
	f.StringVar(&opts.From, "from", "", "keep samples from this time (RFC 3339)")
	f.StringVar(&opts.To, "to", "", "keep samples up to this time (RFC 3339)")
	f.StringVar(&opts.Prometheus, "prometheus", "", "query this Prometheus for raw dcgm-exporter scrapes between --from and --to")
	f.StringVar(&opts.Host, "host", "", "select series by their Hostname/hostname label")
	f.StringVar(&opts.GPU, "gpu", "", "keep only these GPUs, comma-separated: indices or UUIDs (a Prometheus series by its gpu or UUID/uuid label)")
	f.StringVar(&opts.Node, "node-instance", "", "with --prometheus: the instance label of the node's node_exporter, whose node_boot_time_seconds proves the boot")
	f.BoolVar(&opts.RawScrapes, "raw-scrapes", false, "a prometheus file answers an instant query of a range selector (raw scrapes), not query_range")
	return cmd
}

// importFiles are the three files an import writes, by suffix.
var importFiles = []string{".samples.jsonl", ".summary.json", ".import.json"}

func runImport(opts *importOptions) error {
	if opts.Out == "" {
		return usageErr("import: --out PREFIX is required")
	}
	if opts.Format == "" {
		return usageErr("import: --format is required: one of %s", strings.Join(foreign.Formats, ", "))
	}
	if _, err := foreign.ParserFor(opts.Format); err != nil {
		return usageErr("import: %v", err)
	}
	live := opts.Prometheus != ""
	switch {
	case live && opts.Format != foreign.FormatPrometheus:
		return usageErr("import: --prometheus needs --format prometheus")
	case live && len(opts.Files) > 0:
		return usageErr("import: --prometheus reads the server, not files: %s", strings.Join(opts.Files, " "))
	case !live && len(opts.Files) == 0:
		return usageErr("import: no FILE given")
	}
	o := foreign.Options{BusyAboveMHz: opts.BusyAbove, Interval: opts.Interval, Host: opts.Host, GPU: opts.GPU, NodeInstance: opts.Node,
		RawScrapes: opts.RawScrapes, Given: opts.set}
	if opts.BusyAbove < 0 {
		return usageErr("import: --busy-above-mhz %d: want a positive number of MHz", opts.BusyAbove)
	}
	if opts.Interval < 0 {
		return usageErr("import: --interval %v: want a positive duration", opts.Interval)
	}
	if opts.Columns != "" {
		o.Columns = strings.Split(opts.Columns, ",")
	}
	if _, given := opts.set["tz"]; given || opts.TZ != "" {
		// "Local" (Go's name for the running machine's zone) and "" name
		// no zone: the record would be read in whatever zone the machine
		// summarizing it has.
		if strings.TrimSpace(opts.TZ) == "" || strings.EqualFold(opts.TZ, "Local") {
			return usageErr("import: --tz %q names no zone (it would be read as the zone of whichever machine reads the record): give the bench host's IANA zone (--tz America/Los_Angeles) or its UTC offset (--tz -07:00)", opts.TZ)
		}
		loc, err := parseZone(opts.TZ)
		if err != nil {
			return usageErr("import: --tz %q: %v", opts.TZ, err)
		}
		o.TZ, o.TZName = loc, opts.TZ
	}
	for _, t := range []struct {
		flag, v string
		to      *time.Time
	}{{"start", opts.Start, &o.Start}, {"from", opts.From, &o.From}, {"to", opts.To, &o.To}} {
		if t.v == "" {
			continue
		}
		x, err := time.Parse(time.RFC3339Nano, t.v)
		if err != nil {
			return usageErr("import: --%s %q: want an RFC 3339 time like 2026-07-18T17:00:00Z", t.flag, t.v)
		}
		*t.to = x
	}
	if opts.Start != "" && opts.Interval == 0 {
		return usageErr("import: --start needs --interval")
	}
	for _, s := range importFiles {
		if _, err := os.Lstat(opts.Out + s); err == nil {
			return usageErr("import: %s%s already exists; import never replaces a file", opts.Out, s)
		}
	}
	memPath, _ := sampler.MemoryPath(opts.Out)
	if memPath != "" {
		if _, err := os.Lstat(memPath); err == nil {
			return usageErr("import: %s already exists; import never replaces a file", memPath)
		}
	}
	var res *foreign.Result
	var err error
	if live {
		in, _, qerr := foreign.QueryLive(opts.Prometheus, &o, &http.Client{Timeout: 60 * time.Second})
		if qerr != nil {
			return usageErr("import: %v", qerr)
		}
		res, err = foreign.ConvertLive(in, o)
	} else {
		var inputs []foreign.Input
		for _, p := range opts.Files {
			data, rerr := readInput(p)
			if rerr != nil {
				return usageErr("import: %v", rerr)
			}
			inputs = append(inputs, foreign.Input{Path: p, Data: data})
		}
		res, err = foreign.Convert(opts.Format, inputs, o)
	}
	if err != nil {
		return usageErr("import: %v", err)
	}
	if o.TZ != nil {
		// The zone is the bench host's too, as the sampler records its own
		// (SPEC §12.1.1): what places the bench results' dates in time.
		name := opts.TZ
		if name[0] == '+' || name[0] == '-' {
			name = ""
		}
		res.Record.Window.StampZone(o.TZ, name)
	}
	if err := writeImport(opts.Out, memPath, res); err != nil {
		return err
	}
	switch {
	case memPath == "":
	case res.Memory == nil:
		fmt.Fprintf(opts.IO.ErrOut, "clockgate import: no memory record written, so the leg will be %s: %s\n", clocks.CodeMemoryMissing, res.MemoryWhy)
	default:
		fmt.Fprintf(opts.IO.ErrOut, "clockgate import: memory record %s: peak GPU memory %s MiB over %d readings (host RSS not recorded)\n",
			memPath, strconv.FormatFloat(res.Memory.PeakGPUMemoryMiB, 'f', -1, 64), res.Memory.N)
	}
	return nil
}

// readInput reads one source file, regular and at most 1 GiB.
func readInput(p string) ([]byte, error) {
	f, err := clocks.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > 1<<30 {
		return nil, fmt.Errorf("%s: %d bytes, over 1 GiB", p, st.Size())
	}
	data := make([]byte, 0, st.Size())
	buf := make([]byte, 1<<20)
	for {
		n, rerr := f.Read(buf)
		data = append(data, buf[:n]...)
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return data, nil
			}
			return nil, rerr
		}
	}
}

// writeImport writes the three files, and the memory record at memPath
// where the log gives one, each atomically and new, creating the
// directories they go in, as record does; if one cannot be written, those
// already written are removed. Its errors name the file, never the
// temporary file it was written through.
func writeImport(prefix, memPath string, res *foreign.Result) error {
	rec, err := json.MarshalIndent(res.Record, "", "  ")
	if err != nil {
		return err
	}
	im, err := json.MarshalIndent(res.Import, "", "  ")
	if err != nil {
		return err
	}
	paths := []string{prefix + importFiles[0], prefix + importFiles[1], prefix + importFiles[2]}
	data := [][]byte{res.Stream, append(rec, '\n'), append(im, '\n')}
	write := func(i int) error {
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			return err
		}
		return atomicfile.WriteNew(paths[i], data[i], 0o644)
	}
	var written []string
	for i, p := range append(paths, memPath) {
		var werr error
		switch {
		case i < len(data):
			werr = write(i)
		case p == "" || res.Memory == nil:
			continue
		default:
			// The memory record, written as the sampler writes it.
			werr = sampler.WriteMemoryRecord(p, res.Memory)
		}
		if werr != nil {
			for _, w := range written {
				os.Remove(w)
			}
			var pe *fs.PathError
			if errors.As(werr, &pe) {
				werr = pe.Err
			}
			return usageErr("import: cannot write %s: %v", p, werr)
		}
		written = append(written, p)
	}
	return nil
}

// parseZone reads --tz: UTC, an IANA name, or an offset like -07:00.
func parseZone(s string) (*time.Location, error) {
	if len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':' {
		h, err1 := strconv.Atoi(s[1:3])
		m, err2 := strconv.Atoi(s[4:6])
		if err1 != nil || err2 != nil || h > 14 || m > 59 {
			return nil, fmt.Errorf("not an offset like -07:00")
		}
		off := h*3600 + m*60
		if s[0] == '-' {
			off = -off
		}
		return time.FixedZone(s, off), nil
	}
	return time.LoadLocation(s)
}
