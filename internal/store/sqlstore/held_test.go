package sqlstore

import "testing"

// Every column of an execution row has its expression in a job row that
// holds its attempt: a column added to executions must say where a held
// attempt keeps it (store doc.go, "The finished attempt in the job row").
func TestHeldExprsCoverEveryExecutionColumn(t *testing.T) {
	for _, c := range execColumns {
		if heldExprs[c] == "" {
			t.Errorf("execution column %s has no held attempt's expression", c)
		}
	}
	if len(heldExprs) != len(execColumns) {
		t.Errorf("%d held expressions for %d execution columns", len(heldExprs), len(execColumns))
	}
}
