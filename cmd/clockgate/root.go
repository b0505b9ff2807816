package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	// ExitOK: done, every check passed.
	ExitOK = 0
	// ExitFailed: a check or the --strict gate failed.
	ExitFailed = 1
	// ExitUsage: a usage error, or an input that cannot be read at all.
	ExitUsage = 2
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// IO holds the streams a command reads and writes; nothing below cmd/
// touches os.Stdout.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// exitError carries an exit code; its message, when not empty, is printed
// once by Main as "clockgate: <message>".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr is an exit-2 error: bad flags, or an input that cannot be read.
func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// failed is an exit-1 outcome with nothing more to print.
var failed = &exitError{code: ExitFailed}

// commands holds each subcommand's constructor; every command file
// registers its own in init.
var commands []func(*IO) *cobra.Command

func register(c func(*IO) *cobra.Command) { commands = append(commands, c) }

// NewCmdRoot builds the clockgate command tree.
func NewCmdRoot(s *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "clockgate",
		Short: "Attribute every benchmark ratio to the GPU clock it was measured at",
		Long: `clockgate records GPU clock state for every benchmark leg and re-reads whole
evidence trees: it merges legs into arms, compares arms, attaches a clock
block to every throughput and memory ratio, and refuses, with named reasons,
every ratio whose clock state is not established.

Exit codes: 0 done; 1 a check or the --strict gate failed; 2 a usage error or
an input that cannot be read at all.`,
		Example: `  # record one leg while its benchmark runs
  clockgate record --out evidence/clocks/llama/vllm/r1 -- vllm bench serve --save-result ...

  # judge the whole tree after the grid; --strict fails CI on any NOT ESTABLISHED ratio
  clockgate summarize evidence --out evidence/summary --strict`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	for _, c := range commands {
		root.AddCommand(c(s))
	}
	return root
}

// Main runs clockgate with args and returns its exit code. Errors are
// printed once, as "clockgate: <message>".
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &IO{In: stdin, Out: stdout, ErrOut: stderr}
	root := NewCmdRoot(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "clockgate: %v\n", ee.err)
		}
		return ee.code
	}
	// Cobra's own errors (unknown command, bad args) are usage errors.
	fmt.Fprintf(stderr, "clockgate: %v\n", err)
	return ExitUsage
}

// stdoutIsTerminal reports whether w is a terminal, for progress output.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
