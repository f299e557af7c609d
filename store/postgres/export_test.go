package postgres

import "context"

// SchemaVersion is the number of migrations applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM refdata_schema_migrations").Scan(&n)
	return n, err
}

// Schema is the schema the store's tables live in.
func (s *Store) Schema() string { return s.schema }
