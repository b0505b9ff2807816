package history

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// postgresEnv names the PostgreSQL server the tests run against
// (.ci/run starts one); without it they skip, unless
// CLOCKGATE_REQUIRE_POSTGRES is set, when they fail.
const postgresEnv = "CLOCKGATE_TEST_POSTGRES"

var schemaSeq atomic.Int64

// postgresDSN is the server's DSN, or a skip.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		if os.Getenv("CLOCKGATE_REQUIRE_POSTGRES") != "" {
			t.Fatalf("%s is not set, and CLOCKGATE_REQUIRE_POSTGRES is: the PostgreSQL tests must run", postgresEnv)
		}
		t.Skipf("%s not set: no PostgreSQL server to test against", postgresEnv)
	}
	return dsn
}

// freshSchemaDSN is the server's DSN with its own new schema first on
// the search path, so that each test starts from an empty history.
func freshSchemaDSN(t *testing.T) string {
	dsn := postgresDSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("h_%d_%d", time.Now().UnixNano(), schemaSeq.Add(1))
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func freshPostgres(t *testing.T) Store {
	s, err := Open(context.Background(), freshSchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgresIsPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	if !IsPostgres(dsn) {
		t.Fatalf("%s=%q is not a postgres:// URL", postgresEnv, dsn)
	}
	if !strings.Contains(redact("postgres://u:secret@h/db"), "u:…@h") {
		t.Errorf("redact: %s", redact("postgres://u:secret@h/db"))
	}
}
