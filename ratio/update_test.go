package ratio

import "flag"

// The -update flag is accepted so that `go test ./... -update` runs in every
// package; this package has no golden files to rewrite.
var _ = flag.Bool("update", false, "rewrite golden files (this package has none)")
