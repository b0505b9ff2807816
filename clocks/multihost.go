package clocks

import (
	"os"
	"path/filepath"
)

// MultiHostManifest is the file that makes a directory a multi-host leg
// (SPEC §12.3: DIR/leg.json, written by clockgate leg init).
const MultiHostManifest = "leg.json"

// IsMultiHostLeg reports whether path is a directory holding leg.json.
func IsMultiHostLeg(path string) bool {
	fi, err := os.Stat(filepath.Join(path, MultiHostManifest))
	return err == nil && fi.Mode().IsRegular()
}
