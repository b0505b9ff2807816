package summarize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// GridDir is the directory clockgate grid keeps in TREE: its journal,
// staging, logs and failed legs. The walk skips it without a warning.
const GridDir = "grid"

// gridJournal is the grid's journal, relative to TREE.
const gridJournal = GridDir + "/journal.jsonl"

// GridBlock is what the grid's journal says of how the tree was run
// (SPEC §11.2): summary.json's "grid" member.
type GridBlock struct {
	PlanSHA256 string     `json:"plan_sha256"`
	Order      string     `json:"order"`
	Seed       *int64     `json:"seed"`
	Legs       []GridLeg  `json:"legs"`
	Failed     []GridFail `json:"failed"`
}

// GridLeg is one committed leg: its block, each GPU's temperature when it
// was let start, the cooldown wait, and how many times its server was
// started.
type GridLeg struct {
	Engine     string    `json:"engine"`
	N          int       `json:"n"`
	Block      int       `json:"block"`
	StartTempC []float64 `json:"start_temp_c"`
	WaitS      float64   `json:"wait_s"`
	Attempts   int       `json:"attempts"`
}

// GridFail is one failed attempt of a leg.
type GridFail struct {
	Engine string `json:"engine"`
	N      int    `json:"n"`
	Phase  string `json:"phase"`
	Cause  string `json:"cause"`
}

// gridEvent is the part of a journal line summarize reads.
type gridEvent struct {
	Event      string    `json:"event"`
	PlanSHA256 string    `json:"plan_sha256"`
	Order      string    `json:"order"`
	Seed       *int64    `json:"seed"`
	Model      string    `json:"model"`
	Engine     string    `json:"engine"`
	N          int       `json:"n"`
	Block      int       `json:"block"`
	TempC      []float64 `json:"temp_c"`
	WaitS      *float64  `json:"wait_s"`
	Phase      string    `json:"phase"`
	Cause      string    `json:"cause"`
}

// readGrid reads the grid's journal under root, when there is one: the
// grid block, and warnings (a journal that cannot be read; a leg the
// journal lists as failed and never committed, which the tree holds).
func readGrid(root string, legs []*Leg) (*GridBlock, []string) {
	path := filepath.Join(root, filepath.FromSlash(gridJournal))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v; no grid block", gridJournal, unwrapPath(err))}
	}
	var evs []gridEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		var e gridEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Event == "" {
			if !bytes.HasSuffix(data, []byte("\n")) && bytes.HasSuffix(data, sc.Bytes()) {
				break // the last line, cut short when the grid died
			}
			return nil, []string{fmt.Sprintf("%s:%d: not a journal event; no grid block", gridJournal, line)}
		}
		evs = append(evs, e)
	}
	if len(evs) == 0 || evs[0].Event != "grid.start" {
		return nil, []string{fmt.Sprintf("%s:1: want grid.start first; no grid block", gridJournal)}
	}
	st := evs[0]
	g := &GridBlock{PlanSHA256: st.PlanSHA256, Order: st.Order, Seed: st.Seed, Legs: []GridLeg{}, Failed: []GridFail{}}
	type key struct {
		e string
		n int
	}
	starts := map[key]int{}
	idle := map[key]gridEvent{}
	committed := map[key]bool{}
	for _, e := range evs {
		k := key{e.Engine, e.N}
		switch e.Event {
		case "server.start":
			starts[k]++
		case "leg.idle":
			idle[k] = e
		case "leg.commit":
			committed[k] = true
			gl := GridLeg{Engine: e.Engine, N: e.N, Block: e.Block, StartTempC: idle[k].TempC, Attempts: starts[k]}
			if gl.StartTempC == nil {
				gl.StartTempC = []float64{}
			}
			if w := idle[k].WaitS; w != nil {
				gl.WaitS = *w
			}
			g.Legs = append(g.Legs, gl)
		case "leg.fail":
			g.Failed = append(g.Failed, GridFail{Engine: e.Engine, N: e.N, Phase: e.Phase, Cause: e.Cause})
		}
	}
	var warnings []string
	warned := map[key]bool{}
	for _, f := range g.Failed {
		k := key{f.Engine, f.N}
		if committed[k] || warned[k] {
			continue
		}
		for _, l := range legs {
			if l.Engine == f.Engine && l.Run == f.N && (st.Model == "" || l.Model == st.Model) {
				warned[k] = true
				warnings = append(warnings, fmt.Sprintf("%s/%s/r%s: %s lists this leg as failed (%s) and never committed it, yet the tree holds it: it is not the grid's evidence; move it out of the tree, or run the grid again to resume",
					l.Model, l.Engine, strconv.Itoa(l.Run), gridJournal, f.Phase))
				break
			}
		}
	}
	return g, warnings
}
