package sqlite

import (
	"errors"

	sqlite3 "github.com/mattn/go-sqlite3"
)

func constraint(err error) sqlite3.ErrNoExtended {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
		return se.ExtendedCode
	}
	return 0
}

func isUniqueViolation(err error) bool {
	c := constraint(err)
	return c == sqlite3.ErrConstraintPrimaryKey || c == sqlite3.ErrConstraintUnique
}

func isForeignKeyViolation(err error) bool {
	return constraint(err) == sqlite3.ErrConstraintForeignKey
}
