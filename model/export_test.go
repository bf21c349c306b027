package model

// PreparedExecs is how many writes of s ran through a prepared statement (tests of the statement cache).
func PreparedExecs(s *Store) int64 {
	if s.stmts == nil {
		return 0
	}
	return s.stmts.used.Load()
}
