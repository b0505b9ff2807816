package main

import (
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/strictjson"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	IO      *IO
	Records []string
	JSON    bool
}

func init() { register(NewCmdCheck) }

// NewCmdCheck builds `clockgate check`.
func NewCmdCheck(s *IO) *cobra.Command {
	opts := &checkOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "check RECORD...",
		Short: "Validate leg clock records, and the streams beside them, against the contract",
		Long: `check judges each leg clock record (PREFIX.summary.json) together with the
stream beside it (PREFIX.samples.jsonl): the record must be valid and be exactly
what the stream recomputes to, and the window must pass every leg check of the
contract (busy samples, busy fraction, spread, throttle bits, persistence,
static fields, coverage: no gap over 3 intervals, and a window the sampler
ended itself: not cut off by --max-duration, not refused, not rebuilt by
'clockgate build').

A multi-host leg's directory (clockgate leg init) is judged whole: each host's
record and stream, the hosts together, and the client's marks in
DIR/points.jsonl, read as summarize reads them.

Exit status: 0 every leg is binding-eligible; 1 some leg is not; 2 a usage
error or a record that cannot be read at all (the JSON still lists it).`,
		Example: `  clockgate check clocks/llama/vllm/r1.summary.json
  clockgate check --json clocks/llama/*/r*.summary.json | jq '.[] | select(.binding_eligible|not)'
  clockgate check evidence/clocks/llama/dynamo/r1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Records = args
			return runCheck(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print [{"path","binding_eligible","reasons"}]`)
	return cmd
}

type checkResult struct {
	Path            string          `json:"path"`
	BindingEligible bool            `json:"binding_eligible"`
	Reasons         []clocks.Reason `json:"reasons"`
}

func runCheck(opts *checkOptions) error {
	legs, err := loadLegs(opts.Records)
	if err != nil {
		return err
	}
	results := make([]checkResult, len(legs))
	allOK := true
	for i, l := range legs {
		results[i] = checkResult{Path: opts.Records[i], BindingEligible: l.Eligible(), Reasons: append([]clocks.Reason{}, l.Reasons...)}
		allOK = allOK && l.Eligible()
	}
	if opts.JSON {
		out, err := strictjson.Canonical(results)
		if err != nil {
			return err
		}
		if _, err := opts.IO.Out.Write(out); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			verdict := "ok  "
			if !r.BindingEligible {
				verdict = "FAIL"
			}
			fmt.Fprintf(opts.IO.Out, "%s %s\n", verdict, r.Path)
			for _, why := range r.Reasons {
				fmt.Fprintf(opts.IO.Out, "     %s: %s\n", why.Code, why.Message)
			}
		}
	}
	if bad := unreadable(legs); len(bad) > 0 {
		return usageErr("cannot read: %s", strings.Join(bad, "; "))
	}
	if !allOK {
		return failed
	}
	return nil
}
