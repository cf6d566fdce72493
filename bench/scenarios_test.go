package bench

import (
	"testing"
)

// TestScenariosFirstOp runs every scenario's setup and first operation
// (which checks its result), so that a broken scenario fails here rather
// than in a user's run.
func TestScenariosFirstOp(t *testing.T) {
	scs, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		t.Run(sc.Name, func(t *testing.T) {
			op, teardown, err := sc.Setup()
			if err != nil {
				t.Fatalf("setup: %v", err)
			}
			if teardown != nil {
				defer teardown()
			}
			if err := op(); err != nil {
				t.Fatalf("first op: %v", err)
			}
			if err := op(); err != nil {
				t.Fatalf("second op: %v", err)
			}
		})
	}
}
