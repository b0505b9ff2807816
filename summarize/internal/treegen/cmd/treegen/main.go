// Command treegen writes the evidence trees of every scenario, the ones
// under testdata/trees:
//
//	go run ./summarize/internal/treegen/cmd/treegen -out testdata/trees
//
// It removes and rewrites each scenario's folder, and nothing else. With
// -legs it writes one big synthetic tree instead, for scale benchmarks:
//
//	go run ./summarize/internal/treegen/cmd/treegen -out /tmp/big -legs 400 -samples 3600
//	go run ./summarize/internal/treegen/cmd/treegen -out /tmp/few -legs 20000 -samples 60 -per-arm 10000
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

func main() {
	out := flag.String("out", "testdata/trees", "the trees directory to write")
	legs := flag.Int("legs", 0, "write one big synthetic tree of this many legs into -out instead")
	samples := flag.Int("samples", 3600, "with -legs: clock samples per leg")
	perArm := flag.Int("per-arm", 20, "with -legs: legs per (model, engine); -legs/2 writes two arms holding every leg")
	flag.Parse()
	var err error
	if *legs > 0 {
		err = treegen.WriteBigArms(*out, *legs, *samples, *perArm)
	} else {
		err = treegen.Write(*out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "treegen: %v\n", err)
		os.Exit(1)
	}
}
