package wireenc_test

import (
	"errors"
	"os"
	"testing"
	"unicode/utf8"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func errorsAs[T any](err error, target *T) bool { return err != nil && errors.As(err, target) }

func validUTF8(s string) bool { return utf8.ValidString(s) }
