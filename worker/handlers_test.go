package worker

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// The worker tells the server which types it runs without a command, so
// that a job without one is refused at submit when nothing could run it.
func TestCommandFreeTypesAreTheNonCommandHandlers(t *testing.T) {
	noop := HandlerFunc(func(context.Context, Job) (json.RawMessage, error) { return nil, nil })
	got := commandFreeTypes(map[string]Handler{"*": CommandHandler(CommandOptions{}), "resize": noop, "email": noop})
	if want := []string{"email", "resize"}; !slices.Equal(got, want) {
		t.Errorf("commandFreeTypes = %v, want %v", got, want)
	}
	if got := commandFreeTypes(map[string]Handler{"*": CommandHandler(CommandOptions{})}); got == nil || len(got) != 0 {
		t.Errorf("a command-only worker reports %#v, want an empty, non-nil list", got)
	}
}
