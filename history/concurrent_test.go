package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/clockgate/clockgate/history/histgen"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// adderEnv makes the test binary an adder process: it adds the grids of
// the code-regression history whose index is ≡ its number modulo two, in
// order, to the SQLite file the variable names.
const adderEnv = "CLOCKGATE_HISTORY_ADDER"

func TestMain(m *testing.M) {
	if db := os.Getenv(adderEnv); db != "" {
		os.Exit(runAdder(db, os.Getenv(adderEnv+"_N")))
	}
	os.Exit(m.Run())
}

func runAdder(db, nth string) int {
	n, _ := strconv.Atoi(nth)
	s, err := Open(context.Background(), db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	tb := &testing.T{}
	tmpl := cleanGrid(tb)
	for i, g := range tmpl.Grids(codeRegression(tb)) {
		// Every adder adds every grid: half of them first, so that the
		// two race both on new grids and on grids the other added.
		if (i+n)%2 != 0 {
			continue
		}
		if err := addOne(s, tmpl, g, i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	for i, g := range tmpl.Grids(codeRegression(tb)) {
		if err := addOne(s, tmpl, g, i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func addOne(s Store, tmpl *histgen.Template, g histgen.Grid, i int) error {
	sum, all, err := tmpl.Documents(g)
	if err != nil {
		return err
	}
	gr, err := Parse(sum, all, fmt.Sprintf("grid%d/summary.json", i), fmt.Sprintf("grid%d/all-runs.json", i))
	if err != nil {
		return err
	}
	_, err = s.Add(context.Background(), gr)
	return err
}

// checkComplete wants s to hold exactly the code-regression history, each
// grid once with all its values, and to give its changes.
func checkComplete(t *testing.T, s Store) {
	t.Helper()
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(grids) != 60 {
		t.Fatalf("%d grids, want 60", len(grids))
	}
	for _, g := range grids {
		if len(g.Values) != 32 {
			t.Fatalf("grid %s: %d values, want 32", g.ID, len(g.Values))
		}
	}
	if got := changesOf(Analyze(grids, DefaultDetection), codeRegression(t)); len(got) != 18 {
		t.Errorf("%d changes, want 18:\n%v", len(got), got)
	}
}

// TestSQLiteTwoProcesses: two processes add the same 60 grids to one new
// SQLite file at once (each also creating its tables); nothing is lost or
// doubled.
func TestSQLiteTwoProcesses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.sqlite")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for n := 0; n < 2; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), adderEnv+"="+db, adderEnv+"_N="+strconv.Itoa(n))
			outs[n], errs[n] = cmd.CombinedOutput()
		}(n)
	}
	wg.Wait()
	for n := range errs {
		if errs[n] != nil {
			t.Fatalf("adder %d: %v\n%s", n, errs[n], outs[n])
		}
	}
	s, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkComplete(t, s)
}

// TestPostgresConcurrentAdders: eight connections add the same 60 grids
// to one new PostgreSQL schema at once, each migrating it first.
func TestPostgresConcurrentAdders(t *testing.T) {
	dsn := freshSchemaDSN(t)
	tmpl := cleanGrid(t)
	gs := tmpl.Grids(codeRegression(t))
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for n := range errs {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			s, err := Open(context.Background(), dsn)
			if err != nil {
				errs[n] = err
				return
			}
			defer s.Close()
			for k := range gs {
				i := (k + n*7) % len(gs)
				if err := addOne(s, tmpl, gs[i], i); err != nil {
					errs[n] = err
					return
				}
			}
		}(n)
	}
	wg.Wait()
	for n, err := range errs {
		if err != nil {
			t.Fatalf("adder %d: %v", n, err)
		}
	}
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkComplete(t, s)
}

// A SQLITE_BUSY that the busy handler does not wait out is waited out
// by busyRetry, and told from every other error.
func TestBusyRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.sqlite")
	hold, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if _, err := hold.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	lock, err := hold.Begin()
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	write := func() error {
		tx, err := other.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO t VALUES (1)`); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	if err := write(); !isBusy(err) {
		t.Fatalf("a write under another's lock: %v, want SQLITE_BUSY", err)
	}
	go func() {
		time.Sleep(150 * time.Millisecond)
		lock.Rollback()
	}()
	if err := busyRetry(context.Background(), write); err != nil {
		t.Fatalf("busyRetry: %v", err)
	}
	if isBusy(errors.New("database is locked")) || isBusy(nil) {
		t.Fatal("isBusy reads a message, or nil")
	}
}
