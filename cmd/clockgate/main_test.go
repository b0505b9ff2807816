package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clockgate/clockgate/sampler"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes this test binary also the clockgate command that the
// testscript scripts run with `exec clockgate …`.
func TestMain(m *testing.M) {
	// Under -race, a process waits a second at its exit for the detector's
	// report; the tests time how fast the sampler stops, not that.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	// Legs recorded here read a quiet host, the fixture tree: this
	// machine's own /proc shows its steal and its other tenants, which a
	// test that expects ESTABLISHED cannot hold still.
	if os.Getenv(sampler.HostRootEnv) == "" {
		if root, err := filepath.Abs("../../host/testdata/vm"); err == nil {
			os.Setenv(sampler.HostRootEnv, root)
		}
	}
	testscript.Main(m, map[string]func(){
		"clockgate": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. $TREES is
// the repository's testdata/trees and $GOLDEN its golden/, so a script can
// summarize a committed tree and compare the output with its golden file.
func TestScripts(t *testing.T) {
	trees, err := filepath.Abs("../../testdata/trees")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs("../../golden")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("TREES", trees)
			e.Setenv("GOLDEN", golden)
			return nil
		},
	})
}
