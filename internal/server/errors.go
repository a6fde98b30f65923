package server

import (
	"errors"

	"github.com/fairwayhq/fairway/internal/store"
)

// isOpError reports a store error that concerns only its own operation
// and leaves the transaction usable.
func isOpError(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrDuplicate) ||
		errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrInvalid)
}
