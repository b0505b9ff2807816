// Command clockgate makes every benchmark ratio attributable to the GPU clock
// it was measured at: it records clock state per benchmark leg and judges
// whole evidence trees against the clock contract.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
