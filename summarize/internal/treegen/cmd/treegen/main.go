// Command treegen writes the evidence trees of every scenario, the ones
// under testdata/trees:
//
//	go run ./summarize/internal/treegen/cmd/treegen -out testdata/trees
//
// It removes and rewrites each scenario's folder, and nothing else.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

func main() {
	out := flag.String("out", "testdata/trees", "the trees directory to write")
	flag.Parse()
	if err := treegen.Write(*out); err != nil {
		fmt.Fprintf(os.Stderr, "treegen: %v\n", err)
		os.Exit(1)
	}
}
