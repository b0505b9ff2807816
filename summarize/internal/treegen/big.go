package treegen

import (
	"fmt"
	"os"
	"path/filepath"
)

// bigRunsPerArm is how many legs each (model, engine) of a big tree has.
const bigRunsPerArm = 20

// WriteBig writes a synthetic tree of legs clean legs, each with samples
// clock samples at 1 Hz (four busy concurrency points, idle gaps between
// them), for scale benchmarks: two engines per model, twenty runs per arm.
// It writes leg by leg, so memory stays bounded whatever the size.
func WriteBig(dir string, legs, samples int) error {
	return WriteBigArms(dir, legs, samples, bigRunsPerArm)
}

// WriteBigArms writes a big tree as WriteBig does, with runsPerArm legs in
// each (model, engine) instead of twenty: legs/2 of them makes the
// few-arms-of-many-legs shape, one model whose two arms hold every leg.
func WriteBigArms(dir string, legs, samples, runsPerArm int) error {
	const gap = 10
	if runsPerArm < 1 {
		return fmt.Errorf("want at least 1 leg per arm, found %d", runsPerArm)
	}
	busyAll := samples - gap*(len(grid)-1)
	if legs < 1 || busyAll < len(grid) {
		return fmt.Errorf("want at least 1 leg and %d samples", len(grid)+gap*(len(grid)-1))
	}
	per := busyAll / len(grid)
	tail := busyAll - per*len(grid)
	t := &tree{name: "big"}
	engines := []engine{fastengine, vllm}
	for i := 0; i < legs; i++ {
		arm := i / runsPerArm
		m := llama
		m.dir = fmt.Sprintf("model-%02d", arm/len(engines))
		e := engines[arm%len(engines)]
		run := i%runsPerArm + 1
		l := t.leg(m, e, run, gb10, boot13, func(l *leg) {
			l.busy = []int{per, per, per, per}
			l.idleGap, l.idleTail = gap, tail
		})
		for p, b := range t.render(l) {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, b, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
