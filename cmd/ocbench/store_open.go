package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ocbench/ocbench/transcript"
)

// postgresBuildHint says how to get the PostgreSQL store into ocbench.
const postgresBuildHint = "this ocbench was built without the PostgreSQL session store; build it with: go build -tags postgres ./cmd/ocbench"

// openNamedStore opens the session store a flag names (transcript.OpenStore).
// A store this binary was built without is a usage error (exit 2) whose
// message says how to build it in; any other failure exits 1. The name is
// not echoed: a database URL may hold a password.
func openNamedStore(cmd, flagName, spec string, stderr io.Writer) (transcript.Store, int) {
	st, err := transcript.OpenStore(context.Background(), spec)
	if err == nil {
		return st, 0
	}
	if msg, ok := notLinked(err); ok {
		fmt.Fprintf(stderr, "ocbench %s: %s %s\n", cmd, flagName, msg)
		return nil, 2
	}
	fmt.Fprintf(stderr, "ocbench %s: %s: %v\n", cmd, flagName, err)
	return nil, 1
}

// notLinked reports a store name whose store is not in this binary, with
// what to do about it.
func notLinked(err error) (string, bool) {
	var nl *transcript.StoreNotLinkedError
	if !errors.As(err, &nl) {
		return "", false
	}
	if nl.Import == "github.com/ocbench/ocbench/transcript/pgstore" {
		return nl.Scheme + "://...: " + postgresBuildHint, true
	}
	return nl.Scheme + "://...: no such session store (a directory, sqlite:PATH or postgres://...)", true
}
