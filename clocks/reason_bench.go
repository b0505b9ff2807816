package clocks

// CodeFormatMismatch: the arms' legs were written by bench clients whose
// throughputs are not defined alike (SPEC §12.5); a ratio reason of
// THROUGHPUT, never waived.
const CodeFormatMismatch = "bench.format_mismatch"

func init() {
	Registry = append(Registry, CodeInfo{CodeFormatMismatch, ScopeRatio, false, false, Throughput,
		"the arms' results were written by bench clients whose throughputs are not defined alike"})
}
