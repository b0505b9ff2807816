package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/strictjson"
	"github.com/spf13/cobra"
)

type compareOptions struct {
	IO             *IO
	Ours           []string
	Baseline       []string
	OursLabel      string
	BaselineLabel  string
	AllowCrossBoot bool
	JSON           bool
}

func init() { register(NewCmdCompare) }

// NewCmdCompare builds `clockgate compare`.
func NewCmdCompare(s *IO) *cobra.Command {
	opts := &compareOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "compare --ours RECORD... --baseline RECORD...",
		Short: "Compare the clock state of two arms, for any harness",
		Long: `compare merges each side's leg records into an arm and runs the whole clock
contract on the pair: every leg check, the arm checks (one boot, one set of
static fields, the merged spread) and the ratio checks (one boot, one machine,
median offset at most 1.0%). It prints the clock block a ratio would carry.

--allow-cross-boot waives boot identity and nothing else: each waived check
is kept as a caveat and the block says cross_boot_override.

Exit status: 0 the clock state is established; 1 it is not; 2 a usage error
or a record that cannot be read at all.`,
		Example: `  clockgate compare --ours clocks/m/fastengine/r1.summary.json --baseline clocks/m/vllm/r1.summary.json
  clockgate compare --ours a/r*.summary.json --baseline b/r*.summary.json --allow-cross-boot --json`,
		// --ours and --baseline each take every record up to the next flag,
		// as a shell glob expands them, which pflag cannot express.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			help, err := parseCompareArgs(opts, args)
			if err != nil {
				return err
			}
			if help {
				return c.Help()
			}
			if len(opts.Ours) == 0 || len(opts.Baseline) == 0 {
				return usageErr("compare needs at least one record for --ours and one for --baseline")
			}
			if opts.OursLabel == opts.BaselineLabel {
				return usageErr("--ours-label and --baseline-label are both %q: an arm cannot be compared with itself", opts.OursLabel)
			}
			return runCompare(opts)
		},
	}
	f := cmd.Flags()
	f.StringSlice("ours", nil, "leg records of our arm: every argument up to the next flag (also repeated, or comma-separated)")
	f.StringSlice("baseline", nil, "leg records of the baseline arm, likewise")
	f.String("ours-label", "ours", "name of our arm in the output")
	f.String("baseline-label", "baseline", "name of the baseline arm in the output")
	f.Bool("allow-cross-boot", false, "waive boot identity (only), recording a caveat")
	f.Bool("json", false, "print the clock block as JSON")
	f.BoolP("help", "h", false, "help for compare")
	return cmd
}

// parseCompareArgs fills opts from compare's arguments: --ours and
// --baseline take every argument up to the next flag (and comma-separated
// lists, and --ours=A,B). It reports whether help was asked for.
func parseCompareArgs(opts *compareOptions, args []string) (help bool, err error) {
	opts.OursLabel, opts.BaselineLabel = "ours", "baseline"
	var records *[]string
	afterDash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if afterDash || !strings.HasPrefix(a, "-") || a == "-" {
			if records == nil {
				return false, usageErr("%s: a record must follow --ours or --baseline (see 'clockgate compare --help')", a)
			}
			*records = append(*records, splitRecords(a)...)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch name {
		case "--":
			afterDash = true
		case "--ours", "--baseline":
			records = &opts.Ours
			if name == "--baseline" {
				records = &opts.Baseline
			}
			if hasValue {
				*records = append(*records, splitRecords(value)...)
			}
		case "--ours-label", "--baseline-label":
			if !hasValue {
				if i+1 == len(args) {
					return false, usageErr("flag needs an argument: %s (see 'clockgate compare --help')", name)
				}
				i++
				value = args[i]
			}
			if name == "--ours-label" {
				opts.OursLabel = value
			} else {
				opts.BaselineLabel = value
			}
			records = nil
		case "--allow-cross-boot", "--json":
			on := true
			if hasValue {
				if on, err = strconv.ParseBool(value); err != nil {
					return false, usageErr("invalid argument %q for %s: want true or false", value, name)
				}
			}
			if name == "--json" {
				opts.JSON = on
			} else {
				opts.AllowCrossBoot = on
			}
			records = nil
		case "-h", "--help":
			return true, nil
		default:
			return false, usageErr("unknown flag: %s (see 'clockgate compare --help')", name)
		}
	}
	return false, nil
}

func splitRecords(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

func runCompare(opts *compareOptions) error {
	ours, err := loadLegs(opts.Ours)
	if err != nil {
		return err
	}
	base, err := loadLegs(opts.Baseline)
	if err != nil {
		return err
	}
	block := clocks.Compare(
		clocks.Merge(opts.OursLabel, ours, opts.AllowCrossBoot),
		clocks.Merge(opts.BaselineLabel, base, opts.AllowCrossBoot),
		opts.AllowCrossBoot)
	if opts.JSON {
		out, err := strictjson.Canonical(block)
		if err != nil {
			return err
		}
		if _, err := opts.IO.Out.Write(out); err != nil {
			return err
		}
	} else {
		writeBlock(opts.IO, block)
	}
	if bad := unreadable(append(ours, base...)); len(bad) > 0 {
		return usageErr("cannot read: %s", strings.Join(bad, "; "))
	}
	if !block.Established {
		return failed
	}
	return nil
}

func writeBlock(s *IO, b *clocks.Block) {
	verdict := "ESTABLISHED"
	if !b.Established {
		verdict = "NOT ESTABLISHED"
	}
	fmt.Fprintf(s.Out, "clock state: %s\n%s\n", verdict, report.Observed(b))
	for _, c := range b.Caveats {
		fmt.Fprintln(s.Out, report.Caveat(c))
	}
	for _, r := range b.Reasons {
		fmt.Fprintf(s.Out, "- %s: %s\n", r.Code, r.Message)
	}
}
