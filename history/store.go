package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	// The two stores' database/sql drivers: pgx for PostgreSQL, and
	// modernc's SQLite, a translation of SQLite to Go, so that the binary
	// stays free of cgo.
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// DefaultDSN is the history a command uses when told none: a SQLite file
// in the working directory.
const DefaultDSN = "clockgate-history.sqlite"

// Store keeps grids. Adding a grid it has (the same ID) changes nothing;
// adders running at once, in several processes or on several boxes, lose
// nothing.
type Store interface {
	// Add records g; added is false when the store had it already.
	Add(ctx context.Context, g *Grid) (added bool, err error)
	// Grids returns every grid, by date, then ID, each with its values
	// sorted by key.
	Grids(ctx context.Context) ([]*Grid, error)
	Close() error
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the history at dsn, a postgres:// URL or a SQLite file path,
// creating its tables or migrating them to the current version.
func Open(ctx context.Context, dsn string) (Store, error) {
	if dsn == "" {
		return nil, errors.New("history DSN: want a SQLite file path or a postgres:// URL, found an empty string")
	}
	var s *sqlStore
	var err error
	if IsPostgres(dsn) {
		s, err = openPostgres(dsn)
	} else {
		s, err = openSQLite(dsn)
	}
	if err != nil {
		return nil, err
	}
	if err := busyRetry(ctx, func() error { return s.migrate(ctx) }); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return s, nil
}

// dialect is what differs between the two databases: how a query names
// its parameters, and how migrations are kept to one at a time.
type dialect struct {
	// rebind turns a query written with $1, $2, … into the database's.
	rebind func(string) string
	// lock, run first in the migrating transaction, keeps other
	// migrators out until it ends ("" where the transaction itself does).
	lock string
}

// sqlStore is the one Store, over database/sql; the dialect is all that
// differs between SQLite and PostgreSQL.
type sqlStore struct {
	db   *sql.DB
	d    dialect
	name string
}

func openSQLite(path string) (*sqlStore, error) {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	// busy_timeout lets a second process wait for the first's write;
	// _txlock=immediate takes the write lock at BEGIN, so that two
	// writers never deadlock upgrading a read lock; WAL lets readers read
	// while one writes.
	dsn := "file:" + esc + "?_pragma=busy_timeout(60000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sqlStore{db: db, name: path, d: dialect{rebind: func(q string) string { return strings.ReplaceAll(q, "$", "?") }}}, nil
}

func openPostgres(dsn string) (*sqlStore, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(dsn), err)
	}
	// The migration lock: a transaction-scoped advisory lock, released
	// at commit, on a constant key (clockgate's history).
	return &sqlStore{db: db, name: redact(dsn), d: dialect{rebind: func(q string) string { return q }, lock: "SELECT pg_advisory_xact_lock(7316201)"}}, nil
}

// redact drops a password from a URL for messages.
func redact(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 {
		return dsn
	}
	user := dsn[scheme+3 : at]
	if i := strings.Index(user, ":"); i >= 0 {
		return dsn[:scheme+3] + user[:i] + ":…" + dsn[at:]
	}
	return dsn
}

// migrations are the schema's versions, in order; version i+1 is
// migrations[i]. A released version is never edited: a change is a new
// one. The SQL is the same for both databases.
var migrations = []string{
	`CREATE TABLE grids (
		id TEXT PRIMARY KEY,
		date TEXT NOT NULL
	);
	CREATE TABLE grid_values (
		grid_id TEXT NOT NULL REFERENCES grids(id),
		model TEXT NOT NULL,
		engines TEXT NOT NULL,
		metric TEXT NOT NULL,
		point TEXT NOT NULL,
		gpu TEXT NOT NULL,
		value DOUBLE PRECISION NOT NULL,
		established INTEGER NOT NULL,
		PRIMARY KEY (grid_id, model, engines, metric, point, gpu)
	);
	CREATE INDEX grids_by_date ON grids (date, id)`,
	// Version 2: each value's legs (SPEC §12.1.1), leg their position in
	// run order; a grid added before has none.
	`CREATE TABLE grid_legs (
		grid_id TEXT NOT NULL REFERENCES grids(id),
		model TEXT NOT NULL,
		engines TEXT NOT NULL,
		metric TEXT NOT NULL,
		point TEXT NOT NULL,
		gpu TEXT NOT NULL,
		leg INTEGER NOT NULL,
		value DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (grid_id, model, engines, metric, point, gpu, leg)
	)`,
}

// SchemaVersion is the version migrate brings a store to.
var SchemaVersion = len(migrations)

// migrate applies the migrations the store lacks, in one transaction.
func (s *sqlStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	var have sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if int(have.Int64) > len(migrations) {
		return fmt.Errorf("history schema version %d is newer than this clockgate's %d", have.Int64, len(migrations))
	}
	for v := int(have.Int64) + 1; v <= len(migrations); v++ {
		for _, stmt := range strings.Split(migrations[v-1], ";") {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO schema_migrations (version) VALUES ($1)`), v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dateLayout stores a date as text that sorts as the time does.
const dateLayout = "2006-01-02T15:04:05.000000000Z"

func (s *sqlStore) Add(ctx context.Context, g *Grid) (added bool, err error) {
	err = busyRetry(ctx, func() error {
		added, err = s.add(ctx, g)
		return err
	})
	return added, err
}

// busyFor bounds how long a history add waits out another process's
// SQLite write that its busy handler did not wait for.
const busyFor = 60 * time.Second

// busyRetry runs f again, backing off, while SQLite answers SQLITE_BUSY
// without waiting (a connection switching a new database to WAL while
// the other process opens it; busy_timeout covers the ordinary locks),
// for at most busyFor; any other error, or success, returns at once.
func busyRetry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyFor)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := f()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (5, with any
// extended code).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

func (s *sqlStore) add(ctx context.Context, g *Grid) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.name, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO grids (id, date) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`),
		g.ID, g.Date.UTC().Format(dateLayout))
	if err != nil {
		return false, fmt.Errorf("%s: grid %s: %w", s.name, g.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil
	}
	stmt, err := tx.PrepareContext(ctx, s.d.rebind(`INSERT INTO grid_values (grid_id, model, engines, metric, point, gpu, value, established) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`))
	if err != nil {
		return false, err
	}
	defer stmt.Close()
	legStmt, err := tx.PrepareContext(ctx, s.d.rebind(`INSERT INTO grid_legs (grid_id, model, engines, metric, point, gpu, leg, value) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`))
	if err != nil {
		return false, err
	}
	defer legStmt.Close()
	for _, v := range g.Values {
		est := 0
		if v.Established {
			est = 1
		}
		if _, err := stmt.ExecContext(ctx, g.ID, v.Key.Model, v.Key.Engines, v.Key.Metric, v.Key.Point, v.Key.GPU, v.Value, est); err != nil {
			return false, fmt.Errorf("%s: grid %s: %s: %w", s.name, g.ID, v.Key, err)
		}
		for i, l := range v.Legs {
			if _, err := legStmt.ExecContext(ctx, g.ID, v.Key.Model, v.Key.Engines, v.Key.Metric, v.Key.Point, v.Key.GPU, i, l); err != nil {
				return false, fmt.Errorf("%s: grid %s: %s: leg %d: %w", s.name, g.ID, v.Key, i, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("%s: grid %s: %w", s.name, g.ID, err)
	}
	return true, nil
}

func (s *sqlStore) Grids(ctx context.Context) ([]*Grid, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, date FROM grids ORDER BY date, id`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	var grids []*Grid
	byID := map[string]*Grid{}
	for rows.Next() {
		var id, date string
		if err := rows.Scan(&id, &date); err != nil {
			rows.Close()
			return nil, err
		}
		t, err := time.Parse(dateLayout, date)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: grid %s: date %q: %w", s.name, id, date, err)
		}
		g := &Grid{ID: id, Date: t}
		grids = append(grids, g)
		byID[id] = g
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	vrows, err := s.db.QueryContext(ctx, `SELECT grid_id, model, engines, metric, point, gpu, value, established FROM grid_values`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	defer vrows.Close()
	for vrows.Next() {
		var id string
		var v Value
		var est int
		if err := vrows.Scan(&id, &v.Key.Model, &v.Key.Engines, &v.Key.Metric, &v.Key.Point, &v.Key.GPU, &v.Value, &est); err != nil {
			return nil, err
		}
		g := byID[id]
		if g == nil {
			return nil, fmt.Errorf("%s: a value of grid %s, which it does not hold", s.name, id)
		}
		v.Established = est == 1
		g.Values = append(g.Values, v)
	}
	if err := vrows.Err(); err != nil {
		return nil, err
	}
	for _, g := range grids {
		sort.Slice(g.Values, func(i, j int) bool { return g.Values[i].Key.Less(g.Values[j].Key) })
	}
	if err := s.readLegs(ctx, byID); err != nil {
		return nil, err
	}
	return grids, nil
}

func (s *sqlStore) Close() error { return s.db.Close() }

// readLegs attaches every value's legs, in leg order, to the grids of
// byID (their values sorted by key).
func (s *sqlStore) readLegs(ctx context.Context, byID map[string]*Grid) error {
	rows, err := s.db.QueryContext(ctx, `SELECT grid_id, model, engines, metric, point, gpu, leg, value FROM grid_legs ORDER BY grid_id, model, engines, metric, point, gpu, leg`)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var k Key
		var leg int
		var v float64
		if err := rows.Scan(&id, &k.Model, &k.Engines, &k.Metric, &k.Point, &k.GPU, &leg, &v); err != nil {
			return err
		}
		g := byID[id]
		if g == nil {
			return fmt.Errorf("%s: a leg of grid %s, which it does not hold", s.name, id)
		}
		i := sort.Search(len(g.Values), func(i int) bool { return !g.Values[i].Key.Less(k) })
		if i == len(g.Values) || g.Values[i].Key != k {
			return fmt.Errorf("%s: grid %s: a leg of series %s, which the grid does not hold", s.name, id, k)
		}
		if leg != len(g.Values[i].Legs) {
			return fmt.Errorf("%s: grid %s: series %s: leg %d out of order (after %d)", s.name, id, k, leg, len(g.Values[i].Legs))
		}
		g.Values[i].Legs = append(g.Values[i].Legs, v)
	}
	return rows.Err()
}
