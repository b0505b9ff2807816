package clocks

import (
	"fmt"
	"os"
	"path/filepath"
)

// MultiHostManifest is the file that makes a directory a multi-host leg
// (SPEC §12.3: DIR/leg.json, written by clockgate leg init).
const MultiHostManifest = "leg.json"

// MultiHostNotJudged says why a multi-host leg has no clock verdict: it is
// recorded (clockgate leg init, sample --leg, leg close) but the judge
// does not read the directory form yet, so it is refused, never passed.
const MultiHostNotJudged = "multi-host legs are recorded but not judged yet: clockgate does not read the directory form (leg.json, hosts/<host>.*) yet, so this leg has no clock verdict; keep the directory as it is, and judge it with a clockgate that does"

// IsMultiHostLeg reports whether path is a directory holding leg.json.
func IsMultiHostLeg(path string) bool {
	fi, err := os.Stat(filepath.Join(path, MultiHostManifest))
	return err == nil && fi.Mode().IsRegular()
}

// MultiHostLeg is the leg files names when it is in the directory form,
// dir: fail-closed, clock.invalid with MultiHostNotJudged.
func MultiHostLeg(files LegFiles, dir string) *Leg {
	l := NewLeg(files)
	l.Reasons = append(l.Reasons, l.Reason(CodeInvalid, "%s", fmt.Sprintf("%s is a multi-host leg (%s): %s", dir, MultiHostManifest, MultiHostNotJudged)))
	return l
}
