package summarize

import (
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// summaryDoc is summary.json, the ratio document.
type summaryDoc struct {
	AllowCrossBoot bool                `json:"allow_cross_boot"`
	Contract       clocks.Contract     `json:"contract"`
	BenchContract  BenchContract       `json:"bench_contract"`
	GatePass       bool                `json:"gate_pass"`
	Comparisons    []*ratio.Comparison `json:"comparisons"`
	Warnings       []string            `json:"warnings"`
}

// allRunsDoc is all-runs.json, one row per leg plus every clock block.
type allRunsDoc struct {
	AllowCrossBoot bool            `json:"allow_cross_boot"`
	Contract       clocks.Contract `json:"contract"`
	BenchContract  BenchContract   `json:"bench_contract"`
	Legs           []legRow        `json:"legs"`
	Comparisons    []blockRow      `json:"comparisons"`
}

type legRow struct {
	Model           string          `json:"model"`
	Engine          string          `json:"engine"`
	Run             int             `json:"run"`
	BindingEligible bool            `json:"binding_eligible"`
	Reasons         []clocks.Reason `json:"reasons"`
	// Clock is the leg's clock record as read; null when missing or invalid.
	Clock *clocks.Record `json:"clock"`
	// Memory is the memory record verbatim; null when missing or invalid.
	Memory map[string]any `json:"memory"`
	// BenchFormats are the formats the leg's bench results were read as.
	BenchFormats []string `json:"bench_formats"`
	// Bench holds each valid point's object as kept (Point.Raw), in point
	// order.
	Bench []map[string]any `json:"bench"`
}

// BenchContract is the bench evidence's constants in force.
type BenchContract struct {
	// MaxBenchFileMiB is MaxBenchBytes, in MiB.
	MaxBenchFileMiB int `json:"max_bench_file_mib"`
	// MaxOutputDiffPct is ratio.MaxOutputDiffPct, in percent.
	MaxOutputDiffPct float64 `json:"max_output_diff_pct"`
}

// BenchInForce is the bench contract in force.
func BenchInForce() BenchContract {
	return BenchContract{MaxBenchFileMiB: MaxBenchBytes >> 20, MaxOutputDiffPct: ratio.MaxOutputDiffPct}
}

type blockRow struct {
	Model    string        `json:"model"`
	Ours     string        `json:"ours"`
	Baseline string        `json:"baseline"`
	Clock    *clocks.Block `json:"clock"`
}

// SummaryJSON encodes summary.json: the contract in force,
// allow_cross_boot, gate_pass, every comparison's THROUGHPUT and MEMORY
// ratio, and the warnings. The same summary always gives the same bytes.
func (s *Summary) SummaryJSON() ([]byte, error) {
	return strictjson.Canonical(summaryDoc{
		AllowCrossBoot: s.AllowCrossBoot,
		Contract:       s.Contract,
		BenchContract:  BenchInForce(),
		GatePass:       s.GatePass,
		Comparisons:    nonNil(s.Comparisons),
		Warnings:       nonNil(s.Warnings),
	})
}

// AllRunsJSON encodes all-runs.json: one row per leg and every
// comparison's clock block. The same summary always gives the same bytes.
func (s *Summary) AllRunsJSON() ([]byte, error) {
	doc := allRunsDoc{AllowCrossBoot: s.AllowCrossBoot, Contract: s.Contract, BenchContract: BenchInForce(),
		Legs: []legRow{}, Comparisons: []blockRow{}}
	for _, l := range s.Legs {
		row := legRow{Model: l.Model, Engine: l.Engine, Run: l.Run, BindingEligible: l.BindingEligible(),
			Reasons: nonNil(l.Reasons), Clock: l.Clock.Record, BenchFormats: nonNil(l.BenchFormats),
			Bench: []map[string]any{}}
		if l.Memory != nil {
			row.Memory = l.Memory.Raw
		}
		for _, p := range l.Points {
			row.Bench = append(row.Bench, p.Raw)
		}
		doc.Legs = append(doc.Legs, row)
	}
	for _, c := range s.Comparisons {
		doc.Comparisons = append(doc.Comparisons, blockRow{Model: c.Model, Ours: c.Ours, Baseline: c.Baseline,
			Clock: c.Throughput.Clock})
	}
	return strictjson.Canonical(doc)
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
