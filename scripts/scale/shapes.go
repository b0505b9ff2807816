package main

// The memory shapes: the same legs × samples laid out as many arms of
// twenty legs (the generator's big tree) or as few arms of many legs (one
// model, two arms holding every leg), peak RSS of summarize --out on each,
// and the growth per leg between two sizes.

import (
	"fmt"
	"os"
	"path/filepath"
)

// shape is how a tree's legs are laid out in arms.
type shape struct {
	name string
	// perArm is how many legs each arm of a tree of legs legs holds.
	perArm func(legs int) int
}

// manyArms is the generator's big tree: arms of twenty legs.
var manyArms = shape{"many arms of 20 legs", func(int) int { return 20 }}

// fewArms is one model whose two arms hold every leg.
var fewArms = shape{"two arms of many legs", func(legs int) int { return max(1, legs/2) }}

// shapes are the shapes -curve measures.
var shapes = []shape{manyArms, fewArms}

// generateShape writes a tree of legs × samples laid out as sh, once.
func generateShape(dir string, legs, samples int, sh shape) string {
	per := sh.perArm(legs)
	if per == 20 {
		return generate(dir, legs, samples)
	}
	tree := filepath.Join(dir, fmt.Sprintf("tree-%dx%d-per-arm%d", legs, samples, per))
	if _, err := os.Stat(tree); err != nil {
		fmt.Fprintf(os.Stderr, "generating %d legs × %d samples, %d legs an arm, into %s\n", legs, samples, per, tree)
		run("go", "run", "./summarize/internal/treegen/cmd/treegen", "-out", tree,
			"-legs", fmt.Sprint(legs), "-samples", fmt.Sprint(samples), "-per-arm", fmt.Sprint(per))
	}
	return tree
}

// shapeName names a tree of legs × samples laid out as sh, in a table.
func shapeName(legs, samples int, sh shape) string {
	if sh.perArm(legs) == 20 {
		return fmt.Sprintf("%d legs × %d samples", legs, samples)
	}
	return fmt.Sprintf("%d legs × %d samples as two arms", legs, samples)
}

// growth is the peak RSS of summarize --out on one shape at two sizes.
type growth struct {
	shape         string
	small, large  int   // legs
	smallRSS, rss int64 // KiB
}

// perLegKiB is the peak RSS added per leg from the small size to the
// large one, in KiB.
func (g growth) perLegKiB() float64 {
	return float64(g.rss-g.smallRSS) / float64(g.large-g.small)
}

// growthRuns is how many times measureGrowth runs --out at each size: a
// peak moves by several MiB from run to run with the collector's pacing,
// and the lowest of two is steadier than one.
const growthRuns = 2

// measureGrowth runs summarize --out on sh at each size, growthRuns times
// in turn, and returns its growth from the first size to the last, each
// size's lowest peak.
func measureGrowth(bin, dir string, samples int, sh shape, sizes [2]int) growth {
	g := growth{shape: sh.name, small: sizes[0], large: sizes[1]}
	trees := [2]string{generateShape(dir, sizes[0], samples, sh), generateShape(dir, sizes[1], samples, sh)}
	for r := 0; r < growthRuns; r++ {
		for k, tree := range trees {
			out := tree + "-out"
			m := measure([]string{bin, "summarize", "--out", out, tree})
			os.RemoveAll(out)
			if k == 0 && (r == 0 || m.maxRSS < g.smallRSS) {
				g.smallRSS = m.maxRSS
			}
			if k == 1 && (r == 0 || m.maxRSS < g.rss) {
				g.rss = m.maxRSS
			}
		}
	}
	return g
}

// printGrowth prints growths as a table.
func printGrowth(gs []growth) {
	fmt.Println("| shape | legs × 60 samples | --out peak RSS | legs × 60 samples | --out peak RSS | growth per leg |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, g := range gs {
		fmt.Printf("| %s | %d | %.1f MiB | %d | %.1f MiB | %.1f KiB |\n", g.shape, g.small, float64(g.smallRSS)/1024,
			g.large, float64(g.rss)/1024, g.perLegKiB())
	}
}

// shapeBounds are the guard's bounds on the shapes: the most peak RSS of
// --out on the larger tree of each, and the most it may grow per leg
// between the two sizes.
type shapeBounds struct {
	// MaxRSSMiB and MaxGrowthKiB bound the few-arms shape.
	MaxRSSMiB, MaxGrowthKiB float64
	// ManyArmsRSSMiB and ManyArmsGrowthKiB bound the many-arms shape.
	ManyArmsRSSMiB, ManyArmsGrowthKiB float64
}

// shortShapeSizes are -short's two sizes of each shape, legs × 60
// samples: the second arm of the few-arms tree holds 1,000 legs, more
// than any golden tree's arm by far, and both run in seconds.
var shortShapeSizes = [2]int{1000, 2000}

// shortShapes are -short's bounds on the shapes (docs/performance-notes.md,
// "Memory by shape"). Measured in three -short runs on the 2-core VM, load
// average 15–21, --out at 1,000 and 2,000 legs × 60: many arms of 20 legs
// 43–50 and 59–63 MiB (13.6–16.3 KiB a leg), two arms 58–60 and 87–95
// MiB (28–37 KiB a leg, nearly all of it report.md and report.html
// rendering every leg of an arm). The bounds are about a fifth above the
// highest peak and half above the highest growth, room for the
// collector's pacing, and fail a leg that keeps its samples (20 KiB a leg
// of 60, twice that in RSS with the collector's headroom) or an arm's
// output held whole once more. They come down to the goal (4 KiB a leg,
// 128 MiB at 20,000 legs) as the rendering and the legs' state are
// bounded.
var shortShapes = shapeBounds{MaxRSSMiB: 112, MaxGrowthKiB: 48, ManyArmsRSSMiB: 80, ManyArmsGrowthKiB: 24}

// check returns a message for every growth past its shape's bound.
func (b shapeBounds) check(gs []growth) []string {
	var bad []string
	for _, g := range gs {
		maxRSS, maxGrowth := b.MaxRSSMiB, b.MaxGrowthKiB
		if g.shape == manyArms.name {
			maxRSS, maxGrowth = b.ManyArmsRSSMiB, b.ManyArmsGrowthKiB
		}
		if rss := float64(g.rss) / 1024; maxRSS > 0 && rss > maxRSS {
			bad = append(bad, fmt.Sprintf("%s, %d legs × 60: --out peaked at %.1f MiB RSS; the bound is %.0f MiB", g.shape, g.large, rss, maxRSS))
		}
		if per := g.perLegKiB(); maxGrowth > 0 && per > maxGrowth {
			bad = append(bad, fmt.Sprintf("%s: --out's peak RSS grew by %.1f KiB a leg from %d legs (%.1f MiB) to %d (%.1f MiB); the bound is %.0f KiB a leg",
				g.shape, per, g.small, float64(g.smallRSS)/1024, g.large, float64(g.rss)/1024, maxGrowth))
		}
	}
	return bad
}

// shapeCurve measures summarize --out on every shape at each number of
// legs × 60 samples, once each, and prints peak RSS, time and the growth
// per leg from the size before.
func shapeCurve(bin, dir string, sizes []int) {
	fmt.Println("| shape | legs × 60 samples | bytes | --out time | peak RSS | growth per leg from the size before |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, sh := range shapes {
		var prevLegs int
		var prevRSS int64
		for _, n := range sizes {
			tree := generateShape(dir, n, 60, sh)
			_, size := listFiles(tree)
			out := tree + "-out"
			m := measure([]string{bin, "summarize", "--out", out, tree})
			os.RemoveAll(out)
			grow := "–"
			if prevLegs > 0 {
				grow = fmt.Sprintf("%.1f KiB", float64(m.maxRSS-prevRSS)/float64(n-prevLegs))
			}
			fmt.Printf("| %s | %d | %.0f MiB | %.1f s | %.1f MiB | %s |\n", sh.name, n, float64(size)/(1<<20), m.wall.Seconds(), float64(m.maxRSS)/1024, grow)
			prevLegs, prevRSS = n, m.maxRSS
		}
	}
}
