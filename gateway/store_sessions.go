package gateway

import (
	"context"
	"errors"
	"io"

	"github.com/ocbench/ocbench/transcript"
)

// openStoreSession streams a session of a transcript.Store as JSONL, with
// its exact length (counted in a first pass, in constant memory).
func openStoreSession(st transcript.Store, id string) (io.ReadCloser, int64, error) {
	ctx := context.Background()
	size, err := transcript.SizeJSONL(ctx, st, id)
	if errors.Is(err, transcript.ErrNoSession) {
		return nil, 0, ErrNoSession
	}
	if err != nil {
		return nil, 0, err
	}
	rc, err := transcript.OpenJSONL(ctx, st, id)
	if errors.Is(err, transcript.ErrNoSession) {
		return nil, 0, ErrNoSession
	}
	if err != nil {
		return nil, 0, err
	}
	return rc, size, nil
}
