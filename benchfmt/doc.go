// Package benchfmt reads the result files benchmark clients write, one
// reader per client, each yielding the one bench point type a ratio reads
// (SPEC §2.1, §9.1, §12.5). Summarize, the grid and clockgate mark call
// down into it; none of them knows a format.
package benchfmt
